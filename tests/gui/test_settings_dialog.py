"""Settings: invalid values are refused next to their field; valid ones are saved and applied."""

from __future__ import annotations

import datetime
import json
import re
import shlex
import stat
from pathlib import Path

import pytest
import qasync
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QComboBox, QLineEdit, QPlainTextEdit

from app.bootstrap import Docent
from app.llm.safety import SafeMode, SafetyMemory
from app.secrets import PLAINTEXT_FILE_NAME, provider_key, server_key
from app.settings import Settings
from tests.conftest import files_containing
from tests.peers.everything import everything_stdio
from ui.settings.cloud_settings import EntryList, KeychainNotice
from ui.settings.model_checklist import ModelChecklist
from ui.settings.routing_page import RoutingPage
from ui.settings.settings_dialog import SettingsDialog


def test_an_invalid_number_is_refused_next_to_its_field(
    docent: Docent, loop: qasync.QEventLoop
) -> None:
    dialog = SettingsDialog(docent)
    dialog.numbers["local.n_ctx"].setValue(100)
    assert loop.run_until_complete(dialog.submit()) is False
    error = dialog.errors["local.n_ctx"]
    assert not error.isHidden()
    assert error.text() == "Input should be greater than or equal to 512"
    assert not docent.paths.settings_file.exists()
    dialog.deleteLater()


def test_the_document_readers_limits_are_refused_saved_and_applied_in_place(
    docent: Docent, loop: qasync.QEventLoop, tmp_path: Path
) -> None:
    dialog = SettingsDialog(docent)
    dialog.library.add(str(tmp_path))
    dialog.numbers["library.parse_timeout_s"].setValue(2)
    assert loop.run_until_complete(dialog.submit()) is False
    assert dialog.errors["library.parse_timeout_s"].text() == (
        "Input should be greater than or equal to 5"
    )
    assert shown_page(dialog) == "Advanced"  # where the reader's limits are
    dialog.numbers["library.parse_timeout_s"].setValue(30)
    dialog.numbers["library.parse_memory_mb"].setValue(512)
    assert loop.run_until_complete(dialog.submit()) is True
    saved = json.loads(docent.paths.settings_file.read_text())["library"]
    assert (saved["parse_timeout_s"], saved["parse_memory_mb"]) == (30, 512)
    assert saved["watched_folders"] == [str(tmp_path)]
    assert (docent.reader.limits.timeout_s, docent.reader.limits.memory_bytes) == (30, 512 << 20)
    dialog.deleteLater()


def test_a_missing_model_file_is_refused(docent: Docent, loop: qasync.QEventLoop) -> None:
    dialog = SettingsDialog(docent)
    dialog.model.setText("/nowhere/model.gguf")
    assert loop.run_until_complete(dialog.submit()) is False
    assert dialog.errors["local.chat_model"].text() == (
        "the chat model file /nowhere/model.gguf does not exist"
    )
    dialog.deleteLater()


def test_valid_settings_are_saved_and_applied_without_restart(
    docent: Docent, loop: qasync.QEventLoop, tmp_path: Path
) -> None:
    own_model = tmp_path / "mine.gguf"
    own_model.write_bytes(b"GGUF")
    dialog = SettingsDialog(docent)
    dialog.model.setText(str(own_model))
    dialog.numbers["local.n_threads"].setValue(3)
    dialog.numbers["retrieval.top_k"].setValue(6)
    assert loop.run_until_complete(dialog.submit()) is True
    saved = json.loads(docent.paths.settings_file.read_text())
    assert saved["local"]["n_threads"] == 3
    assert saved["local"]["chat_model"] == str(own_model)
    assert saved["retrieval"]["top_k"] == 6
    assert docent.settings.local.n_threads == 3
    assert docent.chat.config().name == "mine"  # the next question loads this model
    dialog.deleteLater()


def test_use_the_gpu_offloads_every_layer_and_unticked_none(
    docent: Docent, loop: qasync.QEventLoop
) -> None:
    dialog = SettingsDialog(docent)
    assert not dialog.use_gpu.isChecked()  # the default: CPU only
    dialog.use_gpu.setChecked(True)
    assert loop.run_until_complete(dialog.submit()) is True
    assert docent.settings.local.n_gpu_layers == -1
    dialog.deleteLater()
    again = SettingsDialog(docent)
    assert again.use_gpu.isChecked()
    again.use_gpu.setChecked(False)
    assert loop.run_until_complete(again.submit()) is True
    assert json.loads(docent.paths.settings_file.read_text())["local"]["n_gpu_layers"] == 0
    again.deleteLater()


