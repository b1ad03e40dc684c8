"""A shared library on a real PostgreSQL with pgvector (started by the session's fixture): the
same documents, searches and answers as the embedded SQLite library, the person's own data kept
in the local file."""

from __future__ import annotations

import asyncio
import json
import sqlite3
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import psycopg
import pytest

from app.bootstrap import Docent
from app.documents import Chunk
from app.embeddings import EmbeddingOff
from app.index import NewDocument
from app.index.library import Library
from app.index.shared import SharedLibraryError, SharedLocation, library_key, personal_name
from app.index.terms import keyword_terms
from app.paths import Paths
from app.samples import sample_path
from app.secrets import SecretStore
from app.settings import Settings
from tests.conftest import docent
from tests.integration.conftest import index_all, run

SAMPLES = [
    sample_path(name)
    for name in ("northwind-retention-policy.pdf", "china-tea-primer.pdf", "welcome-to-docent.md")
]
QUESTIONS = (
    "How long are invoices kept?",
    "What protects personal data?",
    "乌龙茶可以冲泡几次？",  # Oolong: how many infusions (the tea primer, in Chinese)
    "绿茶的水温是多少度？",
    "Where does Docent keep my data?",
)
SHARED_TABLES = {
    "documents",
    "chunks",
    "vectors",
    "ocr_pages",
    "summaries",
    "meta",
    "docent_folder_grants",
}


def _tables(url: str) -> set[str]:
    with psycopg.connect(url) as connection:
        rows = connection.execute(
            "SELECT tablename FROM pg_tables WHERE schemaname = 'public'"
        ).fetchall()
    return {row[0] for row in rows}


def test_cli_indexes_asks_and_keeps_the_person_s_data_local(
    shared_library: str, isolated_paths: Paths
) -> None:
    indexed = docent("--library", shared_library, "index", *map(str, SAMPLES))
    assert indexed.returncode == 0, indexed.stderr
    assert "3 indexed, 0 unchanged, 0 failed" in indexed.stderr
    again = docent("--library", shared_library, "index", *map(str, SAMPLES))
    assert "0 indexed, 3 unchanged, 0 failed" in again.stderr  # read from the database

    listed = json.loads(docent("--library", shared_library, "docs", "--json").stdout)
    assert sorted(d["name"] for d in listed) == sorted(p.name for p in SAMPLES)
    assert all(d["embedded"] == d["chunks"] > 0 for d in listed)
    # Nothing went into the person's embedded library.
    assert json.loads(docent("docs", "--json").stdout) == []

    question = "How long are invoices kept?"
    scope = "northwind-retention-policy.pdf"  # a scoped search, keyword and vector, on the server
    asked = docent("--library", shared_library, "ask", "--json", "--doc", scope, question)
    assert asked.returncode == 0, asked.stderr
    result = json.loads(asked.stdout)
    assert result["route"]["route"] == "local"
    assert "seven" in result["answer"].lower() or "7" in result["answer"]
    assert result["citations"][0]["where"].startswith("northwind-retention-policy.pdf")

    # The answer is in this person's own file beside the shared library, not in the database.
    personal = isolated_paths.data_dir / personal_name(shared_library)
    with sqlite3.connect(personal) as local:
        questions = [row[0] for row in local.execute("SELECT question FROM history")]
        assert questions == ["How long are invoices kept?"]
        assert local.execute("SELECT count(*) FROM documents").fetchone()[0] == 0
    assert _tables(shared_library) == SHARED_TABLES | {"docent_schema"}
    history = json.loads(docent("--library", shared_library, "history", "--json").stdout)
    assert [entry["question"] for entry in history] == ["How long are invoices kept?"]
    assert json.loads(docent("history", "--json").stdout) == []  # the embedded library's own


def test_keyword_search_ranks_as_the_sqlite_index_does(
    shared_library: str, isolated_paths: Paths
) -> None:
    async def ranked(url: str | None) -> dict[str, list[tuple[str, int, float]]]:
        library = _docent(isolated_paths, url, embeddings=False)
        await library.open()
        try:
            await index_all(library, SAMPLES)
            found = {}
            (tea,) = await library.library.match_documents(["china-tea-primer.pdf"])
            for question, scope in [(q, None) for q in QUESTIONS] + [
                (q, [tea.id]) for q in QUESTIONS
            ]:
                terms = keyword_terms(question)
                hits = await library.library.read_documents(
                    lambda store, terms=terms, scope=scope: store.keyword_search(terms, 50, scope)
                )
                chunks = await library.library.read_documents(
                    lambda store, hits=hits: store.chunks([chunk for chunk, _ in hits])
                )
                found[f"{question} {scope is not None}"] = [
                    (chunks[c].document_name, chunks[c].ordinal, score) for c, score in hits
                ]
            passages = await library.library.search("乌龙茶可以冲泡几次？", 3)
            assert "五到七次" in passages[0].chunk.text
            scoped = await library.library.search("How long are invoices kept?", 5, [tea.id])
            assert {passage.chunk.document_name for passage in scoped} <= {tea.name}
            return found
        finally:
            await library.close()

    embedded = run(ranked(None))
    shared = run(ranked(shared_library))
    for question in embedded:
        assert embedded[question] or question.endswith("True"), question
        assert [hit[:2] for hit in shared[question]] == [hit[:2] for hit in embedded[question]]
        assert np.allclose(
            [hit[2] for hit in shared[question]], [hit[2] for hit in embedded[question]]
        ), question  # FTS5's bm25(), computed in SQL on the same terms


