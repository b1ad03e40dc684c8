"""One library, several writers: a scope always holds, and changes made by another process are
seen by the next search."""

from __future__ import annotations

import asyncio
from pathlib import Path

from tests.conftest import docent
from tests.documents import write_pdf
from tests.integration.conftest import index_all, opened, run

ALPHA = (
    ("Boilers", "The boiler room is inspected every spring by the site engineer."),
    ("Ladders", "Ladders are checked for cracks before each use."),
)
ALPHA_SHORTER = (("Boilers", "The boiler room is inspected every autumn by an outside firm."),)
BETA = (("Payroll", "Salaries are paid on the last working day of each month."),)


def test_a_scoped_question_never_gets_another_documents_passage(tmp_path: Path) -> None:
    """A document re-indexed shorter left its old vectors in memory, and the next document
    reused their chunk ids: a question limited to the first one read the second."""
    alpha = write_pdf(tmp_path / "alpha.pdf", ALPHA)
    beta = tmp_path / "beta.pdf"

    async def scenario() -> tuple[list[str], list[str], int]:
        async with opened() as docent:
            await index_all(docent, [alpha])
            await docent.library.embed_pending()
            write_pdf(alpha, ALPHA_SHORTER)  # changed: one page now
            await index_all(docent, [alpha])
            write_pdf(beta, BETA)
            await index_all(docent, [beta])
            await docent.library.embed_pending()
            ids = {d.name: d.id for d in await docent.library.documents()}
            scoped = await docent.library.search("When are salaries paid?", 4, [ids["alpha.pdf"]])
            anywhere = await docent.library.search("When are salaries paid?", 4)
            (beta_chunk,) = await docent.library.read(
                lambda store: store.page_chunks(ids["beta.pdf"], 1)
            )
            return (
                [p.chunk.document_name for p in scoped],
                [p.chunk.document_name for p in anywhere],
                beta_chunk.id,
            )

    scoped, anywhere, beta_chunk = run(scenario())
    assert scoped == ["alpha.pdf"]
    assert anywhere[0] == "beta.pdf"
    assert beta_chunk > 3  # alpha's two first chunks and its re-indexed one keep their ids


def test_a_search_sees_what_another_process_indexed_meanwhile(tmp_path: Path) -> None:
    beta = write_pdf(tmp_path / "beta.pdf", BETA)
    alpha = write_pdf(tmp_path / "alpha.pdf", ALPHA)

    async def scenario() -> list[str]:
        async with opened() as library_open:
            await index_all(library_open, [alpha])
            await library_open.library.embed_pending()
            await library_open.library.search("boiler", 2)  # its vectors are loaded
            # `docent index` in another process adds and embeds a document meanwhile.
            finished = await asyncio.to_thread(docent, "index", str(beta))
            assert finished.returncode == 0, finished.stderr
            # No word of the question is in the text: only its vector can find it.
            found = await library_open.library.search("Wann bekommen Angestellte ihr Geld?", 1)
            return [p.chunk.document_name for p in found if p.vector_rank == 1]

    assert run(scenario()) == ["beta.pdf"]