PROVIDER_KEY = "sk-or-v1-0123456789abcdef"
SERVER_KEY = "bearer-token-fedcba9876543210"


def shown_page(dialog: SettingsDialog) -> str:
    item = dialog.page_list.currentItem()
    assert item is not None
    assert dialog.pages.currentIndex() == dialog.page_list.currentRow()
    return item.text()


def fill(entry_list: EntryList, **values: str) -> None:
    for name, value in values.items():
        widget = entry_list.widgets[name]
        if isinstance(widget, ModelChecklist):  # models typed by hand, one by one
            for model in value.split(","):
                widget.typed.setText(model)
                widget.add_typed()
        elif isinstance(widget, QComboBox):
            widget.setCurrentText(value)
        elif isinstance(widget, QPlainTextEdit):
            widget.setPlainText(value)
        else:
            widget.setText(value)


def opened(docent: Docent, loop: qasync.QEventLoop) -> SettingsDialog:
    dialog = SettingsDialog(docent)
    loop.run_until_complete(dialog.loading)
    return dialog


@pytest.mark.usefixtures("keychain")
def test_cloud_keys_round_trip_through_the_keychain_and_no_file_holds_them(
    docent: Docent, loop: qasync.QEventLoop, tmp_path: Path
) -> None:
    dialog = opened(docent, loop)
    assert "OS keychain (SecretService" in dialog.keychain.text()
    assert dialog.consent.isHidden()
    dialog.providers.add()
    fill(
        dialog.providers,
        name="openrouter",
        base_url="http://127.0.0.1:9/v1",
        models="gpt-4o-mini, claude-haiku",
        key=PROVIDER_KEY,
    )
    dialog.servers.add()
    fill(
        dialog.servers,
        name="team-llm",
        transport="streamable-http",
        url="http://127.0.0.1:9/mcp",
        headers="X-Team: docs",
        key=SERVER_KEY,
        models="big",
    )
    assert loop.run_until_complete(dialog.submit()) is True
    saved = json.loads(docent.paths.settings_file.read_text())
    assert saved["cloud"]["providers"][0]["models"] == ["gpt-4o-mini", "claude-haiku"]
    assert saved["cloud"]["servers"][0]["headers"] == {"X-Team": "docs"}
    assert docent.settings.cloud.servers[0].url == "http://127.0.0.1:9/mcp"
    store = loop.run_until_complete(docent.secret_store())
    assert store.get(provider_key("openrouter")) == PROVIDER_KEY
    assert store.get(server_key("team-llm")) == SERVER_KEY
    for secret in (PROVIDER_KEY, SERVER_KEY):
        assert files_containing(tmp_path, secret) == []
    dialog.deleteLater()

    again = opened(docent, loop)
    key_field = again.providers.widgets["key"]
    assert isinstance(key_field, QLineEdit)
    assert key_field.text() == ""  # never shown back in full
    assert key_field.placeholderText().startswith("stored: …cdef")
    fill(again.providers, name="router2")  # a renamed provider keeps its key
    again.servers.remove_current()  # a removed server's key is deleted
    assert loop.run_until_complete(again.submit()) is True
    assert store.get(provider_key("router2")) == PROVIDER_KEY
    assert store.get(provider_key("openrouter")) is None
    assert store.get(server_key("team-llm")) is None
    again.deleteLater()


def test_without_a_keychain_a_key_needs_explicit_consent_to_a_plain_file(
    docent: Docent, loop: qasync.QEventLoop, tmp_path: Path
) -> None:
    dialog = opened(docent, loop)
    assert "No OS keychain was found" in dialog.keychain.text()
    assert not dialog.consent.isHidden()
    dialog.providers.add()
    fill(dialog.providers, name="groq", base_url="https://api.groq.example/v1", models="m")
    fill(dialog.providers, key=PROVIDER_KEY)
    assert loop.run_until_complete(dialog.submit()) is False
    assert "Tick the box below" in dialog.providers.error.text()
    assert not docent.paths.settings_file.exists()
    assert files_containing(tmp_path, PROVIDER_KEY) == []

    dialog.consent.setChecked(True)
    assert loop.run_until_complete(dialog.submit()) is True
    key_file = docent.paths.config_dir / PLAINTEXT_FILE_NAME
    assert files_containing(tmp_path, PROVIDER_KEY) == [key_file]
    assert stat.S_IMODE(key_file.stat().st_mode) == 0o600
    assert json.loads(docent.paths.settings_file.read_text())["secrets"] == {
        "plaintext_file_consent": True
    }
    dialog.deleteLater()


