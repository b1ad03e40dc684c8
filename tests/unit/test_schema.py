import sqlite3
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path

import pytest

from app.documents import Chunk
from app.index import conversations
from app.index.schema import MIGRATIONS, SCHEMA_VERSION, SchemaTooNew
from app.index.store import (
    WAL_SIZE_LIMIT,
    HistoryRecord,
    NewDocument,
    Queue,
    QueuedFile,
    Spending,
    Store,
    text_version,
)


def test_a_new_library_is_created_at_the_current_schema_in_wal_mode(tmp_path: Path) -> None:
    store = Store(tmp_path / "library.sqlite3")
    try:
        assert store.db.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
        assert store.db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        # The WAL shrinks back after a checkpoint instead of keeping its largest size.
        assert store.db.execute("PRAGMA journal_size_limit").fetchone()[0] == WAL_SIZE_LIMIT
        assert {"documents", "chunks", "chunks_fts", "vectors", "history", "meta"} <= set(
            store.db.table_names()
        )
    finally:
        store.close()
    Store(tmp_path / "library.sqlite3").close()  # reopening migrates nothing and keeps data


def test_a_library_from_a_newer_docent_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "library.sqlite3"
    with sqlite3.connect(path) as connection:
        connection.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")
    connection.close()
    with pytest.raises(SchemaTooNew, match="written by a newer Docent"):
        Store(path)


