"""Settings: local model and retrieval, cloud providers and MCP servers with keychain-held keys,
routing and privacy. Invalid values are refused with the reason next to their field; valid ones
are saved and applied without a restart (the model reloads on the next question)."""

from __future__ import annotations

import asyncio
import importlib
from typing import Any

from pydantic import ValidationError
from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QDoubleSpinBox,
    QFileDialog,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPlainTextEdit,
    QPushButton,
    QSpinBox,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from app.bootstrap import Docent
from app.catalog import ModelError
from app.errors import DocentError
from app.llm.chat_model import chat_model_config
from app.secrets import SecretStore, SecretStoreError, provider_key, server_key
from app.settings import McpServerSettings, ProviderSettings, RoutingSettings, Settings
from ui.background import Background
from ui.library.watched_folders import WatchedFoldersPage
from ui.plain import plain_label
from ui.settings.cloud_settings import PROVIDER_FIELDS, SERVER_FIELDS, Entry, EntryList
from ui.settings.mcp_serving import ServingPage
from ui.theme import error_style

# (section, field, label, minimum, maximum); 0 threads means "as many as the CPU has".
_NUMBERS = (
    ("local", "n_threads", "CPU threads (0 = all cores)", 0, 512),
    ("local", "n_ctx", "Context size (tokens)", 0, 262144),
    ("local", "n_gpu_layers", "GPU layers (-1 = all; Metal/CUDA builds)", -1, 999),
    ("local", "max_tokens", "Longest answer (tokens)", 0, 8192),
    ("retrieval", "top_k", "Passages per question", 0, 20),
    ("retrieval", "context_tokens", "Source text per prompt (tokens)", 0, 32768),
)
# The document reader's limits, on the library page.
_LIMITS = (
    ("library", "parse_timeout_s", "Longest time to read one document (s)", 0, 86400),
    ("library", "parse_memory_mb", "Most memory to read one document (MB)", 0, 1048576),
    ("library", "max_unpacked_mb", "Most an EPUB or XPS may inflate to (MB)", 0, 1048576),
)