@pytest.mark.parametrize(
    ("values", "message"),
    [
        ({"transport": "stdio", "command": ""}, "Value error, a stdio server needs a command"),
        (
            {"command": "npx", "env": "GITHUB_TOKEN=abc"},
            "env: Value error, environment variable 'GITHUB_TOKEN' looks like a credential",
        ),
        ({"command": "npx", "models": ""}, "models: List should have at least 1 item"),
    ],
)
def test_an_invalid_mcp_server_is_refused_next_to_it(
    docent: Docent, loop: qasync.QEventLoop, values: dict[str, str], message: str
) -> None:
    dialog = opened(docent, loop)
    dialog.servers.add()
    fill(dialog.servers, name="tools", models="m")
    fill(dialog.servers, **values)
    assert loop.run_until_complete(dialog.submit()) is False
    assert not dialog.servers.error.isHidden()
    assert message in dialog.servers.error.text()
    assert shown_page(dialog) == "Integrations"
    assert dialog.integrations.currentWidget() is dialog.servers
    assert not docent.paths.settings_file.exists()
    dialog.deleteLater()


def test_routing_and_privacy_are_saved_and_applied(docent: Docent, loop: qasync.QEventLoop) -> None:
    dialog = opened(docent, loop)
    dialog.routing.modes["local"].click()
    dialog.routing.privacies["never"].click()
    assert not dialog.routing.modes["auto"].isChecked()  # one choice per group
    dialog.routing.budget.setValue(12.5)
    dialog.routing.cache_ttl.setValue(60)
    dialog.routing.topics.setPlainText("math = openrouter/o4-mini\ncode=openrouter/qwen-coder")
    assert loop.run_until_complete(dialog.submit()) is True
    routing = docent.settings.routing
    assert (routing.mode, routing.privacy, routing.monthly_budget_usd) == ("local", "never", 12.5)
    assert routing.cache_ttl_s == 60
    assert routing.topic_models == {"math": "openrouter/o4-mini", "code": "openrouter/qwen-coder"}
    dialog.deleteLater()


def test_test_connection_reaches_the_selected_server_and_reports_latency(
    docent: Docent, loop: qasync.QEventLoop
) -> None:
    dialog = opened(docent, loop)
    dialog.servers.add()
    everything = everything_stdio()
    fill(
        dialog.servers,
        name="everything",
        command=everything.command,
        args=shlex.join(everything.args),
        chat_tool="echo",
        models="echo",
    )
    task = dialog.test_connection(dialog.servers)
    assert task is not None
    loop.run_until_complete(task)
    assert re.fullmatch(
        r"OK in \d+ ms: \d+ tools, including 'echo'", dialog.servers.test_result.text()
    )
    fill(dialog.servers, command="")
    loop.run_until_complete(dialog.test_connection(dialog.servers))
    assert dialog.servers.test_result.text() == (
        "Fix this first: Value error, a stdio server needs a command"
    )
    dialog.deleteLater()


def test_safe_settings_a_crash_chose_are_shown_and_can_be_given_up(
    docent: Docent, loop: qasync.QEventLoop
) -> None:
    plain = SettingsDialog(docent)
    assert plain.engine.text() == "Starts with the first question."
    assert plain.normal_button.isHidden()
    plain.deleteLater()

    crash = SafeMode(1, "crashed (segmentation fault) while loading", datetime.date(2026, 12, 5))
    docent.chat.safety.set("qwen2.5-coder-0.5b", crash)
    dialog = SettingsDialog(docent)
    assert dialog.engine.text() == (
        "The local model runs with safe settings since 2026-12-05 (weight repacking off): "
        "it crashed (segmentation fault) while loading."
    )
    assert not dialog.normal_button.isHidden()
    loop.run_until_complete(dialog.normal_settings())
    assert docent.chat.safe_mode() is None
    assert SafetyMemory(docent.paths.engine_safety).get("qwen2.5-coder-0.5b") is None
    assert dialog.engine.text() == "Normal settings: the next question loads the model with them."
    assert dialog.normal_button.isHidden()
    dialog.deleteLater()