def test_a_later_migration_step_upgrades_an_existing_library_in_place(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "library.sqlite3"
    store = Store(path)
    store.set_meta("kept", "yes")
    store.close()
    from app.index import schema

    step = ("ALTER TABLE documents ADD COLUMN language TEXT",)
    monkeypatch.setattr(schema, "MIGRATIONS", (*schema.MIGRATIONS, step))
    monkeypatch.setattr(schema, "SCHEMA_VERSION", SCHEMA_VERSION + 1)
    store = Store(path)
    try:
        assert store.db.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION + 1
        assert "language" in store.db["documents"].columns_dict
        assert store.get_meta("kept") == "yes"
    finally:
        store.close()


def test_ids_of_removed_documents_and_chunks_are_never_reused(tmp_path: Path) -> None:
    store = Store(tmp_path / "library.sqlite3")
    try:
        first = store.write_document(_document("/a.pdf"), [_chunk(0), _chunk(1)])
        store.remove_document(first.document_id)
        second = store.write_document(_document("/b.pdf"), [_chunk(0)])
        (chunk_id,) = [c.id for c in store.page_chunks(second.document_id, 1)]
    finally:
        store.close()
    assert second.document_id > first.document_id
    assert chunk_id == 3  # after the removed document's chunks 1 and 2


def test_ids_of_deleted_conversations_and_answers_are_never_reused(tmp_path: Path) -> None:
    """A stale id (an MCP client's, a script's) must not land in a newer conversation."""
    store = Store(tmp_path / "library.sqlite3")
    try:
        first = conversations.create(store, "first")
        answer = store.add_history(replace(_history(), conversation_id=first))
        conversations.delete(store, first)  # the newest conversation and its answer
        second = conversations.create(store, "second")
        again = store.add_history(replace(_history(), conversation_id=second))
    finally:
        store.close()
    assert second > first
    assert again > answer


def test_conversations_kept_by_the_previous_release_survive_its_migration(tmp_path: Path) -> None:
    path = tmp_path / "library.sqlite3"
    connection = written_by_release(path, schema=7)
    connection.execute("INSERT INTO conversations VALUES (4, 'kept?', 'then', 'then')")
    values = ", ".join(["?"] * 23)
    row = [9, "then", "kept?", "[]", "yes", "finished", None, "local", "m", "why", "[]"]
    row += [0.1, 0.2, 0.3, 10, 5, 4.0, 0.0, 1.0, None, 4, "kept?", '{"user": "u"}']
    connection.execute(f"INSERT INTO history VALUES ({values})", row)
    connection.close()
    store = Store(path)
    try:
        (kept,) = conversations.listing(store)
        found = conversations.kept(store, 4)
        assert found is not None
        (entry,) = found.entries
    finally:
        store.close()
    assert (kept.id, kept.title, kept.turns) == (4, "kept?", 1)
    assert (entry.id, entry.answer, entry.turn) == (9, "yes", {"user": "u"})


def test_the_autoincrement_migration_keeps_documents_chunks_text_and_vectors(
    tmp_path: Path,
) -> None:
    path = tmp_path / "library.sqlite3"
    connection = written_by_release(path, schema=2)
    connection.execute(
        "INSERT INTO documents VALUES (7, '/r.pdf', 'R', 'pdf', 'x', 1, 1, 1, 1, NULL, 'now')"
    )
    connection.execute("INSERT INTO chunks VALUES (9, 7, 0, 1, '1', NULL, 'seven years')")
    connection.execute("INSERT INTO chunks_fts (rowid, body) VALUES (9, 'seven years')")
    connection.execute("INSERT INTO vectors VALUES (9, ?)", [b"\0" * 16])
    connection.close()

    store = Store(path)
    try:
        assert store.db.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
        assert store.db.execute("PRAGMA foreign_keys").fetchone()[0] == 1
        assert [d.id for d in store.documents()] == [7]
        assert [chunk for chunk, _ in store.keyword_search(["seven"], 5)] == [9]
        assert store.db.execute("SELECT chunk_id FROM vectors").fetchall() == [(9,)]
        added = store.write_document(_document("/s.pdf"), [_chunk(0)])
        store.remove_document(7)  # the cascade works on the rebuilt tables
        assert store.db.execute("SELECT count(*) FROM vectors").fetchone()[0] == 0
    finally:
        store.close()
    assert added.document_id == 8


def test_history_kept_by_an_older_release_survives_and_a_cost_may_be_unknown(
    tmp_path: Path,
) -> None:
    path = tmp_path / "library.sqlite3"
    connection = written_by_release(path, schema=3)  # before costs could be unknown
    connection.execute(
        """INSERT INTO history VALUES (4, '2026-12-01T10:00:00.000+00:00', 'q', '[]', 'a',
           'finished', NULL, 'cloud', 'gw/m', 'why', '[]', 0.1, 0.5, 1.0, 10, 5, 4.0, 0.25,
           NULL, NULL)"""
    )
    connection.close()

    store = Store(path)
    try:
        store.add_history(replace(_history(), cost_usd=None))
        spending = store.spending_since(datetime(2026, 12, 1, tzinfo=UTC))
        (old, new) = store.history()[::-1]
    finally:
        store.close()
    assert (old.id, old.cost_usd) == (4, 0.25)
    assert (new.id, new.cost_usd) == (5, None)
    assert spending == Spending(known_usd=0.25, unpriced=1)


def written_by_release(path: Path, schema: int) -> sqlite3.Connection:
    """A library as the release whose schema version was `schema` left it."""
    connection = sqlite3.connect(path, isolation_level=None)
    for step in MIGRATIONS[:schema]:
        for statement in step:
            connection.execute(statement)
    connection.execute(f"PRAGMA user_version = {schema}")
    return connection


def _history() -> HistoryRecord:
    return HistoryRecord(
        question="q", scope=(), answer="a", status="finished", error=None, route="cloud",
        model="gw/m", reason="why", citations=(), retrieval_s=0.1, ttft_s=0.5, total_s=1.0,
        prompt_tokens=10, completion_tokens=5, tokens_per_s=4.0, cost_usd=0.0, grounded=None,
    )  # fmt: skip


def _document(path: str) -> NewDocument:
    return NewDocument(path, path, "pdf", "x", 1, 1, 2, None)


def _chunk(ordinal: int) -> Chunk:
    return Chunk(ordinal, 1, "1", None, f"passage {ordinal}")


def test_a_stored_summary_is_of_the_text_ocr_had_read_and_a_kept_one_may_stay(
    tmp_path: Path,
) -> None:
    """An OCR pass that reads another page adds text without changing the file: the summary
    made before it is stale. And a summary made for an MCP client never replaces the kept one."""
    store = Store(tmp_path / "library.sqlite3")
    try:
        scanned = replace(_document("/scan.pdf"), ocr_pages=(2,))
        document_id = store.write_document(scanned, [_chunk(0)]).document_id
        before = store.document(document_id)
        assert before is not None
        assert store.save_summary(document_id, "", text_version(before), "kept")
        assert not store.save_summary(document_id, "", text_version(before), "x", replace=False)
        assert store.summary(document_id, "", text_version(before)) == "kept"
        store.write_ocr_page(document_id, 2, [_chunk(0)], [])
        after = store.document(document_id)
        assert after is not None
        assert store.summary(document_id, "", text_version(after)) is None  # made again
        assert not store.save_summary(document_id, "", text_version(before), "stale")
    finally:
        store.close()


def test_the_stored_queue_counts_files_done_until_every_one_is_and_then_empties(
    tmp_path: Path,
) -> None:
    store = Store(tmp_path / "library.sqlite3")
    try:
        store.queue_files([QueuedFile("/f/a.pdf", "/f", False), QueuedFile("/f/b.md", "/f", False)])
        store.queue_files([QueuedFile("/g.txt", None, True)])
        store.finish_queued(["/f/a.pdf"])
        assert store.queue() == Queue(
            1, [QueuedFile("/f/b.md", "/f", False), QueuedFile("/g.txt", None, True)]
        )
        store.queue_files([QueuedFile("/f/a.pdf", "/f", True)])  # added again: due again
        assert [file.path for file in store.queue().left] == ["/f/a.pdf", "/f/b.md", "/g.txt"]
        assert store.queue().left[0].force
        store.finish_queued(["/f/a.pdf", "/f/b.md", "/g.txt"])
        assert store.queue() == Queue(0, [])
        assert store.db.execute("SELECT count(*) FROM queued_files").fetchone()[0] == 0
    finally:
        store.close()
