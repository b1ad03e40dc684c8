"""Settings → Local model → "Answer with a model on a server you run", in the real dialog: a
preset fills the address, "Fetch models" asks llama.cpp's server on 127.0.0.1 what it serves,
the key goes to the keychain (never to a file), and the local route then names the server's
model; the badge says where an answer ran."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import qasync

from app.answering import RouteDecided
from app.bootstrap import Docent
from app.routing import Reason
from app.secrets import model_server_key
from tests.conftest import files_containing
from ui.answer.route_badge import RouteBadge
from ui.settings.settings_dialog import SettingsDialog

KEY = "llama-server-key-0123456789"


def opened(docent: Docent, loop: qasync.QEventLoop) -> SettingsDialog:
    dialog = SettingsDialog(docent)
    loop.run_until_complete(dialog.loading)
    return dialog


def choose_preset(dialog: SettingsDialog, title: str) -> None:
    menu = dialog.server.presets.menu()
    assert menu is not None
    (action,) = [action for action in menu.actions() if action.text() == title]
    action.trigger()


def fetch(dialog: SettingsDialog, loop: qasync.QEventLoop) -> None:
    dialog.server.fetch_button.click()
    assert dialog.server.fetching is not None
    loop.run_until_complete(dialog.server.fetching)


@pytest.mark.usefixtures("keychain")
def test_a_server_is_set_up_with_its_models_fetched_and_its_key_in_the_keychain(
    docent: Docent, loop: qasync.QEventLoop, llama_server: str, tmp_path: Path
) -> None:
    dialog = opened(docent, loop)
    box = dialog.server
    assert not box.isChecked()  # answers on this computer until the user says otherwise
    dialog.reveal(box)
    assert dialog.page_list.currentItem().text() == "Local model"
    box.setChecked(True)
    choose_preset(dialog, "llama.cpp server")
    assert box.base_url.text() == "http://127.0.0.1:8080/v1"
    box.base_url.setText(llama_server)  # the test's server listens on a port of its own
    box.key.setText(KEY)
    fetch(dialog, loop)
    assert [box.model.itemText(row) for row in range(box.model.count())] == ["qwen-mini"]
    assert box.model.currentText() == "qwen-mini"
    assert box.status.text() == "Models it serves: 1. Pick the one to answer with."
    assert loop.run_until_complete(dialog.submit()) is True

    saved = json.loads(docent.paths.settings_file.read_text())["local"]["server"]
    assert (saved["enabled"], saved["base_url"], saved["model"]) == (
        True,
        llama_server,
        "qwen-mini",
    )
    assert docent.chat.shown == "qwen-mini on 127.0.0.1"  # the local route, from the next question
    store = loop.run_until_complete(docent.secret_store())
    assert store.get(model_server_key()) == KEY
    assert loop.run_until_complete(docent.model_server_key()) == KEY
    assert files_containing(tmp_path, KEY) == []

    again = opened(docent, loop)
    assert again.server.isChecked()
    assert again.server.key.text() == ""  # never shown back in full
    assert again.server.key.placeholderText() == "Kept in the keychain: …6789"
    again.deleteLater()
    dialog.deleteLater()


def test_a_server_without_an_address_or_a_model_is_refused_beside_it(
    docent: Docent, loop: qasync.QEventLoop
) -> None:
    dialog = opened(docent, loop)
    dialog.server.setChecked(True)
    assert loop.run_until_complete(dialog.submit()) is False
    error = dialog.errors["local.server"]
    assert not error.isHidden()
    assert "a model server needs its base URL" in error.text()
    assert dialog.page_list.currentItem().text() == "Local model"

    dialog.server.base_url.setText("http://192.168.1.5:8080/v1")
    dialog.server.model.setEditText("qwen-mini")
    assert loop.run_until_complete(dialog.submit()) is True
    assert docent.settings.local.server.enabled
    dialog.deleteLater()


def test_fetching_from_a_server_that_is_down_says_so(
    docent: Docent, loop: qasync.QEventLoop
) -> None:
    dialog = opened(docent, loop)
    dialog.server.setChecked(True)
    dialog.server.base_url.setText("http://127.0.0.1:9/v1")  # nothing listens on port 9
    fetch(dialog, loop)
    assert dialog.server.status.text() == (
        "Could not fetch the models: cannot reach http://127.0.0.1:9/v1."
    )
    assert dialog.server.model.count() == 0
    dialog.deleteLater()


def test_the_badge_names_the_server_model_and_why_it_fell_back(qtbot: object) -> None:
    badge = RouteBadge()
    badge.apply(RouteDecided("local", "qwen-mini on 192.168.1.5", "privacy", Reason("privacy")))
    assert badge.reason.full_text().startswith("qwen-mini on 192.168.1.5 · privacy")
    why = Reason("server_failed", {"error": "cannot reach 192.168.1.5 at http://192.168.1.5/v1"})
    badge.apply(RouteDecided("fallback", "qwen2.5-coder-0.5b", why.text, why))
    assert badge.reason.full_text() == (
        "qwen2.5-coder-0.5b · the model server failed before its first word (cannot reach "
        "192.168.1.5 at http://192.168.1.5/v1): answered on this computer"
    )