def test_vector_search_runs_on_the_server_as_the_exact_scan_does(
    shared_library: str, isolated_paths: Paths
) -> None:
    question = "Which beverage is only partly fermented?"  # no Chinese word of the primer

    async def nearest(url: str | None) -> tuple[list[tuple[str, int]], list[float], int]:
        library = _docent(isolated_paths, url)
        await library.open()
        try:
            async for _ in library.intake.index(SAMPLES, embed=True):
                pass
            vector = await library.library.embed_query(question)
            assert vector is not None
            hits = await library.library._vector_search(vector, None)
            chunks = await library.library.read_documents(
                lambda store: store.chunks([chunk for chunk, _ in hits])
            )
            held_in_memory = len(library.library.vectors)
            return (
                [(chunks[c].document_name, chunks[c].ordinal) for c, _ in hits],
                [similarity for _, similarity in hits],
                held_in_memory,
            )
        finally:
            await library.close()

    embedded, embedded_scores, in_memory = run(nearest(None))
    shared, shared_scores, shared_in_memory = run(nearest(shared_library))
    assert in_memory == len(embedded) > 0
    assert shared_in_memory == 0
    assert shared == embedded
    assert np.allclose(shared_scores, embedded_scores, atol=1e-5)
    with psycopg.connect(shared_library) as connection:
        indexes = connection.execute(
            "SELECT indexdef FROM pg_indexes WHERE tablename = 'vectors'"
        ).fetchall()
    assert any("hnsw" in row[0] and "vector_cosine_ops" in row[0] for row in indexes)


def test_two_writers_never_duplicate_a_document(shared_library: str, isolated_paths: Paths) -> None:
    document = NewDocument("/shared/folder/a.txt", "A", "txt", "ab" * 32, 10, 1, 1, None)
    chunks = list(_chunks("one passage", "another passage"))

    async def write_twice() -> list[int]:
        libraries = [
            Library(
                isolated_paths.data_dir / f"desk-{n}.sqlite3", None, SharedLocation(shared_library)
            )
            for n in (1, 2)
        ]
        await asyncio.gather(*(library.open() for library in libraries))
        try:
            written = await asyncio.gather(
                *(library.write_document(document, chunks) for library in libraries)
            )
            assert {w.replaced for w in written} == {None}  # one wrote, the other skipped
            (only,) = await libraries[0].documents()
            assert only.chunks == 2
            assert only.id == written[0].document_id
            return [w.document_id for w in written]
        finally:
            await asyncio.gather(*(library.close() for library in libraries))

    first, second = run(write_twice())
    assert first == second


def test_errors_never_show_the_password(isolated_paths: Paths) -> None:
    url = "postgresql://docent:s3cret-pw@127.0.0.1:1/library"
    library = _docent(isolated_paths, url, embeddings=False)
    with pytest.raises(SharedLibraryError) as raised:
        run(library.open())
    run(library.close())
    assert "s3cret-pw" not in str(raised.value)
    assert "postgresql://docent:***@127.0.0.1:1/library" in str(raised.value)

    listed = docent("--library", url, "docs")
    assert listed.returncode == 2
    assert "s3cret-pw" not in listed.stderr + listed.stdout
    assert "docent:***@127.0.0.1:1" in listed.stderr


def _docent(paths: Paths, url: str | None, *, embeddings: bool = True) -> Docent:
    return Docent(paths, Settings(), embeddings=embeddings, shared_library=url)


def _chunks(*texts: str) -> list[Chunk]:
    return [Chunk(i, 1, "1", None, text) for i, text in enumerate(texts)]


