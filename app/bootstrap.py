"""The composition root: builds every service from the paths and settings, and closes them.

No module-level singletons: the CLI, the GUI, the MCP server and the tests each build a `Docent`.
"""

from __future__ import annotations

import asyncio
import importlib
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING

from app.answering import Answerer
from app.answering.cache import AnswerCache
from app.catalog import Catalog, ModelError, Progress, ensure_model
from app.cloud.health import Health
from app.cloud.pricing import PriceTable
from app.documents.reader import DocumentReader, ReadLimits
from app.documents.render import RenderedPage
from app.embeddings import E5Embedder, Embedder
from app.index import Library
from app.intake import Intake
from app.llm.engine import EngineError
from app.llm.local import LocalEngine, LocalModelConfig
from app.paths import Paths
from app.routing import AutoPolicy, CloudModel
from app.secrets import SecretStore
from app.settings import CloudSettings, LocalModelSettings, Settings

if TYPE_CHECKING:
    from app.cloud.routes import CloudRoutes


class Docent:
    def __init__(
        self,
        paths: Paths,
        settings: Settings,
        catalog: Catalog | None = None,
        *,
        embeddings: bool = True,
    ) -> None:
        """`embeddings=False` opens the library keyword-only (no embedder to load)."""
        self.paths = paths
        self.settings = settings
        self.catalog = catalog or Catalog.load()
        self.library = Library(paths.database, self.embedder_factory() if embeddings else None)
        limits = ReadLimits.from_settings(settings.library)
        self.reader = DocumentReader(limits)
        self.intake = Intake(self.library, self.reader)
        self._engine: LocalEngine | None = None
        self._answerer: Answerer | None = None
        self.cloud: CloudRoutes | None = None
        self._health_listener: Callable[[Health], None] | None = None
        self._cloud_wanted = False  # start_cloud() was called: reconnect after changes
        self._cache = AnswerCache(settings.routing.cache_ttl_s)
        self._spent_this_month: float | None = None
        self._model_notice: str | None = None
        # Its own reader process, so a preview never waits behind a long document being indexed.
        self._previewer = DocumentReader(limits, name="preview")

    @classmethod
    def from_environment(cls, *, embeddings: bool = True) -> Docent:
        paths = Paths.from_environment()
        paths.create()
        return cls(paths, Settings.load(paths.settings_file), embeddings=embeddings)

    def embedder_factory(self) -> Callable[[], Embedder]:
        model = self.catalog.get(self.settings.embedding_model)
        models_dir = self.paths.models_dir
        return lambda: E5Embedder(model.name, ensure_model(model, models_dir))

    def chat_model(self, progress: Progress | None = None) -> LocalModelConfig:
        return chat_model_config(self.settings.local, self.catalog, self.paths.models_dir, progress)

    @property
    def chat_model_loaded(self) -> bool:
        return self._engine is not None

    async def open(self) -> None:
        """Open the index (and the embedder). Cheap enough for every CLI command."""
        await self.library.open()

    async def secret_store(self, plaintext_consent: bool | None = None) -> SecretStore:
        """The keychain (or the consented key file); detecting it talks to D-Bus: off the loop.

        `plaintext_consent` overrides the saved choice (settings being edited, not yet saved).
        """
        if plaintext_consent is None:
            plaintext_consent = self.settings.secrets.plaintext_file_consent
        return await asyncio.to_thread(
            SecretStore.open, self.paths.config_dir, plaintext_consent=plaintext_consent
        )

    async def start_cloud(self, listener: Callable[[Health], None] | None = None) -> None:
        """Open a session to every configured cloud route (seconds for a stdio server: at
        start-up, not per question). `listener` hears every health change."""
        self._health_listener = listener or self._health_listener
        self._cloud_wanted = True
        if self.cloud is not None or not (
            self.settings.cloud.providers or self.settings.cloud.servers
        ):
            return
        self.cloud = await self.open_cloud_routes(self.settings.cloud, self._health_listener)

    async def open_cloud_routes(
        self, cloud: CloudSettings, listener: Callable[[Health], None] | None = None
    ) -> CloudRoutes:
        """Sessions to the routes `cloud` lists, with this Docent's keys and prices."""
        prices = await asyncio.to_thread(PriceTable.load, self.paths.config_dir)
        # Imported here, off the GUI thread: the MCP SDK is a large share of start-up, and a
        # user without cloud routes never needs it.
        routes = await asyncio.to_thread(importlib.import_module, "app.cloud.routes")
        opened: CloudRoutes = await routes.CloudRoutes.open(
            cloud, await self.secret_store(), prices, listener
        )
        return opened

    def cloud_models(self) -> list[CloudModel]:
        return self.cloud.models() if self.cloud else []

    def budget_left_usd(self) -> float:
        return self.settings.routing.monthly_budget_usd - (self._spent_this_month or 0.0)

    def _spent(self, cost_usd: float) -> None:
        self._spent_this_month = (self._spent_this_month or 0.0) + cost_usd

    async def answerer(self, progress: Progress | None = None) -> Answerer:
        """The answering pipeline; loads the chat model on first use (the bundled default if the
        chosen one cannot load: `take_model_notice()` then says why)."""
        if self._engine is None:
            try:
                self._engine = await self._start_engine(progress)
            except (ModelError, EngineError) as error:
                if not self._fall_back(error):
                    raise
                self._engine = await self._start_engine(progress)
        if self._spent_this_month is None:
            month = datetime.now(UTC).replace(day=1, hour=0, minute=0, second=0, microsecond=0)
            self._spent_this_month = await self.library.cost_since(month)
        if self._answerer is None:
            policy = AutoPolicy(
                self.settings.routing, self._engine.model, self.cloud_models, self.budget_left_usd
            )
            cloud = self.cloud
            self._answerer = Answerer(
                self.library,
                self._engine,
                policy,
                self.settings,
                cloud_engine=cloud.engine if cloud else None,
                cache=self._cache,
                on_cost=self._spent,
            )
        return self._answerer

    async def _start_engine(self, progress: Progress | None = None) -> LocalEngine:
        # Joining the bundled model's parts on first use takes seconds: off the loop.
        engine = LocalEngine(await asyncio.to_thread(self.chat_model, progress))
        try:
            await engine.start()
        except BaseException:
            await engine.close()
            raise
        return engine

    def _fall_back(self, error: Exception) -> bool:
        """Use the bundled chat model for this session (the saved choice is kept, so a model on
        a drive that was not mounted is back next time). False if that is the one failing."""
        choice, default = self.settings.local.chat_model, self.catalog.default("chat").name
        if choice == default:
            return False
        self._model_notice = (
            f"The local model {choice} cannot be used: {error}. Docent answers with the bundled "
            f"{default} instead; choose another model in Models…"
        )
        local = self.settings.local.model_copy(update={"chat_model": default})
        self.settings = self.settings.model_copy(update={"local": local})
        self._answerer = None
        return True

    def take_model_notice(self) -> str | None:
        """Why the chosen chat model was replaced by the bundled one, once."""
        notice, self._model_notice = self._model_notice, None
        return notice

    async def check_chat_model(self) -> str | None:
        """At start-up: is the chosen chat model there and intact (a stat, or a hash if its
        file changed)? If not, fall back to the bundled one now; returns what to tell the user."""
        try:
            await asyncio.to_thread(self.chat_model)
        except ModelError as error:
            if not self._fall_back(error):
                return str(error)
        return self.take_model_notice()

    async def use_chat_model(self, choice: str) -> None:
        """Switch the local model now, without a restart: a catalog name or a GGUF path. It is
        checked, loaded (the old one is closed first: two may not fit in memory) and saved; if
        it cannot load, the previous choice stays."""
        if choice == self.settings.local.chat_model and self._engine is not None:
            return
        local = self.settings.local.model_copy(update={"chat_model": choice})
        await asyncio.to_thread(chat_model_config, local, self.catalog, self.paths.models_dir)
        previous = self.settings
        await self.apply_settings(self.settings.model_copy(update={"local": local}))
        try:
            self._engine = await self._start_engine()
        except (ModelError, EngineError):
            await self.apply_settings(previous)
            raise
        await asyncio.to_thread(self.settings.save, self.paths.settings_file)

    async def render_page(
        self, path: Path, page: int, zoom: float = 1.5, passage: str = ""
    ) -> RenderedPage:
        return await self._previewer.render(path, page, zoom, passage)

    async def apply_settings(self, settings: Settings) -> None:
        """Use new settings from now on: a changed local model reloads at the next question,
        changed cloud routes reconnect now, and earlier answers are no longer served cached."""
        reload = settings.local != self.settings.local
        reconnect = (settings.cloud, settings.secrets) != (
            self.settings.cloud,
            self.settings.secrets,
        )
        self.settings = settings
        self.reader.limits = ReadLimits.from_settings(settings.library)
        self._answerer = None  # rebuilt at the next question, around the new settings
        self._cache = AnswerCache(settings.routing.cache_ttl_s)
        if reload and self._engine is not None:
            await self._engine.close()
            self._engine = None
        if reconnect:
            await self.restart_cloud()

    async def restart_cloud(self) -> None:
        """Reconnect with the current settings and keys (after a key was stored, too)."""
        if self.cloud is not None:
            await self.cloud.close()
            self.cloud = None
            self._answerer = None
        if self._cloud_wanted:
            await self.start_cloud()

    async def close(self) -> None:
        if self.cloud is not None:
            await self.cloud.close()
        if self._engine is not None:
            await self._engine.close()
        await self.intake.close()
        await self.reader.close()
        await self._previewer.close()
        await self.library.close()


def chat_model_config(
    local: LocalModelSettings,
    catalog: Catalog,
    models_dir: Path,
    progress: Progress | None = None,
) -> LocalModelConfig:
    """The configured chat model: a catalog name, or the path of the user's own GGUF file."""
    choice = local.chat_model
    if choice.lower().endswith(".gguf") or Path(choice).expanduser().is_absolute():
        path = Path(choice).expanduser()
        if not path.is_file():
            raise ModelError(f"the chat model file {path} does not exist")
        with path.open("rb") as handle:
            if handle.read(4) != b"GGUF":
                raise ModelError(f"{path} is not a GGUF model file")
        name = path.stem
    else:
        model = catalog.get(choice)
        if model.role != "chat":
            raise ModelError(f"{model.name} is an {model.role} model, not a chat model")
        path, name = ensure_model(model, models_dir, progress), model.name
    return LocalModelConfig(
        name=name,
        path=path,
        n_ctx=local.n_ctx,
        n_threads=local.n_threads,
        n_gpu_layers=local.n_gpu_layers,
    )
