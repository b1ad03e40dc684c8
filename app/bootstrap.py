"""The composition root: builds every service from the paths and settings, and closes them.

No module-level singletons: the CLI, the GUI, the MCP server and the tests each build a `Docent`.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path

from app.answering import Answerer
from app.catalog import Catalog, ModelError, Progress, ensure_model
from app.documents.render import RenderedPage, render_page
from app.embeddings import E5Embedder, Embedder
from app.index import Library
from app.ingest import Ingestor
from app.llm.local import LocalEngine, LocalModelConfig
from app.paths import Paths
from app.routing import LocalOnlyPolicy
from app.secrets import SecretStore
from app.settings import LocalModelSettings, Settings
from app.workers import SerialWorker


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
        self.library = Library(paths.database, self._embedder_factory() if embeddings else None)
        self.ingestor = Ingestor(self.library)
        self._engine: LocalEngine | None = None
        self._answerer: Answerer | None = None
        self._renderer = SerialWorker("render")  # PyMuPDF is not thread-safe: one thread

    @classmethod
    def from_environment(cls, *, embeddings: bool = True) -> Docent:
        paths = Paths.from_environment()
        paths.create()
        return cls(paths, Settings.load(paths.settings_file), embeddings=embeddings)

    def _embedder_factory(self) -> Callable[[], Embedder]:
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

    async def secret_store(self) -> SecretStore:
        """The keychain (or the consented key file); detecting it talks to D-Bus: off the loop."""
        return await asyncio.to_thread(
            SecretStore.open,
            self.paths.config_dir,
            plaintext_consent=self.settings.secrets.plaintext_file_consent,
        )

    async def answerer(self, progress: Progress | None = None) -> Answerer:
        """The answering pipeline; loads the chat model on first use."""
        if self._answerer is None:
            # Joining the bundled model's parts on first use takes seconds: off the loop.
            engine = LocalEngine(await asyncio.to_thread(self.chat_model, progress))
            await engine.start()
            self._engine = engine
            self._answerer = Answerer(
                self.library, {"local": engine}, LocalOnlyPolicy(engine.model), self.settings
            )
        return self._answerer

    async def render_page(
        self, path: Path, page: int, zoom: float = 1.5, passage: str = ""
    ) -> RenderedPage:
        return await self._renderer.run(render_page, path, page, zoom, passage)

    async def apply_settings(self, settings: Settings) -> None:
        """Use new settings from now on; a changed local model reloads at the next question."""
        reload = settings.local != self.settings.local
        self.settings = settings
        if reload:
            if self._engine is not None:
                await self._engine.close()
            self._engine = None
            self._answerer = None
        elif self._answerer is not None:
            self._answerer.settings = settings

    async def close(self) -> None:
        if self._engine is not None:
            await self._engine.close()
        self._renderer.shutdown()
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
