"""Three processes on one library at once, as a user has them: the app indexing and answering,
`docent index` adding a folder, and `docent serve-mcp` answering another client. None may see
"database is locked", lose a history row or a document."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from contextlib import AsyncExitStack
from pathlib import Path

from app.index.schema import SCHEMA_VERSION
from app.index.store import Store
from app.llm.engine import CancelToken
from app.paths import Paths
from app.processes import free_loopback_port, serving
from tests.conftest import REPO
from tests.documents import write_pdf
from tests.integration.conftest import index_all, opened, run
from tests.integration.test_mcp_server import READY, SERVE, http_client, text_of, token_shown
from tests.unit.test_schema import written_by_release

QUESTIONS = ("How long are customer invoices kept?", "How are personal data protected?")


def folder_of_reports(folder: Path, count: int) -> list[Path]:
    folder.mkdir()
    return [write_pdf(folder / f"report-{number}.pdf") for number in range(count)]


def test_the_app_the_cli_and_the_mcp_server_index_and_answer_at_once(
    isolated_paths: Paths, tmp_path: Path
) -> None:
    settings = {
        "local": {"max_tokens": 24},
        "retrieval": {"top_k": 2},
        "secrets": {"plaintext_file_consent": True},  # the server's token: no keychain here
    }
    isolated_paths.settings_file.write_text(json.dumps(settings))
    seed = write_pdf(tmp_path / "seed.pdf")
    by_cli = folder_of_reports(tmp_path / "by-cli", 12)
    by_app = folder_of_reports(tmp_path / "by-app", 12)

    async def app_indexes_and_answers() -> list[str]:
        async with opened() as docent:
            indexing = asyncio.ensure_future(index_all(docent, [by_app[0].parent]))
            answerer = await docent.desk.answerer()
            statuses = []
            for question in QUESTIONS:
                async for event in answerer.answer(question, None, CancelToken()):
                    statuses.append(type(event).__name__)
            await indexing
            return [status for status in statuses if status in ("Finished", "Failed")]

    async def client_asks(url: str) -> list[bool]:
        async with AsyncExitStack() as stack:
            client = await http_client(stack, url, token_shown(log))
            failed = []
            for question in QUESTIONS:
                result = await client.call_tool(
                    "ask", {"question": question}, read_timeout_seconds=300
                )
                failed.append(result.is_error and text_of(result))
            return failed

    async def together(url: str) -> tuple[list[str], list[bool], subprocess.CompletedProcess[str]]:
        cli = asyncio.to_thread(
            subprocess.run,
            [sys.executable, "-m", "app.cli", "index", str(by_cli[0].parent)],
            cwd=REPO,
            capture_output=True,
            text=True,
            timeout=600,
        )
        return await asyncio.gather(app_indexes_and_answers(), client_asks(url), cli)

    async def seeded() -> None:
        async with opened() as docent:
            await index_all(docent, [seed])
            await docent.library.embed_pending()

    run(seeded())
    port = free_loopback_port()
    log = tmp_path / "serve.log"
    command = [*SERVE, "--transport", "streamable-http", "--port", str(port)]
    with serving(command, READY, log, timeout_s=120):
        answered, client_failures, cli = run(together(f"http://127.0.0.1:{port}/mcp"))

    assert cli.returncode == 0, cli.stderr
    assert "locked" not in cli.stdout + cli.stderr
    assert "locked" not in log.read_text()
    assert answered == ["Finished", "Finished"]
    assert client_failures == [False, False]

    async def library() -> tuple[set[str], list[str]]:
        async with opened(embeddings=False) as docent:
            documents = {d.path for d in await docent.library.documents()}
            history = await docent.library.read(lambda store: store.history(10))
            return documents, [row.question for row in history]

    documents, questions = run(library())
    assert documents == {str(path) for path in [seed, *by_cli, *by_app]}
    assert sorted(questions) == sorted(QUESTIONS * 2)


OPEN_LIBRARY = """
import sys
from pathlib import Path
from app.index.store import Store
store = Store(Path(sys.argv[1]))
print(store.db.execute("PRAGMA user_version").fetchone()[0])
store.close()
"""


def test_processes_opening_a_new_or_an_older_library_at_once_all_open_it(tmp_path: Path) -> None:
    """The window and `docent serve-mcp` start together, or three `docent` commands run on a new
    library: every one opens it, and it opens again afterwards (a migration step made twice on
    a schema already changed failed them, and once left a library that never opened again)."""
    rounds = 8
    for number in range(2 * rounds):
        path = tmp_path / f"library-{number}.sqlite3"
        if number % 2:  # an older release's library: every step after its schema 3 is run
            written_by_release(path, 3).close()
        started = [
            subprocess.Popen(
                [sys.executable, "-c", OPEN_LIBRARY, str(path)],
                cwd=REPO,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
            )
            for _ in range(3)
        ]
        # Every one is waited for before any is judged: none is left behind unreaped.
        ended = [(process, *process.communicate(timeout=120)) for process in started]
        for process, out, err in ended:
            assert process.returncode == 0, err
            assert int(out) == SCHEMA_VERSION
        store = Store(path)  # and it opens again
        assert {"conversations", "history", "summaries"} <= set(store.db.table_names())
        store.close()