class SettingsDialog(QDialog):
    """Signals: applied() — after valid settings were saved and applied; models_requested() —
    the Models… button (the window owns the one model manager); speed_checked() — after "Measure
    again" measured this computer's speed and saved the choice made from it."""

    applied = Signal()
    models_requested = Signal()
    speed_checked = Signal()

    def __init__(
        self, docent: Docent, parent: QWidget | None = None, serving_token: str | None = None
    ) -> None:
        """`serving_token`: the bearer token of the app's running MCP server, for the snippet."""
        super().__init__(parent)
        self.docent = docent
        self.background = Background(self._report_failure)
        self.setWindowTitle("Docent settings")
        self.errors: dict[str, QLabel] = {}
        self.model = QLineEdit(docent.settings.local.chat_model)
        browse = QPushButton("Browse…")
        browse.clicked.connect(self._choose_model)
        self.models_button = QPushButton("Models…")
        self.models_button.setToolTip("Download recommended models and switch between them")
        self.models_button.clicked.connect(self.models_requested)
        model_row = QHBoxLayout()
        model_row.addWidget(self.model, 1)
        model_row.addWidget(browse)
        model_row.addWidget(self.models_button)
        form = QFormLayout()
        form.addRow("Chat model (catalog name or GGUF file)", model_row)
        form.addRow("", self._error_label("local.chat_model"))
        self.speed = plain_label(docent.describe_speed())
        self.speed.setWordWrap(True)
        self.measure_button = QPushButton("Measure again")
        self.measure_button.setToolTip(
            "Time the bundled model on this computer (a few seconds) and choose the default "
            "chat model from its speed; a model you chose yourself is kept"
        )
        self.measure_button.clicked.connect(self.measure_speed)
        self.measuring: asyncio.Task[None] | None = None
        speed_column = QVBoxLayout()
        speed_column.addWidget(self.speed)
        speed_column.addWidget(self.measure_button, alignment=Qt.AlignmentFlag.AlignLeft)
        form.addRow("This computer's speed", speed_column)
        state = docent.chat.state
        self.engine = plain_label(
            f"Runs on: {state.describe()}" if state else "Starts with the first question."
        )
        self.engine.setWordWrap(True)
        self.normal_button = QPushButton("Try the normal settings again")
        self.normal_button.setToolTip(
            "Forget the safe settings Docent chose after the model crashed here; the next "
            "question loads it with the normal ones"
        )
        self.normal_button.clicked.connect(self.normal_settings)
        if (mode := docent.chat.safe_mode()) is not None:
            if state is None:
                self.engine.setText(f"The local model runs with {mode.describe()}.")
        else:
            self.normal_button.hide()
        engine_column = QVBoxLayout()
        engine_column.addWidget(self.engine)
        engine_column.addWidget(self.normal_button, alignment=Qt.AlignmentFlag.AlignLeft)
        form.addRow("How it runs here", engine_column)
        self.numbers: dict[str, QSpinBox] = {}
        self._number_rows(form, _NUMBERS)
        local_page = QWidget()
        local_page.setLayout(form)
        self.tabs = QTabWidget()
        self._cloud_lists(docent.settings)
        self.tabs.addTab(local_page, "Local model")
        self.tabs.addTab(self.providers, "Cloud providers")
        self.tabs.addTab(self.servers, "MCP servers")
        self.tabs.addTab(self._routing_page(docent.settings.routing), "Routing && privacy")
        self.library = WatchedFoldersPage(
            docent.settings.library.watched_folders, self._error_label("library")
        )
        limits = QFormLayout()
        self._number_rows(limits, _LIMITS)
        self.library.rows.addLayout(limits)
        self.tabs.addTab(self.library, "Library")
        self.serving = ServingPage(docent.settings.serve_mcp, serving_token)
        self.tabs.addTab(self.serving, "Serve over MCP")
        buttons = QDialogButtonBox(
            QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel
        )
        buttons.accepted.connect(self.submit)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addWidget(self.tabs)
        layout.addWidget(self.keychain)
        layout.addWidget(self.consent)
        self.failure = plain_label()  # background work that failed unexpectedly
        self.failure.setWordWrap(True)
        self.failure.hide()
        layout.addWidget(self.failure)
        layout.addWidget(buttons)
        self.applying: asyncio.Task[bool] | None = None
        self.loading = self.background.run(self._load_keys())

    def normal_settings(self) -> asyncio.Task[None]:
        self.normal_button.setEnabled(False)
        return self.background.run(self._normal_settings())

    async def _normal_settings(self) -> None:
        await self.docent.chat.normal_settings()
        self.engine.setText("Normal settings: the next question loads the model with them.")
        self.normal_button.hide()
        self.normal_button.setEnabled(True)

    def measure_speed(self) -> asyncio.Task[None] | None:
        if self.measuring is not None:
            return None
        self.measure_button.setEnabled(False)
        self.speed.setText("Measuring (a few seconds)…")
        self.measuring = self.background.run(self._measure_speed())
        return self.measuring

    async def _measure_speed(self) -> None:
        try:
            await self.docent.check_speed()
        except DocentError as error:
            self.speed.setText(f"Docent could not measure this computer's speed: {error}")
        else:
            self.speed.setText(self.docent.describe_speed())
            self.speed_checked.emit()
        finally:
            self.measure_button.setEnabled(True)
            self.measuring = None

    def _number_rows(
        self, form: QFormLayout, numbers: tuple[tuple[str, str, str, int, int], ...]
    ) -> None:
        for section, name, label, low, high in numbers:
            box = QSpinBox()
            box.setRange(low, high)
            value = getattr(getattr(self.docent.settings, section), name)
            box.setValue(0 if value is None else int(value))
            self.numbers[f"{section}.{name}"] = box
            form.addRow(label, box)
            form.addRow("", self._error_label(f"{section}.{name}"))

    def _cloud_lists(self, settings: Settings) -> None:
        self.keychain = plain_label("Looking for the keychain…")
        self.keychain.setWordWrap(True)
        self.consent = QCheckBox(
            "Keep keys in a plain-text file that only my user can read (NOT encrypted)"
        )
        self.consent.setChecked(settings.secrets.plaintext_file_consent)
        self.consent.hide()
        self.providers = EntryList(
            "OpenAI-compatible providers",
            PROVIDER_FIELDS,
            {"name": "", "base_url": "https://", "models": []},
        )
        self.servers = EntryList(
            "MCP servers",
            SERVER_FIELDS,
            McpServerSettings.model_construct(name="", models=[]).model_dump(),
        )
        self.providers.test_button.clicked.connect(lambda: self.test_connection(self.providers))
        self.servers.test_button.clicked.connect(lambda: self.test_connection(self.servers))
        self.testing: asyncio.Task[None] | None = None
        self.providers.load([Entry(item.model_dump()) for item in settings.cloud.providers])
        self.servers.load([Entry(item.model_dump()) for item in settings.cloud.servers])

    def _routing_page(self, routing: RoutingSettings) -> QWidget:
        self.mode = QComboBox()
        self.mode.addItems(["auto", "local", "cloud"])
        self.mode.setCurrentText(routing.mode)
        self.privacy = QComboBox()
        self.privacy.addItems(["never", "excerpts", "standard"])
        self.privacy.setCurrentText(routing.privacy)
        self.budget = QDoubleSpinBox()
        self.budget.setRange(0.0, 100000.0)
        self.budget.setPrefix("$ ")
        self.budget.setValue(routing.monthly_budget_usd)
        self.cache_ttl = QSpinBox()
        self.cache_ttl.setRange(0, 86400)
        self.cache_ttl.setSuffix(" s")
        self.cache_ttl.setValue(routing.cache_ttl_s)
        self.cascade = QCheckBox("Answer locally first; escalate when the draft fails its check")
        self.cascade.setChecked(routing.cascade)
        self.topics = QPlainTextEdit(
            "\n".join(f"{topic}={model}" for topic, model in routing.topic_models.items())
        )
        self.topics.setFixedHeight(60)
        form = QFormLayout()
        for label, widget in (
            ("Route", self.mode),
            ("Privacy", self.privacy),
            ("Monthly cloud budget", self.budget),
            ("Answer cache lifetime (0 = off)", self.cache_ttl),
            ("", self.cascade),
            ("Model per topic (topic=model per line)", self.topics),
        ):
            form.addRow(label, widget)
        form.addRow("", self._error_label("routing"))
        form.addRow(
            QLabel(
                "<i>never</i>: nothing leaves this machine. <i>excerpts</i>: a cloud model sees "
                "the question and the retrieved excerpts only. <i>standard</i>: also document "
                "titles."
            )
        )
        page = QWidget()
        page.setLayout(form)
        return page

    async def _load_keys(self) -> None:
        """Find the keychain and which entries already have a key (shown masked)."""
        store = await self.docent.secret_store()
        self._show_keychain(store)
        for entries, key_name in (
            (self.providers.entries, provider_key),
            (self.servers.entries, server_key),
        ):
            for entry in entries:
                entry.stored_as = entry.values["name"]
                entry.stored_key = await asyncio.to_thread(store.get, key_name(entry.stored_as))
        self.providers.refresh()
        self.servers.refresh()

    def test_connection(self, entry_list: EntryList) -> asyncio.Task[None] | None:
        """Reach the selected provider or server as Docent would, and show how long it took."""
        entry = entry_list.selected()
        if entry is None:
            return None
        if self.testing is not None:
            self.testing.cancel()  # a new test replaces the one still running
        self.testing = self.background.run(self._test(entry_list, entry))
        return self.testing

    async def _test(self, entry_list: EntryList, entry: Entry) -> None:
        key = entry.new_key or entry.stored_key
        entry_list.test_result.setText("Testing…")
        # The MCP SDK loads on first use, off the GUI thread: it would slow every start-up.
        probes = await asyncio.to_thread(importlib.import_module, "app.cloud.probe")
        try:
            if entry_list is self.providers:
                provider = ProviderSettings.model_validate(entry.values)
                probe = await probes.probe_provider(provider, key)
            else:
                server = McpServerSettings.model_validate(entry.values)
                probe = await probes.probe_server(server, key)
        except ValidationError as error:
            first = error.errors()[0]
            field = ".".join(str(part) for part in first["loc"])
            where = f"{field}: " if field else ""
            entry_list.test_result.setText(f"Fix this first: {where}{first['msg']}")
            return
        entry_list.test_result.setText(probe.describe())

    def _show_keychain(self, store: SecretStore) -> None:
        self.keychain.setText(store.describe())
        self.consent.setVisible(not store.available or store.is_plaintext)

    def _error_label(self, key: str) -> QLabel:
        label = plain_label()  # errors quote values: paths, names
        label.setStyleSheet(error_style(self.palette()))
        label.setWordWrap(True)
        label.hide()
        self.errors[key] = label
        return label

    def _choose_model(self) -> None:
        name, _ = QFileDialog.getOpenFileName(self, "Chat model", "", "GGUF models (*.gguf)")
        if name:
            self.model.setText(name)

    def candidate(self) -> dict[str, Any]:
        raw = self.docent.settings.model_dump()
        raw["local"]["chat_model"] = self.model.text().strip()
        for key, box in self.numbers.items():
            section, name = key.split(".")
            value: int | None = box.value()
            if key == "local.n_threads" and value == 0:
                value = None
            raw[section][name] = value
        raw["cloud"] = {"providers": self.providers.values(), "servers": self.servers.values()}
        raw["routing"] = {
            "mode": self.mode.currentText(),
            "privacy": self.privacy.currentText(),
            "monthly_budget_usd": self.budget.value(),
            "cache_ttl_s": self.cache_ttl.value(),
            "cascade": self.cascade.isChecked(),
            "topic_models": {
                topic.strip(): model.strip()
                for topic, _, model in (
                    line.partition("=") for line in self.topics.toPlainText().splitlines()
                )
                if topic.strip()
            },
        }
        raw["secrets"] = {"plaintext_file_consent": self.consent.isChecked()}
        raw["library"]["watched_folders"] = self.library.values()
        raw["serve_mcp"] = self.serving.values()
        return raw

    def submit(self) -> asyncio.Task[bool]:
        self.applying = self.background.run(self._apply(self.candidate()))
        return self.applying

    async def _apply(self, raw: dict[str, Any]) -> bool:
        for label in self.errors.values():
            label.hide()
        self.providers.clear_error()
        self.servers.clear_error()
        try:
            settings = Settings.model_validate(raw)
        except ValidationError as error:
            for issue in error.errors():
                self._show_issue(issue["loc"], issue["msg"])
            return False
        try:  # the model file must exist; joining a bundled one may take seconds: off the loop
            await asyncio.to_thread(
                chat_model_config,
                settings.local,
                self.docent.catalog,
                self.docent.paths.models_dir,
            )
        except ModelError as error:
            self._show("local.chat_model", str(error))
            return False
        if not await self._store_keys(settings):
            return False
        await asyncio.to_thread(settings.save, self.docent.paths.settings_file)
        await self.docent.apply_settings(settings)
        self.applied.emit()
        self.accept()
        return True

    async def _store_keys(self, settings: Settings) -> bool:
        """Keys typed, renamed or removed since the dialog opened, into the keychain."""
        store = await self.docent.secret_store(settings.secrets.plaintext_file_consent)
        for entry_list, key_name in ((self.providers, provider_key), (self.servers, server_key)):
            operations: list[tuple[str, str | None]] = []  # (key name, secret or None = delete)
            for entry in entry_list.entries:
                name = entry.values["name"]
                secret = entry.new_key or (entry.stored_key if entry.stored_as != name else None)
                if secret:
                    operations.append((key_name(name), secret))
                if entry.stored_as and entry.stored_as != name:
                    operations.append((key_name(entry.stored_as), None))
            operations += [
                (key_name(gone.stored_as), None) for gone in entry_list.removed if gone.stored_as
            ]
            if any(secret for _, secret in operations) and not store.available:
                self._show_keychain(store)
                self.tabs.setCurrentWidget(entry_list)
                entry_list.show_error(
                    -1,
                    f"{store.describe()} Tick the box below to keep keys in a plain-text file, "
                    "or leave the key fields empty.",
                )
                return False
            try:
                for name, secret in operations:
                    if secret is None:
                        await asyncio.to_thread(store.delete, name)
                    else:
                        await asyncio.to_thread(store.set, name, secret)
            except SecretStoreError as error:
                entry_list.show_error(-1, str(error))
                return False
        return True

    def _show_issue(self, location: tuple[int | str, ...], message: str) -> None:
        if location[:1] == ("cloud",):
            lists = {"providers": self.providers, "servers": self.servers}
            entry_list = lists.get(str(location[1]) if len(location) > 1 else "", self.providers)
            index = location[2] if len(location) > 2 and isinstance(location[2], int) else -1
            field = ".".join(str(part) for part in location[3:])
            entry_list.show_error(index, f"{field}: {message}" if field else message)
            self.tabs.setCurrentWidget(entry_list)
        elif location[:1] == ("library",):
            key = ".".join(str(part) for part in location)
            self._show(key if key in self.errors else "library", message)
            self.tabs.setCurrentWidget(self.library)
        elif location[:1] == ("routing",):
            self._show("routing", f"{'.'.join(str(part) for part in location[1:])}: {message}")
            self.tabs.setCurrentIndex(3)
        else:
            self._show(".".join(str(part) for part in location), message)
            self.tabs.setCurrentIndex(0)

    def _report_failure(self, error: BaseException) -> None:
        self.failure.setStyleSheet(error_style(self.palette()))
        self.failure.setText(f"Failed: {error}")
        self.failure.show()

    def _show(self, key: str, message: str) -> None:
        label = self.errors.get(key) or self.errors["local.chat_model"]
        label.setText(message)
        label.show()
