"""Hybrid retrieval on the real multilingual embedder."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import pytest

from app.index import EmbeddingProgress
from app.index.library import EMBED_BATCH
from app.index.vectors import VectorIndex
from tests.documents import write_long_pdf, write_pdf
from tests.integration.conftest import index_all, opened, run

FLEET = (
    ("Vehicles", "The delivery vans are serviced every twelve months at the north depot."),
    ("Drivers", "Drivers rest for forty-five minutes after four and a half hours on the road."),
)


def test_chinese_question_finds_the_chinese_passage_by_meaning(tmp_path: Path) -> None:
    report = write_pdf(tmp_path / "report.pdf")

    async def scenario() -> tuple[list, list]:
        async with opened() as docent:
            await index_all(docent, [report])
            await docent.library.embed_pending()
            # No word of this question occurs in the text: only the embedding can match it.
            semantic = await docent.library.search("人事记录要留存几年？", 2)
            keyword = await docent.library.search("员工档案保存多久", 2)
            return semantic, keyword

    semantic, keyword = run(scenario())
    assert semantic[0].chunk.page == 4
    assert semantic[0].similarity is not None
    assert semantic[0].keyword_rank is None
    assert keyword[0].chunk.page == 4
    assert keyword[0].keyword_rank == 1
    assert keyword[0].vector_rank == 1
    assert keyword[0].score > keyword[1].score


def test_an_english_paraphrase_is_found_and_scope_filters_documents(tmp_path: Path) -> None:
    report = write_pdf(tmp_path / "report.pdf")
    fleet = write_pdf(tmp_path / "fleet.pdf", FLEET)

    async def scenario() -> tuple[list, list, int]:
        async with opened() as docent:
            await index_all(docent, [report, fleet])
            await docent.library.embed_pending()
            documents = {d.name: d.id for d in await docent.library.documents()}
            anywhere = await docent.library.search("How often do the trucks get maintenance?", 3)
            scoped = await docent.library.search(
                "How often do the trucks get maintenance?", 3, [documents["report.pdf"]]
            )
            return anywhere, scoped, documents["report.pdf"]

    anywhere, scoped, report_id = run(scenario())
    assert anywhere[0].chunk.document_name == "fleet.pdf"
    assert "serviced every twelve months" in anywhere[0].chunk.text
    assert scoped
    assert {p.chunk.document_id for p in scoped} == {report_id}


CHANGELOG = (
    (
        "2.31.0",
        "Security: the Proxy-Authorization header is no longer leaked to destination servers "
        "when following a redirect through a proxy. Requests works with urllib3 1.26 as before.",
    ),
    ("2.30.0", "Added support for urllib3 2.0. Users who wish to stay on urllib3 1.x can pin it."),
    (
        "2.29.0",
        "Requests now supports urllib3 1.26 on Python 3.7 and later. The urllib3 support "
        "for Python 3 was improved, and support for older urllib3 releases was kept.",
    ),
    (
        "2.28.0",
        "Dropped support for Python 2.7 and 3.6. Requests now requires urllib3 1.21.1 or "
        "later; support for urllib3 releases before 1.21.1 was removed.",
    ),
    (
        "2.27.0",
        "Added support for Python 3.10. Requests supports urllib3 1.26 and adds support "
        "for the new urllib3 retry options.",
    ),
)


def test_the_reranker_puts_first_the_entry_neither_search_ranked_first(tmp_path: Path) -> None:
    history = tmp_path / "HISTORY.md"
    entries = "\n".join(f"## {version}\n\n{text}\n" for version, text in CHANGELOG)
    history.write_text(f"# Release history\n\n{entries}", encoding="utf-8")

    async def scenario() -> list:
        async with opened() as docent:
            await index_all(docent, [history])
            await docent.library.embed_pending()
            return await docent.library.search("Which release added support for urllib3 2.0?", 3)

    best = run(scenario())[0]
    assert best.chunk.heading == "2.30.0"
    # Keyword search and the embedding each preferred an entry repeating "support" and "urllib3".
    assert best.keyword_rank != 1
    assert best.vector_rank != 1


def test_embedding_resumes_after_an_interruption(tmp_path: Path) -> None:
    ledger = write_long_pdf(tmp_path / "ledger.pdf", pages=8)
    seen: list[EmbeddingProgress] = []

    async def interrupted() -> int:
        async with opened() as docent:
            await index_all(docent, [ledger])
            total = await docent.library.pending_embeddings()

            def stop_after_first_batch(progress: EmbeddingProgress) -> None:
                seen.append(progress)
                if progress.done:
                    raise KeyboardInterrupt  # as if the user quit mid-way

            with pytest.raises(KeyboardInterrupt):
                await docent.library.embed_pending(stop_after_first_batch)
            return total

    async def resumed() -> tuple[int, int, int, int]:
        async with opened() as docent:
            left = await docent.library.pending_embeddings()
            done = await docent.library.embed_pending()
            (document,) = await docent.library.documents()
            return left, done, await docent.library.pending_embeddings(), document.embedded

    total = run(interrupted())
    left, done, remaining, embedded = run(resumed())
    assert total > EMBED_BATCH
    assert [(p.done, p.total) for p in seen] == [(0, total), (EMBED_BATCH, total)]
    assert left == total - EMBED_BATCH
    assert (done, remaining, embedded) == (left, 0, total)


def test_the_vector_index_grows_and_shrinks_off_the_event_loops_thread(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """In the window the loop is the GUI thread: growing the index copies every vector (25k
    chunks of a 1,000-document folder: ~60 ms, a visible stall), as removing a document does."""
    threads: dict[str, set[int]] = {"add": set(), "remove_document": set()}
    for name in threads:
        original = getattr(VectorIndex, name)

        def recorded(self: VectorIndex, *args: Any, _name: str = name, _f: Any = original) -> Any:
            threads[_name].add(threading.get_ident())
            return _f(self, *args)

        monkeypatch.setattr(VectorIndex, name, recorded)
    ledger = write_long_pdf(tmp_path / "ledger.pdf", pages=3)

    async def scenario() -> tuple[int, bool]:
        async with opened() as docent:
            await index_all(docent, [ledger])
            await docent.library.embed_pending()
            (document,) = await docent.library.documents()
            removed = await docent.library.remove(document.id)
            return threading.get_ident(), removed

    loop_thread, removed = run(scenario())
    assert removed
    assert threads["add"]
    assert threads["remove_document"]
    assert loop_thread not in threads["add"] | threads["remove_document"]