def typed(entry_list: EntryList, field: str) -> str:
    line = entry_list.widgets[field]
    assert isinstance(line, QLineEdit)
    return line.text()


def preset(dialog: SettingsDialog, title: str) -> None:
    """Choose `title` in the Add provider menu."""
    menu = dialog.providers.add_button.menu()
    assert menu is not None
    (action,) = [action for action in menu.actions() if action.text() == title]
    action.trigger()


def fetch(dialog: SettingsDialog, loop: qasync.QEventLoop) -> None:
    dialog.provider_models.fetch_button.click()
    assert dialog.fetching is not None
    loop.run_until_complete(dialog.fetching)


def listed(dialog: SettingsDialog) -> dict[str, str]:
    """Each model in the checklist: its line as shown."""
    models = dialog.provider_models.list
    return {
        str(models.item(row).data(Qt.ItemDataRole.UserRole)): models.item(row).text()
        for row in range(models.count())
    }


def tick(dialog: SettingsDialog, model: str) -> None:
    models = dialog.provider_models.list
    for row in range(models.count()):
        if models.item(row).data(Qt.ItemDataRole.UserRole) == model:
            models.item(row).setCheckState(Qt.CheckState.Checked)


@pytest.mark.usefixtures("keychain")
def test_adding_openrouter_takes_a_preset_a_key_and_ticks(
    docent: Docent, loop: qasync.QEventLoop, llama_server: str
) -> None:
    dialog = opened(docent, loop)
    preset(dialog, "OpenRouter")
    assert typed(dialog.providers, "name") == "openrouter"
    assert typed(dialog.providers, "base_url") == "https://openrouter.ai/api/v1"
    # llama.cpp's server on 127.0.0.1 stands in for OpenRouter (a proxy would change the URL too).
    fill(dialog.providers, base_url=llama_server, key=PROVIDER_KEY)
    fetch(dialog, loop)
    assert "qwen-mini" in listed(dialog)
    assert dialog.provider_models.ticked() == []  # offered, not chosen
    assert dialog.provider_models.status.text() == ("1 model served: tick it if Docent may use it.")
    tick(dialog, "qwen-mini")
    assert loop.run_until_complete(dialog.submit()) is True
    saved = json.loads(docent.paths.settings_file.read_text())["cloud"]["providers"]
    assert saved == [{"name": "openrouter", "base_url": llama_server, "models": ["qwen-mini"]}]
    store = loop.run_until_complete(docent.secret_store())
    assert store.get(provider_key("openrouter")) == PROVIDER_KEY
    dialog.deleteLater()


def test_fetching_models_from_an_unreachable_url_says_so(
    docent: Docent, loop: qasync.QEventLoop
) -> None:
    dialog = opened(docent, loop)
    preset(dialog, "LM Studio (local server)")
    fill(dialog.providers, base_url="http://127.0.0.1:9/v1")  # nothing listens on port 9
    fetch(dialog, loop)
    assert dialog.provider_models.status.text() == (
        "Could not fetch the models: cannot reach http://127.0.0.1:9/v1."
    )
    assert listed(dialog) == {}
    dialog.deleteLater()


def test_each_model_shows_its_price_or_that_its_cost_is_unknown(
    docent: Docent, loop: qasync.QEventLoop
) -> None:
    dialog = opened(docent, loop)  # the price table is read while it opens
    preset(dialog, "OpenRouter")
    fill(dialog.providers, models="openai/gpt-4o-mini,qwen-mini")
    assert listed(dialog) == {
        "openai/gpt-4o-mini": "openai/gpt-4o-mini  —  $0.15 in, $0.6 out per million tokens",
        "qwen-mini": "qwen-mini  —  ⚠ no price: cost unknown",
    }
    fill(dialog.providers, name="openai")  # openai/qwen-mini has no price either
    assert listed(dialog)["qwen-mini"].endswith("no price: cost unknown")
    dialog.deleteLater()


