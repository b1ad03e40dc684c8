import sqlite3
from pathlib import Path

import pytest

from app.index.schema import SCHEMA_VERSION, SchemaTooNew
from app.index.store import Store


def test_a_new_library_is_created_at_the_current_schema_in_wal_mode(tmp_path: Path) -> None:
    store = Store(tmp_path / "library.sqlite3")
    try:
        assert store.db.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
        assert store.db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
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
