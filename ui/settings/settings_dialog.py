"""Settings as pages: the interface's language, the local model (with the Models manager built
in), cloud providers and MCP servers with keychain-held keys, routing and privacy, the library,
integrations and the advanced limits. Invalid values are refused with the reason next to their
field, on its page; valid ones are saved and applied without a restart (the model reloads on
the next question; the language applies at the next start).
"""

from __future__ import annotations

import asyncio
import importlib
from functools import partial
from typing import Any

from pydantic import ValidationError
from PySide6.QtCore import QT_TRANSLATE_NOOP, Qt, Signal
from PySide6.QtGui import QIcon
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QFileDialog,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QListWidget,
    QMenu,
    QPushButton,
    QSpinBox,
    QStackedWidget,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from app.bootstrap import Docent
from app.catalog import ModelError
from app.cloud.presets import PRESETS, ProviderPreset
from app.cloud.pricing import PriceTable, PriceTableError
from app.errors import DocentError
from app.index.shared import library_key
from app.llm.chat_model import chat_model_config
from app.secrets import (
    SecretStore,
    SecretStoreError,
    model_server_key,
    provider_key,
    server_key,
)
from app.settings import McpServerSettings, ProviderSettings, Settings
from ui.background import Background
from ui.library.watched_folders import WatchedFoldersPage
from ui.plain import plain_label
from ui.settings.cloud_settings import (
    PROVIDER_FIELDS,
    SERVER_FIELDS,
    Entry,
    EntryList,
    KeychainNotice,
)
from ui.settings.mcp_serving import ServingPage
from ui.settings.model_checklist import ModelChecklist
from ui.settings.model_manager import ModelManager
from ui.settings.routing_page import RoutingPage
from ui.settings.server_model import ServerModelBox
from ui.settings.shared_library import SharedLibraryBox
from ui.theme import error_style

# (section, field, label, minimum, maximum); the label is marked for translation in the dialog's
# context (QT_TRANSLATE_NOOP returns it as an object) and translated where it is shown.
Number = tuple[str, str, object, int, int]
# 0 threads means "as many as the CPU has".
_LOCAL: tuple[Number, ...] = (
    (
        "local",
        "n_threads",
        QT_TRANSLATE_NOOP("SettingsDialog", "CPU threads (0 = all cores)"),
        0,
        512,
    ),
)
# What a user rarely changes: the prompt's size and the document reader's limits.
_ADVANCED: tuple[Number, ...] = (
    ("local", "n_ctx", QT_TRANSLATE_NOOP("SettingsDialog", "Context size (tokens)"), 0, 262144),
    (
        "local",
        "max_tokens",
        QT_TRANSLATE_NOOP("SettingsDialog", "Longest answer (tokens)"),
        0,
        8192,
    ),
    ("retrieval", "top_k", QT_TRANSLATE_NOOP("SettingsDialog", "Passages per question"), 0, 20),
    (
        "retrieval",
        "context_tokens",
        QT_TRANSLATE_NOOP("SettingsDialog", "Source text per prompt (tokens)"),
        0,
        32768,
    ),
    (
        "library",
        "parse_timeout_s",
        QT_TRANSLATE_NOOP("SettingsDialog", "Longest time to read one document (s)"),
        0,
        86400,
    ),
    (
        "library",
        "parse_memory_mb",
        QT_TRANSLATE_NOOP("SettingsDialog", "Most memory to read one document (MB)"),
        0,
        1048576,
    ),
    (
        "library",
        "max_unpacked_mb",
        QT_TRANSLATE_NOOP("SettingsDialog", "Most an EPUB or XPS unpacks to (MB)"),
        0,
        1048576,
    ),
)