@pytest.mark.usefixtures("keychain")
def test_the_password_comes_from_the_keychain(shared_library: str, isolated_paths: Paths) -> None:
    """A role that must give its password (SCRAM) over the server's socket; its URL holds no
    password, the keychain does (under library_key, the URL without one)."""
    role, password = "desk_user", "kept-in-the-keychain"
    database = shared_library.split("?")[0].rsplit("/", 1)[1]
    with psycopg.connect(shared_library, autocommit=True) as admin:
        admin.execute(f"DROP ROLE IF EXISTS {role}")  # type: ignore[arg-type]
        admin.execute(f"CREATE ROLE {role} LOGIN PASSWORD '{password}'")  # type: ignore[arg-type]
        admin.execute(f'ALTER DATABASE "{database}" OWNER TO {role}')  # type: ignore[arg-type]
        admin.execute("CREATE EXTENSION vector")  # what the server's administrator does once
        hba = Path(admin.execute("SHOW hba_file").fetchone()[0])  # type: ignore[index]
        rules = hba.read_text()
        hba.write_text(f"local all {role} scram-sha-256\n{rules}")
        admin.execute("SELECT pg_reload_conf()")
    url = shared_library.replace("postgresql://postgres:@", f"postgresql://{role}@", 1)

    refused = _docent(isolated_paths, url, embeddings=False)
    with pytest.raises(SharedLibraryError, match="password"):
        run(refused.open())
    run(refused.close())

    SecretStore.open(isolated_paths.config_dir, plaintext_consent=False).set(
        library_key(url), password
    )
    opened = _docent(isolated_paths, url, embeddings=False)
    run(opened.open())
    try:
        assert run(opened.library.documents()) == []
    finally:
        run(opened.close())
    with psycopg.connect(shared_library) as admin:
        owner = admin.execute("SELECT tableowner FROM pg_tables WHERE tablename = 'chunks'")
        assert owner.fetchone() == (role,)  # the schema was made by the desk's role


class _OtherModel:
    """A desk set up with another embedding model (a policy test: its vectors are random)."""

    name = "another-embedding-model"
    query_cores = 1
    dimension = 3

    def passages(self, texts: Sequence[str]) -> np.ndarray:
        vectors = np.random.default_rng(0).standard_normal((len(texts), 3)).astype(np.float32)
        return vectors / np.linalg.norm(vectors, axis=1, keepdims=True)

    def query(self, text: str) -> np.ndarray:
        return self.passages([text])[0]

    def close(self) -> None:
        pass


def _vectors(url: str) -> tuple[int, str]:
    with psycopg.connect(url) as connection:
        (count,) = connection.execute("SELECT count(*) FROM vectors").fetchone()  # type: ignore[misc]
        (model,) = connection.execute(
            "SELECT value FROM meta WHERE key = 'embedding_model'"
        ).fetchone()  # type: ignore[misc]
    return count, model


def test_a_desk_with_another_embedding_model_never_wipes_the_shared_vectors(
    shared_library: str, isolated_paths: Paths
) -> None:
    """Resetting the vectors on a model change, right for one person's library, had each desk
    of a team with two models delete the other's vectors at every start. Moving the library to
    another model is asked for (`take_over_embeddings`: `docent library re-embed URL`)."""
    other_desk = isolated_paths.data_dir / "other-desk.sqlite3"

    async def scenario() -> tuple[int, str]:
        first = _docent(isolated_paths, shared_library)
        await first.open()
        try:
            await index_all(first, SAMPLES[:1])
            await first.library.embed_pending()
        finally:
            await first.close()
        stored, model = _vectors(shared_library)
        assert stored > 0
        other = Library(other_desk, _OtherModel, SharedLocation(shared_library))
        await other.open()
        try:
            passages = await other.search(QUESTIONS[0], 3)
            assert passages[0].chunk.document_name == "northwind-retention-policy.pdf"  # keywords
            await other.write_documents(
                lambda store: store.write_document(
                    NewDocument("/desk/notes.md", "notes.md", "md", "0", 0, 0, 1, None),
                    _chunks("The boiler room is inspected every spring."),
                )
            )
            with pytest.raises(EmbeddingOff) as refused:
                await other.embed_pending()
            assert str(refused.value) == (
                f"the shared library's passages were embedded by {model}, and this computer's "
                "embedder is another-embedding-model: searches here use keywords only"
            )
            assert _vectors(shared_library) == (stored, model)  # the first desk's, kept

            assert await other.take_over_embeddings() == _OtherModel.name
            assert _vectors(shared_library) == (0, _OtherModel.name)
            assert await other.embed_pending() == stored + 1
            assert _vectors(shared_library) == (stored + 1, _OtherModel.name)
        finally:
            await other.close()
        return stored, model

    stored, model = run(scenario())
    # The first desk, set up with the bundled model, now keeps the other model's vectors...
    again = docent("--library", shared_library, "index", str(SAMPLES[0]))
    assert again.returncode == 0, again.stderr
    assert _vectors(shared_library) == (stored + 1, _OtherModel.name)
    # ...until it takes the library back, re-embedding every passage.
    taken = docent("library", "re-embed", shared_library)
    assert taken.returncode == 0, taken.stderr
    assert f"{stored + 1} passages embedded with {model}" in taken.stderr
    assert _vectors(shared_library) == (stored + 1, model)
