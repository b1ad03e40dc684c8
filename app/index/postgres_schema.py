"""A shared library's PostgreSQL schema and its migrations (the `docent_schema` row counts them).

Only the shared half of a library lives here (app/index/document_store.py): documents, chunks
with their keyword terms and vectors, OCR'd pages, summaries. Several desktops open one database
at once: each step runs under a transaction-scoped advisory lock and re-reads the version there,
so a step another desktop made meanwhile is skipped, never made twice.

Who reads what is the database's job (step 2): the role that made the schema (the admin's; a
superuser too) reads and writes everything. Every other role that may connect reads and indexes
only the documents under the folders `docent_folder_grants` gives it, or a role it belongs to
(`grantee` 'public': every role); row-level security on `documents` holds that, and the tables
that hang off a document (chunks, vectors, OCR'd pages, summaries) show only a readable
document's rows. The admin fills the grants:

    INSERT INTO docent_folder_grants (grantee, folder) VALUES ('sales', '/srv/shared/sales/');

A folder ends with its separator, so that '/srv/a/' never gives '/srv/ab/'. Everything a search
counts (BM25's statistics included) is counted over the rows the role may read: nothing of a
hidden document shows, not even in a score.

Every window sees another desktop's writes within milliseconds (step 2): a trigger on each row
of `documents` and `vectors` NOTIFYs `CHANGES_CHANNEL` with the table's name and no more, and
each library LISTENs (app/index/postgres.py, `ChangeListener`).
"""

from __future__ import annotations

from typing import Any

import psycopg

from app.errors import DocentError

# Any constant: the advisory lock every migration step takes (and vector index creation).
SCHEMA_LOCK = 0x646F63656E74  # "docent"
CHANGES_CHANNEL = "docent_library"

# Each entry migrates from version i to i + 1. Append; never edit a released step.
MIGRATIONS: tuple[tuple[str, ...], ...] = (
    (
        "CREATE EXTENSION IF NOT EXISTS vector",
        # `tokens`: the document's chunks' keyword terms counted, for BM25's average length.
        """CREATE TABLE documents (
            id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
            path text NOT NULL UNIQUE,
            title text NOT NULL,
            format text NOT NULL,
            sha256 text NOT NULL,
            size bigint NOT NULL,
            mtime_ns bigint NOT NULL,
            pages integer NOT NULL,
            chunks integer NOT NULL,
            tokens bigint NOT NULL DEFAULT 0,
            note text,
            indexed_at text NOT NULL
        )""",
        # `terms`: the chunk's keyword terms exactly as the SQLite index tokenizes them (FTS5
        # unicode61 over CJK bigrams), with their positions; `length`: how many there are.
        """CREATE TABLE chunks (
            id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
            document_id bigint NOT NULL REFERENCES documents(id) ON DELETE CASCADE,
            ordinal integer NOT NULL,
            page integer NOT NULL,
            page_label text NOT NULL,
            heading text,
            text text NOT NULL,
            terms tsvector NOT NULL,
            length integer NOT NULL
        )""",
        "CREATE INDEX chunks_by_document ON chunks (document_id, ordinal)",
        "CREATE INDEX chunks_terms ON chunks USING gin (terms)",
        # The dimension is the embedder's: the HNSW index is made on the first vectors saved,
        # over `embedding::vector(n)` (PostgresStore.ensure_vector_index).
        """CREATE TABLE vectors (
            chunk_id bigint PRIMARY KEY REFERENCES chunks(id) ON DELETE CASCADE,
            document_id bigint NOT NULL,
            embedding vector NOT NULL
        )""",
        "CREATE INDEX vectors_by_document ON vectors (document_id)",
        """CREATE TABLE ocr_pages (
            document_id bigint NOT NULL REFERENCES documents(id) ON DELETE CASCADE,
            page integer NOT NULL,
            words text,
            PRIMARY KEY (document_id, page)
        )""",
        """CREATE TABLE summaries (
            document_id bigint NOT NULL REFERENCES documents(id) ON DELETE CASCADE,
            part text NOT NULL,
            sha256 text NOT NULL,
            summary text NOT NULL,
            made_at text NOT NULL,
            PRIMARY KEY (document_id, part)
        )""",
        "CREATE TABLE meta (key text PRIMARY KEY, value text NOT NULL)",
    ),
    (
        # Per row, so that a statement that changed nothing (a desk's open clearing vectors
        # there are none of) says nothing; PostgreSQL folds a transaction's repeats into one
        # notification, so a document of 500 chunks is still one.
        f"""CREATE FUNCTION docent_changed() RETURNS trigger LANGUAGE plpgsql AS $$
            BEGIN PERFORM pg_notify('{CHANGES_CHANNEL}', TG_TABLE_NAME); RETURN NULL; END $$""",
        *(
            f"""CREATE TRIGGER {table}_changed AFTER INSERT OR UPDATE OR DELETE ON {table}
                FOR EACH ROW EXECUTE FUNCTION docent_changed();
                CREATE TRIGGER {table}_truncated AFTER TRUNCATE ON {table}
                FOR EACH STATEMENT EXECUTE FUNCTION docent_changed()"""
            for table in ("documents", "vectors")
        ),
        """CREATE TABLE docent_folder_grants (
            grantee text NOT NULL,
            folder text NOT NULL CHECK (right(folder, 1) IN ('/', '\\')),
            PRIMARY KEY (grantee, folder)
        )""",
        # A role sees the grants that apply to it alone (pg_has_role by oid: a grantee that
        # names no role is no error, it gives nothing).
        "ALTER TABLE docent_folder_grants ENABLE ROW LEVEL SECURITY",
        """CREATE POLICY applies ON docent_folder_grants FOR SELECT USING (
            grantee = 'public' OR EXISTS (SELECT 1 FROM pg_roles r WHERE r.rolname = grantee
                                          AND pg_has_role(current_user, r.oid, 'MEMBER')))""",
        "ALTER TABLE documents ENABLE ROW LEVEL SECURITY",
        # USING and (for writes) WITH CHECK alike: a role indexes only where it may read.
        """CREATE POLICY granted ON documents USING (
            EXISTS (SELECT 1 FROM docent_folder_grants g WHERE starts_with(path, g.folder)))""",
        # The documents in these policies' subqueries are filtered by `granted` in turn.
        *(
            f"""ALTER TABLE {table} ENABLE ROW LEVEL SECURITY;
                CREATE POLICY of_granted ON {table} USING (
                    EXISTS (SELECT 1 FROM documents d WHERE d.id = {table}.document_id))"""
            for table in ("chunks", "vectors", "ocr_pages", "summaries")
        ),
        # Table privileges open to every role that may connect (the database's CONNECT is the
        # admin's gate); the rows each may see are the policies' to say.
        """GRANT SELECT, INSERT, UPDATE, DELETE
           ON documents, chunks, vectors, ocr_pages, summaries, meta TO PUBLIC""",
        "GRANT SELECT ON docent_folder_grants, docent_schema TO PUBLIC",
        "GRANT USAGE ON ALL SEQUENCES IN SCHEMA public TO PUBLIC",
    ),
)
SCHEMA_VERSION = len(MIGRATIONS)