class SettingsDialog(QDialog):
    """Signals: applied() — after valid settings were saved and applied; speed_checked() —
    after "Measure again" measured this computer's speed and saved the choice made from it."""

    applied = Signal()
    speed_checked = Signal()

    def __init__(
        self, docent: Docent, parent: QWidget | None = None, serving_token: str | None = None
    ) -> None:
        """`serving_token`: the bearer token of the app's running MCP server, for the snippet."""
        super().__init__(parent)
        self.docent = docent
        self.background = Background(self._report_failure)
        self.setWindowTitle(self.tr("Docent settings"))
        self.errors: dict[str, QLabel] = {}
        self.numbers: dict[str, QSpinBox] = {}
        settings = docent.settings
        self.page_list = QListWidget()
        self.page_list.setAccessibleName(self.tr("Settings pages"))
        self.page_list.setFixedWidth(170)
        self.page_list.setSpacing(3)
        self.pages = QStackedWidget()
        self._cloud_lists(settings)
        self.routing = RoutingPage(
            settings.routing, docent.desk, self.background, self._error_label("routing")
        )
        self.library = WatchedFoldersPage(
            settings.library.watched_folders, self._error_label("library")
        )
        self.shared_library = SharedLibraryBox(docent, settings.library.shared_url, self.background)
        self.library.rows.insertWidget(0, self.shared_library)
        self.library.rows.insertWidget(1, self._error_label("library.shared_url"))
        self.serving = ServingPage(settings.serve_mcp, serving_token)
        self.integrations = QTabWidget()
        self.integrations.addTab(self.servers, self.tr("MCP servers"))
        self.integrations.addTab(self.serving, self.tr("Serve over MCP"))
        for title, page in (
            (self.tr("General"), self._general_page(settings.language)),
            (self.tr("Local model"), self._local_page()),
            (self.tr("Cloud providers"), self.providers),
            (self.tr("Routing & privacy"), self.routing),
            (self.tr("Library"), self.library),
            (self.tr("Integrations"), self.integrations),
            (self.tr("Advanced"), self._advanced_page()),
        ):
            self.page_list.addItem(title)
            self.pages.addWidget(page)
        self.page_list.currentRowChanged.connect(self.pages.setCurrentIndex)
        self.pages.currentChanged.connect(self.page_list.setCurrentRow)
        self.page_list.setCurrentRow(0)
        buttons = QDialogButtonBox(
            QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel
        )
        for button in buttons.buttons():
            button.setIcon(QIcon())  # some styles add a tick and a cross used nowhere else
        buttons.accepted.connect(self.submit)
        buttons.rejected.connect(self.reject)
        body = QHBoxLayout()
        body.addWidget(self.page_list)
        body.addWidget(self.pages, 1)
        layout = QVBoxLayout(self)
        layout.addLayout(body, 1)
        self.failure = plain_label()  # background work that failed unexpectedly
        self.failure.setWordWrap(True)
        self.failure.hide()
        layout.addWidget(self.failure)
        layout.addWidget(buttons)
        self.resize(1000, 680)
        self.applying: asyncio.Task[bool] | None = None
        self.fetching: asyncio.Task[None] | None = None
        self.loading = self.background.run(self._load())

    @property
    def tabs(self) -> QStackedWidget:
        """The pages, under the name the window and the screenshots use."""
        return self.pages

    def reveal(self, widget: QWidget) -> None:
        """Show the page, and the tab within it, that holds `widget`."""
        for container in (self.pages, self.integrations):
            for index in range(container.count()):
                page = container.widget(index)
                if page is not None and (page is widget or page.isAncestorOf(widget)):
                    container.setCurrentIndex(index)

    def _general_page(self, language: str) -> QWidget:
        self.language = QComboBox()
        self.language.setAccessibleName(self.tr("Language"))
        for code, name in (
            ("system", self.tr("As the system")),
            ("en", "English"),  # each language named in itself
            ("zh_CN", "简体中文"),
        ):
            self.language.addItem(name, code)
        self.language.setCurrentIndex(self.language.findData(language))
        note = QLabel(self.tr("Docent speaks the new language from its next start."))
        note.setWordWrap(True)
        form = QFormLayout()
        form.addRow(self.tr("Language"), self.language)
        form.addRow("", note)
        page = QWidget()
        page.setLayout(form)
        return page

    def _local_page(self) -> QWidget:
        docent = self.docent
        self.model = QLineEdit(docent.settings.local.chat_model)
        self.model.setAccessibleName(self.tr("Chat model"))
        browse = QPushButton(self.tr("Browse…"))
        browse.clicked.connect(self._choose_model)
        model_row = QHBoxLayout()
        model_row.addWidget(self.model, 1)
        model_row.addWidget(browse)
        form = QFormLayout()
        form.addRow(self.tr("Chat model (catalog name or GGUF file)"), model_row)
        form.addRow("", self._error_label("local.chat_model"))
        self.speed = plain_label(docent.describe_speed())
        self.speed.setWordWrap(True)
        self.measure_button = QPushButton(self.tr("Measure again"))
        self.measure_button.setToolTip(
            self.tr("Time the bundled model on this computer (a few seconds) and choose the "
                    "default chat model from its speed; a model you chose yourself is kept")
        )  # fmt: skip
        self.measure_button.clicked.connect(self.measure_speed)
        self.measuring: asyncio.Task[None] | None = None
        speed_column = QVBoxLayout()
        speed_column.addWidget(self.speed)
        speed_column.addWidget(self.measure_button, alignment=Qt.AlignmentFlag.AlignLeft)
        form.addRow(self.tr("This computer's speed"), speed_column)
        state = docent.chat.state
        self.engine = plain_label(
            self.tr("Runs on: {state}").format(state=state.describe())
            if state
            else self.tr("Starts with the first question.")
        )
        self.engine.setWordWrap(True)
        self.normal_button = QPushButton(self.tr("Try the normal settings again"))
        self.normal_button.setToolTip(
            self.tr("Forget the safe settings Docent chose after the model crashed here; the "
                    "next question loads it with the normal ones")
        )  # fmt: skip
        self.normal_button.clicked.connect(self.normal_settings)
        if (mode := docent.chat.safe_mode()) is not None:
            if state is None:
                self.engine.setText(
                    self.tr("The local model runs with {mode}.").format(mode=mode.describe())
                )
        else:
            self.normal_button.hide()
        engine_column = QVBoxLayout()
        engine_column.addWidget(self.engine)
        engine_column.addWidget(self.normal_button, alignment=Qt.AlignmentFlag.AlignLeft)
        form.addRow(self.tr("How it runs here"), engine_column)
        self._number_rows(form, _LOCAL)
        self.use_gpu = QCheckBox(self.tr("Use the GPU (Metal or CUDA builds)"))
        self.use_gpu.setChecked(docent.settings.local.n_gpu_layers != 0)
        form.addRow("", self.use_gpu)
        self.models = ModelManager(docent, embedded=True)
        self.models.switched.connect(self.model.setText)  # OK then keeps the switch
        self.server = ServerModelBox(docent.settings.local.server, self.background)
        page = QWidget()
        column = QVBoxLayout(page)
        column.addLayout(form)
        column.addWidget(self.server)
        column.addWidget(self._error_label("local.server"))
        column.addWidget(self.models, 1)
        return page

    def _advanced_page(self) -> QWidget:
        form = QFormLayout()
        self._number_rows(form, _ADVANCED)
        page = QWidget()
        page.setLayout(form)
        return page

    def normal_settings(self) -> asyncio.Task[None]:
        self.normal_button.setEnabled(False)
        return self.background.run(self._normal_settings())

    async def _normal_settings(self) -> None:
        await self.docent.chat.normal_settings()
        self.engine.setText(
            self.tr("Normal settings: the next question loads the model with them.")
        )
        self.normal_button.hide()
        self.normal_button.setEnabled(True)

    def measure_speed(self) -> asyncio.Task[None] | None:
        if self.measuring is not None:
            return None
        self.measure_button.setEnabled(False)
        self.speed.setText(self.tr("Measuring (a few seconds)…"))
        self.measuring = self.background.run(self._measure_speed())
        return self.measuring

    async def _measure_speed(self) -> None:
        try:
            await self.docent.check_speed()
        except DocentError as error:
            self.speed.setText(
                self.tr("Docent could not measure this computer's speed: {error}").format(
                    error=error
                )
            )
        else:
            self.speed.setText(self.docent.describe_speed())
            self.models.refresh()  # its predictions and recommendation come from the check
            self.speed_checked.emit()
        finally:
            self.measure_button.setEnabled(True)
            self.measuring = None

    def _number_rows(self, form: QFormLayout, numbers: tuple[Number, ...]) -> None:
        for section, name, label, low, high in numbers:
            box = QSpinBox()
            box.setAccessibleName(self.tr(str(label)))
            box.setMaximumWidth(160)  # a number, not a line of text
            box.setRange(low, high)
            value = getattr(getattr(self.docent.settings, section), name)
            box.setValue(0 if value is None else int(value))
            self.numbers[f"{section}.{name}"] = box
            form.addRow(self.tr(str(label)), box)
            form.addRow("", self._error_label(f"{section}.{name}"))

    def _cloud_lists(self, settings: Settings) -> None:
        consent = settings.secrets.plaintext_file_consent
        self.providers = EntryList(
            self.tr("OpenAI-compatible providers"),
            PROVIDER_FIELDS,
            {"name": "", "base_url": "https://", "models": []},
        )
        self.servers = EntryList(
            self.tr("MCP servers"),
            SERVER_FIELDS,
            McpServerSettings.model_construct(name="", models=[]).model_dump(),
        )
        # Keys are kept for these two pages' entries only: the notice is on them, and nowhere else.
        notices = KeychainNotice(consent), KeychainNotice(consent)
        self.provider_notice, self.server_notice = notices
        self.keychain, self.consent = self.provider_notice.text, self.provider_notice.consent
        for notice, other in (notices, notices[::-1]):
            notice.consent_changed.connect(other.consent.setChecked)
        self.providers.footer.addWidget(self.provider_notice)
        self.servers.footer.addWidget(self.server_notice)
        self.providers.add_button.setText(self.tr("Add provider"))
        presets = QMenu(self.providers.add_button)
        for preset in PRESETS:
            presets.addAction(preset.title, partial(self.add_provider, preset))
        self.providers.add_button.setMenu(presets)
        models = self.providers.widgets["models"]
        assert isinstance(models, ModelChecklist)
        self.provider_models = models
        self.provider_models.fetch_requested.connect(self.fetch_models)
        self.providers.test_button.clicked.connect(lambda: self.test_connection(self.providers))
        self.servers.test_button.clicked.connect(lambda: self.test_connection(self.servers))
        self.testing: asyncio.Task[None] | None = None
        self.providers.load([Entry(item.model_dump()) for item in settings.cloud.providers])
        self.servers.load([Entry(item.model_dump()) for item in settings.cloud.servers])

    def add_provider(self, preset: ProviderPreset) -> None:
        """A new provider with the preset's name and base URL; its key and models to fill in."""
        self.providers.add({"name": preset.name, "base_url": preset.base_url or "https://"})
        # A local server needs no key: its models come next.
        self.providers.widgets["models" if preset.local else "key"].setFocus()

    def fetch_models(self) -> asyncio.Task[None] | None:
        """Ask the selected provider which models it serves (GET …/models), to tick."""
        entry = self.providers.selected()
        if entry is None or self.fetching is not None:  # one at a time (the button is off)
            return None
        self.fetching = self.background.run(self._fetch(entry))
        return self.fetching

    async def _fetch(self, entry: Entry) -> None:
        checklist = self.provider_models
        checklist.fetch_button.setEnabled(False)
        checklist.say(self.tr("Asking {url} for its models…").format(url=entry.values["base_url"]))
        try:
            # The MCP SDK loads with the probe, off the GUI thread: it would slow every start-up.
            probes = await asyncio.to_thread(importlib.import_module, "app.cloud.probe")
            listing = await probes.list_models(
                entry.values["base_url"], entry.new_key or entry.stored_key
            )
        finally:
            checklist.fetch_button.setEnabled(True)
            self.fetching = None
        if self.providers.selected() is entry:  # not another provider's list by then
            if listing.error:
                checklist.fetch_failed(listing.error)
            else:
                checklist.offer(listing.models)

    async def _load(self) -> None:
        """Find the keychain and which entries already have a key (shown masked), and read the
        price table the providers' models are shown with."""
        try:
            self.provider_models.prices = await asyncio.to_thread(
                PriceTable.load, self.docent.paths.config_dir
            )
        except PriceTableError as error:
            self._report_failure(error)
        store = await self.docent.secret_store()
        self._show_keychain(store)
        self.server.show_stored_key(await asyncio.to_thread(store.get, model_server_key()))
        if url := self.shared_library.value():
            self.shared_library.show_stored_password(
                await asyncio.to_thread(store.get, library_key(url))
            )
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
        entry_list.test_result.setText(self.tr("Testing…"))
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
            entry_list.test_result.setText(
                self.tr("Fix this first: {problem}").format(problem=f"{where}{first['msg']}")
            )
            return
        entry_list.test_result.setText(probe.describe())

    def _show_keychain(self, store: SecretStore) -> None:
        self.provider_notice.show_store(store)
        self.server_notice.show_store(store)

    def _error_label(self, key: str) -> QLabel:
        label = plain_label()  # errors quote values: paths, names
        label.setStyleSheet(error_style(self.palette()))
        label.setWordWrap(True)
        label.hide()
        self.errors[key] = label
        return label

    def _choose_model(self) -> None:
        name, _ = QFileDialog.getOpenFileName(
            self, self.tr("Chat model"), "", self.tr("GGUF models (*.gguf)")
        )
        if name:
            self.model.setText(name)

    def candidate(self) -> dict[str, Any]:
        raw = self.docent.settings.model_dump()
        raw["local"]["chat_model"] = self.model.text().strip()
        raw["local"]["server"] = self.server.values()
        for key, box in self.numbers.items():
            section, name = key.split(".")
            value: int | None = box.value()
            if key == "local.n_threads" and value == 0:
                value = None
            raw[section][name] = value
        raw["local"]["n_gpu_layers"] = (
            (self.docent.settings.local.n_gpu_layers or -1) if self.use_gpu.isChecked() else 0
        )  # a partial offload set in the settings file is kept while the GPU stays in use
        raw["cloud"] = {"providers": self.providers.values(), "servers": self.servers.values()}
        raw["routing"] = self.routing.values()
        raw["secrets"] = {"plaintext_file_consent": self.consent.isChecked()}
        raw["library"]["watched_folders"] = self.library.values()
        raw["library"]["shared_url"] = self.shared_library.value()
        raw["serve_mcp"] = self.serving.values()
        raw["language"] = self.language.currentData()
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
        typed = (
            ("local.server", model_server_key(), self.server.new_key),
            # A shared library's password belongs to its URL (typed for none: nowhere to go).
            (
                "library.shared_url",
                library_key(settings.library.shared_url),
                self.shared_library.new_password if settings.library.shared_url else None,
            ),
        )
        for error_key, name, secret in typed:
            if secret is None:
                continue
            if not store.available:
                self._show(error_key, store.describe())
                return False
            try:
                await asyncio.to_thread(store.set, name, secret)
            except SecretStoreError as error:
                self._show(error_key, str(error))
                return False
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
                self.reveal(entry_list)
                entry_list.show_error(
                    -1,
                    self.tr(
                        "{keychain} Tick the box below to keep keys in a plain-text file, or "
                        "leave the key fields empty."
                    ).format(keychain=store.describe()),
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
            self.reveal(entry_list)
        elif location[:2] == ("local", "server"):
            field = ".".join(str(part) for part in location[2:])
            self._show("local.server", f"{field}: {message}" if field else message)
        elif location[:1] == ("routing",):
            self._show("routing", f"{'.'.join(str(part) for part in location[1:])}: {message}")
        else:
            key = ".".join(str(part) for part in location)
            self._show(
                key if key in self.errors or location[:1] != ("library",) else "library", message
            )

    def _report_failure(self, error: BaseException) -> None:
        self.failure.setStyleSheet(error_style(self.palette()))
        self.failure.setText(self.tr("Failed: {error}").format(error=error))
        self.failure.show()

    def _show(self, key: str, message: str) -> None:
        label = self.errors.get(key) or self.errors["local.chat_model"]
        label.setText(message)
        label.show()
        self.reveal(label)

    def done(self, result: int) -> None:
        self.models.pause()  # a download started here is kept, to resume; never left running
        super().done(result)
