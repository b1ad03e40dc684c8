"""Integration tests: the real bundled models, a real SQLite file, real documents."""

from __future__ import annotations

import asyncio
import contextlib
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
