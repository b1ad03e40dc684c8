"""The bar above the conversation: its title, and where the next answers run (Auto, This
computer only, Cloud only), chosen here rather than deep in Settings."""

from __future__ import annotations

import asyncio

from PySide6.QtCore import Signal
from PySide6.QtGui import QAction, QActionGroup, QFont
from PySide6.QtWidgets import QHBoxLayout, QMenu, QSizePolicy, QToolButton, QWidget

from app.bootstrap import Docent
from ui.background import Background
from ui.plain import plain_label, plain_tooltip
from ui.route_words import reason_words

MODES = ("auto", "local", "cloud")


class ConversationHeader(QWidget):
    """Signals: mode_changed(str) — the routing mode was saved and is in effect;
    settings_requested() — "Set up a cloud model…" was chosen."""

    mode_changed = Signal(str)
    settings_requested = Signal()

    def __init__(self, docent: Docent, background: Background) -> None:
        super().__init__()
        self.docent = docent
        self.background = background
        self.title = plain_label()
        self.title.setAccessibleName(self.tr("Conversation title"))
        font = QFont(self.title.font())
        font.setPointSizeF(font.pointSizeF() * 1.15)
        font.setBold(True)
        self.title.setFont(font)
        self.title.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
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
        layout = QHBoxLayout(self)
        layout.setContentsMargins(12, 6, 12, 0)  # the cards' side margins
        layout.addWidget(self.title, 1)
        layout.addWidget(self.route)
        self.saving: asyncio.Task[None] | None = None
        self.show_title("")
        self.show_choices()

    def _words(self) -> tuple[str, str, str]:
        return (
            self.tr("Auto: Docent decides"),
            self.tr("This computer only"),
            self.tr("Cloud only"),
        )

    def show_title(self, title: str) -> None:
        self.title.setText(title or self.tr("New conversation"))

    def show_choices(self) -> None:
        """The mode in effect ticked and on the button; "Cloud only" off, saying why, where
        the router could send nothing to the cloud."""
        settings = self.docent.settings
        mode = settings.routing.mode
        auto, local, cloud = self._words()
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
            auto if why is None else self.tr("{mode} (on this computer for now)").format(mode=auto)
        )
        self.set_up.setVisible(not settings.cloud.configured)
        self.route.setToolTip(
            plain_tooltip(
                self.tr("Where the next answers run: {mode}").format(
                    mode=self.actions_by_mode[mode].text()
                )
            )
        )

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
