"""Settings → Library → "Use a shared library on PostgreSQL", in the real dialog and window, on a
real PostgreSQL with pgvector: the password goes to the keychain (never a file), "Test
connection" says what is there, the window reopens on the library chosen, and a library that
cannot be opened leaves the window on this computer's, saying so."""

from __future__ import annotations

import asyncio
import json
import os
import re
import socket
import subprocess
import sys
from pathlib import Path

import pytest
import qasync

from app.bootstrap import EMBEDDED_LIBRARY, Docent
from app.index.shared import library_key, without_password
from app.paths import Paths
from app.samples import sample_path
from tests.conftest import REPO, files_containing
from tests.gui.waiting import until
from tests.integration.conftest import postgres_server, shared_library
from ui.main import open_docent, run_windows
from ui.settings.settings_dialog import SettingsDialog
from ui.window.library_problem import OpeningNotice
from ui.window.main_window import MainWindow

__all__ = ["postgres_server", "shared_library"]  # the fixtures, used here by name

PASSWORD = "library-password-0123456789"
UNREACHABLE = "postgresql://docent@127.0.0.1:1/library"  # nothing listens on port 1


def opened(docent: Docent, loop: qasync.QEventLoop) -> SettingsDialog:
    dialog = SettingsDialog(docent)
    loop.run_until_complete(dialog.loading)
    return dialog


def connection_said(dialog: SettingsDialog, loop: qasync.QEventLoop) -> str:
    dialog.shared_library.test_button.click()
    assert dialog.shared_library.testing is not None
    loop.run_until_complete(dialog.shared_library.testing)
    return dialog.shared_library.status.text()


@pytest.mark.usefixtures("keychain")
def test_a_shared_library_is_tested_and_chosen_with_its_password_in_the_keychain(
    docent: Docent, loop: qasync.QEventLoop, shared_library: str, tmp_path: Path
) -> None:
    dialog = opened(docent, loop)
    box = dialog.shared_library
    assert not box.isChecked()  # the library on this computer until the user says otherwise
    dialog.reveal(box)
    assert dialog.page_list.currentItem().text() == "Library"
    box.setChecked(True)
    box.url.setText(shared_library)
    box.password.setText(PASSWORD)
    said = connection_said(dialog, loop)
    assert said.startswith("Connected to PostgreSQL "), said
    assert ". pgvector 0." in said
    assert "is on the server but not yet in this database" in said
    # Once a desk has opened it (the test's server lets a role add pgvector): its documents.
    other_desk = Docent.from_environment(embeddings=False, library=shared_library)
    loop.run_until_complete(other_desk.open())
    loop.run_until_complete(other_desk.close())
    said = connection_said(dialog, loop)
    assert re.fullmatch(
        r"Connected to PostgreSQL [\d.]+ with pgvector 0\.[\d.]+: 0 documents you may read\.", said
    ), said
    assert loop.run_until_complete(dialog.submit()) is True

    saved = json.loads(docent.paths.settings_file.read_text())["library"]
    assert saved["shared_url"] == shared_library
    store = loop.run_until_complete(docent.secret_store())
    assert store.get(library_key(shared_library)) == PASSWORD
    assert files_containing(tmp_path, PASSWORD) == []

    again = opened(docent, loop)
    assert again.shared_library.isChecked()
    assert again.shared_library.password.text() == ""  # never shown back in full
    assert again.shared_library.password.placeholderText() == "Kept in the keychain: …6789"
    again.deleteLater()
    dialog.deleteLater()


def test_a_password_in_the_address_is_refused_and_an_unreachable_server_said_in_words(
    docent: Docent, loop: qasync.QEventLoop, tmp_path: Path
) -> None:
    dialog = opened(docent, loop)
    box = dialog.shared_library
    box.setChecked(True)
    box.url.setText("postgresql://docent:hunter2-secret@127.0.0.1:1/library")
    said = connection_said(dialog, loop)
    assert said.startswith("Fix this first: ")
    assert "Password field" in said
    assert "hunter2" not in said
    assert loop.run_until_complete(dialog.submit()) is False
    assert "keep the password out of the URL" in dialog.errors["library.shared_url"].text()
    assert files_containing(tmp_path, "hunter2-secret") == []

    box.url.setText(UNREACHABLE)
    said = connection_said(dialog, loop)
    assert said.startswith("Could not connect: "), said
    assert "127.0.0.1" in said
    assert "port 1" in said
    dialog.deleteLater()


def _first_run_done(paths: Paths) -> None:
    """No first-run screen or speed check: these windows are about the library."""
    (paths.config_dir / "window.json").write_text(json.dumps({"first_run_done": True}))