def test_the_keychain_notice_is_only_on_the_pages_whose_entries_hold_keys(
    docent: Docent, loop: qasync.QEventLoop
) -> None:
    dialog = opened(docent, loop)
    dialog.show()
    notices = dialog.findChildren(KeychainNotice)
    for row in range(dialog.page_list.count()):
        dialog.page_list.setCurrentRow(row)
        for tab in range(dialog.integrations.count()):
            dialog.integrations.setCurrentIndex(tab)
            shown = [n for n in notices if n.isVisible()]
            if shown_page(dialog) == "Cloud providers":
                assert shown == [dialog.provider_notice]
            elif dialog.pages.currentWidget() is dialog.integrations and tab == 0:
                assert shown == [dialog.server_notice]  # MCP servers
            else:
                assert shown == [], (shown_page(dialog), tab)
    # Consent given on one page is the same consent on the other.
    assert not dialog.server_notice.consent.isHidden()  # no keychain in this test
    dialog.server_notice.consent.setChecked(True)
    assert dialog.consent.isChecked()
    dialog.close()
    dialog.deleteLater()


def index_notes(docent: Docent, loop: qasync.QEventLoop, tmp_path: Path) -> None:
    notes = tmp_path / "tea.md"
    notes.write_text(
        "# Tea\n\nGreen tea is steamed or pan-fired soon after picking. Oolong is partly "
        "oxidised before it is rolled and dried.\n",
        encoding="utf-8",
    )

    async def index() -> None:
        async for _ in docent.intake.index([notes]):
            pass

    loop.run_until_complete(index())


def tried(page: RoutingPage, loop: qasync.QEventLoop, question: str) -> str:
    page.question.setText(question)
    page.try_button.click()
    assert page.trying is not None
    loop.run_until_complete(page.trying)
    return page.route.text()


def test_try_a_question_shows_the_route_and_why_without_generating(
    docent: Docent, loop: qasync.QEventLoop, tmp_path: Path
) -> None:
    index_notes(docent, loop, tmp_path)
    dialog = opened(docent, loop)
    page = dialog.routing
    assert tried(page, loop, "How is green tea made?") == (
        "On this computer, with qwen2.5-coder-0.5b.\n"
        "Why: no cloud set up.\n"
        "Found 1 passage in 1 document.\n"
        "No answer was written."
    )
    # The unsaved choices on the page are the ones tried.
    page.modes["local"].click()
    page.question.returnPressed.emit()  # Enter tries too
    assert page.trying is not None
    loop.run_until_complete(page.trying)
    assert "Why: route set to This computer only." in page.route.text()
    page.privacies["never"].click()
    page.modes["auto"].click()
    assert "Why: privacy: nothing leaves this computer." in tried(page, loop, "How is tea made?")
    # Nothing was generated: the model was never even loaded, and no answer was recorded.
    assert not docent.chat.loaded
    assert loop.run_until_complete(docent.desk.history(10)) == []
    assert not docent.paths.settings_file.exists()  # trying saves nothing
    dialog.deleteLater()


def test_try_a_question_shows_a_hard_question_going_to_the_cloud_and_why(
    docent: Docent, loop: qasync.QEventLoop, tmp_path: Path, llama_server: str
) -> None:
    provider = {"name": "llama", "base_url": llama_server, "models": ["qwen-mini"]}
    with_cloud = Settings.model_validate({"cloud": {"providers": [provider]}})
    loop.run_until_complete(docent.apply_settings(with_cloud))
    index_notes(docent, loop, tmp_path)
    dialog = opened(docent, loop)
    shown = tried(
        dialog.routing, loop, "Compare green tea and oolong: why do they taste different?"
    )
    assert shown.startswith("In the cloud, with llama/qwen-mini.\nWhy: ")
    assert "asks for a comparison" in shown
    assert "asks why" in shown
    simple = tried(dialog.routing, loop, "How is green tea made?")
    assert simple.startswith("On this computer, with qwen2.5-coder-0.5b.\nWhy: simple question")
    # No model wrote anything: none loaded here, nothing recorded, nothing charged.
    assert not docent.chat.loaded
    assert loop.run_until_complete(docent.desk.history(10)) == []
    assert docent.desk.budget.left_usd() == with_cloud.routing.monthly_budget_usd
    dialog.deleteLater()
