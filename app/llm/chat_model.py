"""The local chat model a Docent answers with: the configured choice (a catalog name or the path
of the user's own GGUF file), loaded on first use, switched without a restart, and replaced by the
bundled model for the session when the choice cannot load; or, when the settings name one, a
model server the user runs (server_model.py), with the model on this computer as its fallback."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING

from app.catalog import Catalog, ModelError, Progress, ensure_model
from app.llm.engine import EngineError
from app.llm.local import EngineState, LocalEngine, LocalModelConfig
from app.llm.safety import SafeMode, SafetyMemory
from app.llm.server_names import server_model_name
from app.settings import LocalModelSettings

if TYPE_CHECKING:  # httpx loads with a model server, not with the window
    from app.llm.server_model import ServerEngine


class LocalChatModel:
    def __init__(
        self,
        settings: LocalModelSettings,
        catalog: Catalog,
        models_dir: Path,
        safety: SafetyMemory | None = None,
        server_key: Callable[[], Awaitable[str | None]] | None = None,
    ) -> None:
        """`server_key` reads the model server's key from the keychain (None: no key)."""
        self.settings = settings  # in effect: the bundled model's after a fall-back
        self._catalog = catalog
        self._models_dir = models_dir
        self.safety = safety or SafetyMemory(None)
        self._engine: LocalEngine | None = None
        self._server_key = server_key
        self._server: ServerEngine | None = None
        self._notice: str | None = None
        # Two first questions at once (the window and its MCP server) load the model once.
        self._loading = asyncio.Lock()

    @property
    def loaded(self) -> bool:
        return self._engine is not None

    @property
    def state(self) -> EngineState | None:
        """How the loaded model runs here (backend, threads, safe settings); None until loaded."""
        return self._engine.state if self._engine is not None else None

    def config(self, progress: Progress | None = None) -> LocalModelConfig:
        return chat_model_config(self.settings, self._catalog, self._models_dir, progress)

    @property
    def shown(self) -> str:
        """The local route's model as the badge names it: "qwen-mini on 192.168.1.5" on a
        server, else the model on this computer."""
        server = self.settings.server
        return server_model_name(server) if server.enabled else shown_name(self.settings.chat_model)

    @property
    def server(self) -> ServerEngine | None:
        """The model server's engine once a question reached for it (None: none set, or not
        asked since the settings changed)."""
        return self._server

    async def engine(self, progress: Progress | None = None) -> LocalEngine | ServerEngine:
        """The local route's engine: the model server's when one is set, else the model on
        this computer (`on_this_computer`)."""
        if not self.settings.server.enabled:
            return await self.on_this_computer(progress)
        if self._server is None:
            key = None if self._server_key is None else await self._server_key()
            if self._server is None:  # not made meanwhile by a question asked at the same time
                from app.llm.server_model import ServerEngine

                self._server = ServerEngine(self.settings.server, key)
        return self._server

    async def on_this_computer(self, progress: Progress | None = None) -> LocalEngine:
        """The loaded engine; loads it on first use (the bundled model if the chosen one cannot
        load: `take_notice()` then says why). With a model server, what answers when the
        server cannot."""
        async with self._loading:
            if self._engine is None:
                try:
                    self._engine = await self._start(progress)
                except (ModelError, EngineError) as error:
                    if not self._fall_back(error):
                        raise
                    self._engine = await self._start(progress)
            return self._engine

    async def check(self) -> str | None:
        """At start-up: is the chosen model there and intact (a stat, or a hash if its file
        changed)? If not, fall back to the bundled one now; returns what to tell the user."""
        try:
            await asyncio.to_thread(self.config)
        except ModelError as error:
            if not self._fall_back(error):
                return str(error)
        return self.take_notice()

    def safe_mode(self) -> SafeMode | None:
        """The safe settings a crash chose here for the current model, loaded or not."""
        return self.safety.get(shown_name(self.settings.chat_model))

    def take_notice(self) -> str | None:
        """Why the chosen model was replaced by the bundled one, or why it now runs with safe
        settings: each once."""
        notice, self._notice = self._notice, None
        if notice is None and self._engine is not None:
            notice = self._engine.take_notice()
        return notice

    async def normal_settings(self) -> None:
        """Forget the safe settings a crash chose for the current model: its next start tries
        the normal ones again."""
        async with self._loading:
            self.safety.set(shown_name(self.settings.chat_model), None)
            await self.unload()

    async def use(self, choice: str) -> LocalModelSettings:
        """Load `choice` now (the old engine is closed first: two may not fit in memory) and
        return the settings that name it. If it cannot load, the previous choice stays (and
        loads again at the next question)."""
        async with self._loading:
            if choice == self.settings.chat_model and self._engine is not None:
                return self.settings
            local = self.settings.model_copy(update={"chat_model": choice})
            config = await asyncio.to_thread(
                chat_model_config, local, self._catalog, self._models_dir
            )
            await self.unload()
            self._engine = await _started(LocalEngine(config, self.safety))
            self.settings = local
            return local

    async def apply(self, settings: LocalModelSettings) -> None:
        """Changed settings reload the model at the next question; the model server is reached
        anew (its key may have changed with the settings)."""
        async with self._loading:
            await self._close_server()
            on_this_computer = settings.model_copy(update={"server": self.settings.server})
            if on_this_computer != self.settings:
                await self.unload()
            self.settings = settings

    async def unload(self) -> None:
        await self._close_server()
        if self._engine is not None:
            engine, self._engine = self._engine, None
            await engine.close()

    async def _close_server(self) -> None:
        if self._server is not None:
            server, self._server = self._server, None
            await server.close()

    async def _start(self, progress: Progress | None) -> LocalEngine:
        # Joining the bundled model's parts on first use takes seconds: off the loop.
        config = await asyncio.to_thread(self.config, progress)
        return await _started(LocalEngine(config, self.safety))

    def _fall_back(self, error: Exception) -> bool:
        """Use the bundled model for this session (the saved choice is kept, so a model on a
        drive that was not mounted is back next time). False if that is the one failing."""
        choice, default = self.settings.chat_model, self._catalog.default("chat").name
        if choice == default:
            return False
        self._notice = (
            f"The local model {choice} cannot be used: {error}. Docent answers with the bundled "
            f"{default} instead; choose another model in Models…"
        )
        self.settings = self.settings.model_copy(update={"chat_model": default})
        return True


async def _started(engine: LocalEngine) -> LocalEngine:
    try:
        await engine.start()
    except BaseException:
        await engine.close()
        raise
    return engine


def chat_model_config(
    local: LocalModelSettings,
    catalog: Catalog,
    models_dir: Path,
    progress: Progress | None = None,
) -> LocalModelConfig:
    """The configured chat model: a catalog name, or the path of the user's own GGUF file."""
    choice = local.chat_model
    if _is_file(choice):
        path = Path(choice).expanduser()
        if not path.is_file():
            raise ModelError(f"the chat model file {path} does not exist")
        with path.open("rb") as handle:
            if handle.read(4) != b"GGUF":
                raise ModelError(f"{path} is not a GGUF model file")
        name = shown_name(choice)
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


def shown_name(choice: str) -> str:
    """The chat model as the badge names it: a catalog name, or a GGUF file's stem."""
    return Path(choice).expanduser().stem if _is_file(choice) else choice


def _is_file(choice: str) -> bool:
    return choice.lower().endswith(".gguf") or Path(choice).expanduser().is_absolute()
