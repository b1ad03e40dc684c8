"""The drop overlay says what a drag will add before the drop, from the dragged items alone."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QSize
from PySide6.QtWidgets import QWidget
from pytestqt.qtbot import QtBot

from ui.window.drop_overlay import DropOverlay, DropSummary


def dragged(tmp_path: Path) -> list[Path]:
    (tmp_path / "notes").mkdir()
    names = ("report.pdf", "minutes.md", "setup.exe")
    for name in names:
        (tmp_path / name).write_bytes(b"x")
    return [tmp_path / name for name in (*names, "notes")]


def test_documents_folders_and_other_files_are_counted_apart(tmp_path: Path) -> None:
    summary = DropSummary.of(dragged(tmp_path))
    assert summary == DropSummary(documents=2, folders=1, others=1)
    assert summary.describe() == (
        "Drop to add 2 documents and 1 folder to your library\n"
        "and 1 file of another type, added only if it is a document"
    )


def test_a_lone_document_and_files_of_unknown_type_are_worded_for_what_they_are(
    tmp_path: Path,
) -> None:
    *_, exe, _ = dragged(tmp_path)
    assert DropSummary.of([tmp_path / "report.pdf"]).describe() == (
        "Drop to add 1 document to your library"
    )
    assert DropSummary.of([exe]).describe() == (
        "Drop to add 1 file: Docent reads each to see if it is a document"
    )


def test_the_overlay_covers_its_target_and_follows_its_size(qtbot: QtBot, tmp_path: Path) -> None:
    target = QWidget()
    qtbot.addWidget(target)
    target.resize(400, 300)
    target.show()
    overlay = DropOverlay(target)
    assert overlay.isHidden()
    overlay.show_for(dragged(tmp_path))
    assert overlay.isVisible()
    assert "2 documents and 1 folder" in overlay.label.text()
    assert overlay.geometry() == target.rect()
    target.resize(QSize(600, 500))
    qtbot.waitUntil(lambda: overlay.size() == QSize(600, 500))
