"""Which files a dropped or watched folder holds: links lead nowhere outside it, loops are cut."""

from __future__ import annotations

import os
from pathlib import Path

from app.intake.folders import collect_files


def tree(root: Path) -> tuple[Path, Path]:
    """A chosen folder with documents, a hidden one, and an outside folder with a secret."""
    chosen = root / "chosen"
    (chosen / "sub").mkdir(parents=True)
    (chosen / "notes.md").write_text("# Notes\n")
    (chosen / "sub" / "plan.txt").write_text("Plan.\n")
    (chosen / ".hidden.md").write_text("# Hidden\n")
    (chosen / "song.mp3").write_bytes(b"ID3")  # not a document
    (chosen / "~$notes.docx").write_bytes(b"\x04user" + bytes(157))  # Word's owner file
    outside = root / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text("Not for the index.\n")
    return chosen, outside


def test_links_out_of_a_dropped_folder_are_skipped_with_a_reason(tmp_path: Path) -> None:
    chosen, outside = tree(tmp_path)
    (chosen / "link.txt").symlink_to("/etc/passwd")
    (chosen / "secret.txt").symlink_to(outside / "secret.txt")
    (chosen / "elsewhere").symlink_to(outside, target_is_directory=True)

    collected = collect_files([chosen])

    assert collected.files == [chosen / "notes.md", chosen / "sub" / "plan.txt"]
    skipped = dict(collected.skipped)
    assert set(skipped) == {chosen / "link.txt", chosen / "secret.txt", chosen / "elsewhere"}
    assert all(
        reason == f"a link to something outside {chosen}: only what is inside the chosen folder "
        "is indexed"
        for reason in skipped.values()
    )


def test_links_inside_the_folder_are_one_document_and_loops_are_cut(tmp_path: Path) -> None:
    chosen, _ = tree(tmp_path)
    (chosen / "again.txt").symlink_to(chosen / "sub" / "plan.txt")  # the same document
    (chosen / "sub" / "up").symlink_to(chosen, target_is_directory=True)  # a loop
    (chosen / "mirror").symlink_to(chosen / "sub", target_is_directory=True)  # walked already
    (chosen / "gone.md").symlink_to(chosen / "deleted.md")

    collected = collect_files([chosen])

    assert collected.files == [chosen / "notes.md", chosen / "sub" / "plan.txt"]
    assert dict(collected.skipped) == {
        chosen / "gone.md": "a broken link",
        chosen / "sub" / "up": "a link back to a folder that holds it",
    }


def test_a_link_the_user_drops_by_itself_is_followed(tmp_path: Path) -> None:
    _, outside = tree(tmp_path)
    link = tmp_path / "shortcut.txt"
    link.symlink_to(outside / "secret.txt")
    folder_link = tmp_path / "shortcut"
    folder_link.symlink_to(outside, target_is_directory=True)

    collected = collect_files([link, folder_link, tmp_path / "nothing.pdf"])

    assert collected.files == [link, folder_link / "secret.txt"]
    assert collected.missing == [tmp_path / "nothing.pdf"]
    assert not collected.skipped


def test_watched_folders_bound_every_path_even_one_given_by_name(tmp_path: Path) -> None:
    chosen, outside = tree(tmp_path)
    (chosen / "elsewhere").symlink_to(outside, target_is_directory=True)
    (chosen / "link.txt").symlink_to(outside / "secret.txt")

    # What the live watcher hands over: the link to a folder, a link to a file, a file.
    collected = collect_files(
        [chosen / "elsewhere", chosen / "link.txt", chosen / "notes.md", outside / "secret.txt"],
        within=[chosen],
    )

    assert collected.files == [chosen / "notes.md"]
    assert [path for path, _ in collected.skipped] == [
        chosen / "elsewhere",
        chosen / "link.txt",
        outside / "secret.txt",
    ]


def test_a_watched_folder_reached_through_a_link_keeps_its_given_name(tmp_path: Path) -> None:
    chosen, _ = tree(tmp_path)
    alias = tmp_path / "alias"
    alias.symlink_to(chosen, target_is_directory=True)
    (chosen / "again.md").symlink_to(chosen / "notes.md")

    collected = collect_files([alias / "notes.md", alias / "again.md"], within=[alias])

    assert collected.files == [alias / "notes.md"]
    assert not collected.skipped
    assert os.path.realpath(alias / "notes.md") == str(chosen / "notes.md")
