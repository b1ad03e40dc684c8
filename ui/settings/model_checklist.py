"""A provider's models as a checklist: the ones it serves (fetched from it) to tick, any other
typed by hand, and each with its price from the price table, or a warning that its cost is
unknown (such answers are counted against the budget as unknown, never as free)."""

from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QHBoxLayout,
    QLineEdit,
    QListWidget,
    QListWidgetItem,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from app.cloud.pricing import PriceTable
from ui.plain import plain_label

MODEL = Qt.ItemDataRole.UserRole  # an item's model name (its text also carries the price)


class ModelChecklist(QWidget):
    """Signals: fetch_requested() — "Fetch models": the owner asks the provider (it knows the
    base URL and the key) and calls `offer` or `fetch_failed`."""

    fetch_requested = Signal()

    def __init__(self) -> None:
        super().__init__()
        self.provider = ""  # prices are listed as provider/model
        self.prices: PriceTable | None = None  # read off the GUI thread, then set
        self.list = QListWidget()
        self.list.setAccessibleName(self.tr("Models this provider answers with"))
        self.list.setMinimumHeight(110)
        self.typed = QLineEdit()
        self.typed.setPlaceholderText(self.tr("Another model, by name"))
        self.typed.setAccessibleName(self.tr("Model name to add"))
        self.typed.returnPressed.connect(self.add_typed)
        add = QPushButton(self.tr("Add"))
        add.setAccessibleName(self.tr("Add the model typed"))
        add.clicked.connect(self.add_typed)
        self.fetch_button = QPushButton(self.tr("Fetch models"))
        self.fetch_button.setToolTip(self.tr("Ask the provider which models it serves"))
        self.fetch_button.clicked.connect(self.fetch_requested)
        self.status = plain_label()  # a server's own error text
        self.status.setWordWrap(True)
        self.status.hide()
        row = QHBoxLayout()
        row.addWidget(self.typed, 1)
        row.addWidget(add)
        row.addWidget(self.fetch_button)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.list)
        layout.addLayout(row)
        layout.addWidget(self.status)

    def set_models(self, ticked: list[str]) -> None:
        """The entry's models, ticked; what an earlier fetch offered is the previous entry's."""
        self.list.clear()
        self.status.hide()
        for model in ticked:
            self._add(model, ticked=True)

    def ticked(self) -> list[str]:
        return [
            str(item.data(MODEL))
            for item in self._items()
            if item.checkState() == Qt.CheckState.Checked
        ]

    def offer(self, served: tuple[str, ...] | None) -> None:
        """The models the provider serves, unticked beside those already chosen."""
        if served is None:
            self.say(self.tr("The provider answered but does not list its models: type them."))
            return
        present = {item.data(MODEL) for item in self._items()}
        for model in served:
            if model not in present:
                self._add(model, ticked=False)
        self.say(
            self.tr("{n} models served: tick the ones Docent may use.").format(n=len(served))
            if len(served) != 1
            else self.tr("1 model served: tick it if Docent may use it.")
        )

    def fetch_failed(self, why: str) -> None:
        self.say(self.tr("Could not fetch the models: {why}.").format(why=why))

    def add_typed(self) -> None:
        model = self.typed.text().strip()
        if not model:
            return
        for item in self._items():
            if item.data(MODEL) == model:
                item.setCheckState(Qt.CheckState.Checked)
                break
        else:
            self._add(model, ticked=True)
        self.typed.clear()

    def set_provider(self, name: str) -> None:
        self.provider = name
        self.show_prices()

    def show_prices(self) -> None:
        for item in self._items():
            item.setText(self._label(str(item.data(MODEL))))

    def price_note(self, model: str) -> str:
        """The model's price per million tokens, or the warning that its cost is unknown."""
        if self.prices is None:
            return ""
        price = self.prices.find(f"{self.provider}/{model}")
        if price is None:
            return self.tr("⚠ no price: cost unknown")
        return self.tr("${input:g} in, ${output:g} out per million tokens").format(
            input=price.input_per_million, output=price.output_per_million
        )

    def _label(self, model: str) -> str:
        note = self.price_note(model)
        return f"{model}  —  {note}" if note else model

    def _add(self, model: str, *, ticked: bool) -> None:
        item = QListWidgetItem(self._label(model))
        item.setData(MODEL, model)
        item.setFlags(item.flags() | Qt.ItemFlag.ItemIsUserCheckable)
        item.setCheckState(Qt.CheckState.Checked if ticked else Qt.CheckState.Unchecked)
        self.list.addItem(item)

    def _items(self) -> list[QListWidgetItem]:
        return [self.list.item(row) for row in range(self.list.count())]

    def say(self, text: str) -> None:
        self.status.setText(text)
        self.status.show()
