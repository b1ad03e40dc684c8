"""The bar above the conversation: its title, this month's cloud spending against the budget
(a small meter, once a cloud is set up), and where the next answers run (Auto, This computer
only — or Your model server only, where the local route runs there —, Cloud only), chosen here
rather than deep in Settings."""

from __future__ import annotations

import asyncio

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QAction, QActionGroup, QFont
from PySide6.QtWidgets import (
    QHBoxLayout,
    QMenu,
    QProgressBar,
    QToolButton,
    QWidget,
)

from app.bootstrap import Docent
from ui.background import Background
from ui.looks import MutedLabel
from ui.plain import ElidedLabel, plain_tooltip
from ui.route_words import reason_words
from ui.theme import warning_colour

MODES = ("auto", "local", "cloud")
METER_WIDTH = 64  # px: a glance at the month, not a chart


class ConversationHeader(QWidget):
    """Signals: mode_changed(str) — the routing mode was saved and is in effect;
    settings_requested() — "Set up a cloud model…" was chosen."""

    mode_changed = Signal(str)
    settings_requested = Signal()

    def __init__(self, docent: Docent, background: Background) -> None:
        super().__init__()
        self.docent = docent
        self.background = background
        self.title = ElidedLabel()  # a long first question, beside the budget meter: "…"
        self.title.setAccessibleName(self.tr("Conversation title"))
        font = QFont(self.title.font())
        font.setPointSizeF(font.pointSizeF() * 1.15)
        font.setBold(True)
        self.title.setFont(font)
        self.route = QToolButton()
        self.route.setPopupMode(QToolButton.ToolButtonPopupMode.InstantPopup)
        self.route.setAccessibleName(self.tr("Where answers run"))
        self.menu = QMenu(self.route)
        self.menu.setToolTipsVisible(True)
        self.modes = QActionGroup(self)
        self.actions_by_mode: dict[str, QAction] = {}
        for mode, words in zip(MODES, self._words(), strict=True):
            action = self.menu.addAction(words)
            action.setCheckable(True)
            action.setData(mode)
            self.modes.addAction(action)
            self.actions_by_mode[mode] = action
        self.menu.addSeparator()
        self.set_up = self.menu.addAction(self.tr("Set up a cloud model…"))
        self.set_up.triggered.connect(self.settings_requested)
        self.modes.triggered.connect(lambda action: self.choose(str(action.data())))
        self.menu.aboutToShow.connect(self.show_choices)  # health and spending change live
        self.route.setMenu(self.menu)
        self.spent = MutedLabel()
        self.meter = QProgressBar()
        self.meter.setRange(0, 1000)
        self.meter.setTextVisible(False)
        self.meter.setFixedSize(METER_WIDTH, 6)
        self.spending = QWidget()
        self.spending.setAccessibleName(self.tr("Cloud spending this month"))
        spending = QHBoxLayout(self.spending)
        spending.setContentsMargins(0, 0, 0, 0)
        spending.addWidget(self.spent)
        spending.addWidget(self.meter, 0, Qt.AlignmentFlag.AlignVCenter)
        layout = QHBoxLayout(self)
        layout.setContentsMargins(12, 6, 12, 0)  # the cards' side margins
        layout.addWidget(self.title, 1)
        layout.addWidget(self.spending)
        layout.addSpacing(8)
        layout.addWidget(self.route)
        self.saving: asyncio.Task[None] | None = None
        self.show_title("")
        self.show_choices()  # and the spending

    @property
    def _on_server(self) -> bool:
        """The local route runs on the user's model server: "this computer" would be false."""
        return self.docent.settings.local.server.enabled

    def _words(self) -> tuple[str, str, str]:
        return (
            self.tr("Auto: Docent decides"),
            self.tr("Your model server only") if self._on_server else self.tr("This computer only"),
            self.tr("Cloud only"),
        )

    def show_title(self, title: str) -> None:
        self.title.set_full_text(title or self.tr("New conversation"))

    def show_choices(self) -> None:
        """The mode in effect ticked and on the button; "Cloud only" off, saying why, where
        the router could send nothing to the cloud."""
        settings = self.docent.settings
        mode = settings.routing.mode
        auto, local, cloud = self._words()
        self.actions_by_mode["local"].setText(local)  # a model server set up or removed
        self.actions_by_mode[mode].setChecked(True)
        self.route.setText({"auto": auto, "local": local, "cloud": cloud}[mode])
        refusal = self.docent.desk.cloud_refusal()
        why = None if refusal is None else reason_words(refusal)
        cloud_only = self.actions_by_mode["cloud"]
        cloud_only.setEnabled(why is None)
        cloud_only.setText(
            cloud if why is None else self.tr("{mode} — {why}").format(mode=cloud, why=why)
        )
        cloud_only.setToolTip(plain_tooltip(why or ""))
        self.actions_by_mode["auto"].setText(
            auto
            if why is None
            else (
                self.tr("{mode} (on your model server for now)")
                if self._on_server
                else self.tr("{mode} (on this computer for now)")
            ).format(mode=auto)
        )
        self.set_up.setVisible(not settings.cloud.configured)
        self.route.setToolTip(
            plain_tooltip(
                self.tr("Where the next answers run: {mode}").format(
                    mode=self.actions_by_mode[mode].text()
                )
            )
        )
        self.show_spending()  # a cloud set up or removed, a budget changed

    def show_spending(self) -> None:
        """This month's cloud spending against the budget, where a cloud is set up (without
        one there is nothing to spend, and no money shows)."""
        configured = self.docent.settings.cloud.configured
        self.spending.setVisible(configured)
        if not configured:
            return
        budget = self.docent.desk.budget
        spent, monthly = budget.spent.known_usd, budget.monthly_usd
        share = spent / monthly if monthly > 0 else float(spent > 0)
        self.spent.setText(
            self.tr("{spent} of {budget}").format(spent=_dollars(spent), budget=f"${monthly:g}")
        )
        self.meter.setValue(round(min(share, 1.0) * 1000))
        # Spent: the bar in the warning colour (the router keeps every answer here meanwhile).
        self.meter.setStyleSheet(
            f"QProgressBar::chunk {{ background: {warning_colour(self.palette()).name()}; }}"
            if share >= 1
            else ""
        )
        tip = self.tr("Cloud spending this month: {spent} of the {budget} budget ({share})").format(
            spent=_dollars(spent), budget=f"${monthly:.2f}", share=f"{share:.0%}"
        )
        if unpriced := budget.spent.unpriced:
            tip += "\n" + (
                self.tr("and 1 answer of unknown cost")
                if unpriced == 1
                else self.tr("and {n} answers of unknown cost").format(n=unpriced)
            )
        if share >= 1:
            tip += "\n" + (
                self.tr("The budget is spent: answers stay on your model server.")
                if self._on_server
                else self.tr("The budget is spent: answers stay on this computer.")
            )
        self.spending.setToolTip(plain_tooltip(tip))
        self.spending.setAccessibleDescription(tip)

    def choose(self, mode: str) -> asyncio.Task[None]:
        """Save the routing mode and put it in effect, as Settings → OK does."""
        self.saving = self.background.run(self._save(mode))
        return self.saving

    async def _save(self, mode: str) -> None:
        current = self.docent.settings
        routing = current.routing.model_copy(update={"mode": mode})
        settings = current.model_copy(update={"routing": routing})
        await asyncio.to_thread(settings.save, self.docent.paths.settings_file)
        await self.docent.apply_settings(settings)
        self.show_choices()
        self.mode_changed.emit(mode)


def _dollars(amount: float) -> str:
    """Cents, as the sidebar counts them; a fraction of a cent is not shown as free."""
    return "<$0.01" if 0 < amount < 0.01 else f"${amount:.2f}"