class SharedSchemaTooNew(DocentError):
    """The shared library was written by a newer Docent."""


def migrate(connection: psycopg.Connection[tuple[Any, ...]]) -> int:
    """Bring the database to SCHEMA_VERSION, one transaction per step; the version found."""
    if _version(connection) == SCHEMA_VERSION:
        return SCHEMA_VERSION  # most opens: no lock, and nothing a role without CREATE may not do
    found: int | None = None  # as read under the lock
    while True:
        with connection.transaction():
            connection.execute("SELECT pg_advisory_xact_lock(%s)", [SCHEMA_LOCK])
            if _version(connection) is None:
                connection.execute("CREATE TABLE docent_schema (version integer)")
            row = connection.execute("SELECT version FROM docent_schema").fetchone()
            version = int(row[0]) if row else 0
            found = version if found is None else found
            if version > SCHEMA_VERSION:
                raise SharedSchemaTooNew(
                    f"the shared library was written by a newer Docent "
                    f"(schema {version} > {SCHEMA_VERSION})"
                )
            if version == SCHEMA_VERSION:
                return found
            for statement in MIGRATIONS[version]:
                connection.execute(statement)
            if row is None:
                connection.execute("INSERT INTO docent_schema (version) VALUES (1)")
            else:
                connection.execute("UPDATE docent_schema SET version = %s", [version + 1])


def _version(connection: psycopg.Connection[tuple[Any, ...]]) -> int | None:
    """The schema's version; None before there is one."""
    # Read from the catalog's rows, not to_regclass: its cache may not have heard yet of the
    # table another desktop made while this one waited on the lock (an advisory lock does not
    # refresh it), and CREATE TABLE then fails with "already exists".
    made = connection.execute(
        "SELECT EXISTS (SELECT FROM pg_tables WHERE schemaname = current_schema() "
        "AND tablename = 'docent_schema')"
    ).fetchone()
    if made == (False,):
        return None
    row = connection.execute("SELECT version FROM docent_schema").fetchone()
    return int(row[0]) if row else 0