def test_choosing_a_shared_library_reopens_the_window_on_it_and_back(
    loop: qasync.QEventLoop, shared_library: str, isolated_paths: Paths, tmp_path: Path
) -> None:
    _first_run_done(isolated_paths)
    another_desk = os.environ | {"DOCENT_HOME": str(tmp_path / "another-desk")}
    subprocess.run(
        [sys.executable, "-m", "ui.launcher", "--library", shared_library, "index",
         "--no-embed", str(sample_path("china-tea-primer.pdf"))],
        cwd=REPO, env=another_desk, check=True, capture_output=True, timeout=300,
    )  # fmt: skip
    closed = asyncio.Event()
    started: asyncio.Queue[MainWindow] = asyncio.Queue()

    async def next_window() -> MainWindow:
        return await asyncio.wait_for(started.get(), 120)

    async def scenario() -> None:
        docent, problem = await open_docent()
        assert problem is None
        assert docent.library_location == EMBEDDED_LIBRARY
        running = asyncio.ensure_future(run_windows(docent, problem, closed, started.put_nowait))
        try:
            here = await next_window()
            assert here.library_state.text() == "Library: 0 documents"
            dialog = here.open_library_settings()
            await dialog.loading
            dialog.shared_library.setChecked(True)
            dialog.shared_library.url.setText(shared_library)
            gone = asyncio.Event()
            here.destroyed.connect(gone.set)
            assert await dialog.submit()
            shared = await next_window()
            await asyncio.wait_for(gone.wait(), 60)  # replaced once the new one had started
            assert shared.docent.library_location == without_password(shared_library)
            # The other desk's document, read from the server, and no guide added there.
            assert shared.documents.counts() == (1, 1)
            assert shared.library_state.text() == "Shared library: 1 document"
            assert not shared.library_problem.isVisible()
            # OK with the library unchanged keeps the window.
            requested: list[str] = []
            shared.library_requested.connect(requested.append)
            dialog = shared.open_settings()
            await dialog.loading
            assert await dialog.submit()
            assert requested == []

            dialog = shared.open_library_settings()
            await dialog.loading
            dialog.shared_library.setChecked(False)
            assert await dialog.submit()
            back = await next_window()
            assert back.docent.library_location == EMBEDDED_LIBRARY
            assert back.documents.counts() == (0, 0)
        finally:
            closed.set()
            await running

    loop.run_until_complete(scenario())


def test_a_shared_library_that_cannot_be_opened_leaves_the_window_on_this_computer_s(
    loop: qasync.QEventLoop, isolated_paths: Paths
) -> None:
    _first_run_done(isolated_paths)
    isolated_paths.settings_file.write_text(json.dumps({"library": {"shared_url": UNREACHABLE}}))

    async def scenario() -> None:
        docent, problem = await open_docent()
        assert docent.library_location == EMBEDDED_LIBRARY
        assert problem is not None
        assert problem[0] == UNREACHABLE
        closed = asyncio.Event()
        started: asyncio.Queue[MainWindow] = asyncio.Queue()
        running = asyncio.ensure_future(run_windows(docent, problem, closed, started.put_nowait))
        try:
            window = await asyncio.wait_for(started.get(), 120)
            bar = window.library_problem
            assert bar.isVisible()
            said = bar.label.text()
            assert said.startswith(f"The shared library {UNREACHABLE} could not be opened: ")
            assert said.count(UNREACHABLE) == 1  # the server's words without it again
            assert "\n" not in said
            assert said.endswith(
                "This window shows the library on this computer; documents added now go there."
            )
            # Try again: still unreachable, so the same window stays, saying so again.
            bar.label.clear()
            bar.retry_button.click()
            await until(bar.shown, lambda: bar.label.text() == said)
            assert started.empty()
            assert window.isVisible()
        finally:
            closed.set()
            await running

    loop.run_until_complete(scenario())


def test_a_server_slow_to_answer_gets_a_notice_until_it_is_given_up_on(
    loop: qasync.QEventLoop, isolated_paths: Paths
) -> None:
    """A listening socket that never answers: the kernel accepts the connection, and libpq
    waits for the server's reply until the URL's connect_timeout (else Docent's 10 s)."""
    notices: list[OpeningNotice] = []

    def noticed(location: str) -> OpeningNotice:
        notices.append(OpeningNotice(location))
        return notices[-1]

    with socket.create_server(("127.0.0.1", 0)) as silent:
        url = f"postgresql://docent@127.0.0.1:{silent.getsockname()[1]}/library?connect_timeout=2"
        docent, problem = loop.run_until_complete(open_docent(url, notice=noticed))
    try:
        assert docent.library_location == EMBEDDED_LIBRARY
        assert problem is not None
        assert "timeout expired" in str(problem[1])
        (notice,) = notices
        assert notice.text() == f"Opening the shared library {url}…"
        assert not notice.isVisible()  # closed once the wait ended
    finally:
        loop.run_until_complete(docent.close())
