"""Integration tests: the real bundled models, a real SQLite file, real documents."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Coroutine, Sequence
from pathlib import Path
from typing import Any, TypeVar

from app.bootstrap import Docent
from app.ingest import IngestEvent

T = TypeVar("T")


def run(coroutine: Coroutine[Any, Any, T]) -> T:
    return asyncio.run(coroutine)


async def index_all(docent: Docent, paths: Sequence[Path]) -> list[IngestEvent]:
    return [event async for event in docent.ingestor.index(paths)]


@contextlib.asynccontextmanager
async def opened(embeddings: bool = True) -> AsyncIterator[Docent]:
    docent = Docent.from_environment(embeddings=embeddings)
    await docent.open()
    try:
        yield docent
    finally:
        await docent.close()
