"""The hostile-document generator writes what it promises: every case, the same bytes each time,
and files that are hostile in the way their expectation says (a bomb that really inflates, raw
PDFs whose text a reader finds)."""

from __future__ import annotations

import dataclasses
import hashlib
import os
import stat
import zipfile
from pathlib import Path

import pymupdf
import pytest

from tests.hostile import (
    CASES,
    LATIN_1,
    LATIN_1_WORDS,
    ODD_NAMES,
    QUICK,
    HostileCase,
    Reason,
    write_hostile_folder,
)

# Smaller still than QUICK, for tests that write the folder several times.
SMALL = dataclasses.replace(QUICK, bomb_mb=2, outline_depth=1000, stream_bomb_mb=1)

# PyMuPDF saves a date and a random /ID (and encrypts with a random IV): the same text, other bytes.
SAVED_BY_PYMUPDF = {
    "good.pdf", "encrypted.pdf", "scan.pdf", "dense-page.pdf", "truncated.pdf",
    "garbage-inside.pdf", "report-copy.txt",
}  # fmt: skip


def digest(cases: dict[Path, HostileCase]) -> dict[str, str]:
    """Each case's bytes (its size where the bytes are not expected to repeat or too many)."""
    sums = {}
    for path, case in cases.items():
        info = path.lstat()
        if stat.S_ISLNK(info.st_mode):
            sums[case.name] = f"link to {os.readlink(path)}"
        elif case.name in SAVED_BY_PYMUPDF or info.st_size > 2**28 or not info.st_mode & 0o444:
            sums[case.name] = f"{stat.filemode(info.st_mode)} {info.st_size} bytes"
        elif stat.S_ISREG(info.st_mode):
            sums[case.name] = _content_digest(path)
        else:
            sums[case.name] = stat.filemode(info.st_mode)
    return sums


def _content_digest(path: Path) -> str:
    """A zip's entries rather than its bytes: zipfile stamps entries with the time of writing."""
    digest = hashlib.sha256()
    try:
        with zipfile.ZipFile(path) as archive:
            for entry in archive.infolist():
                digest.update(entry.filename.encode() + b"\0" + archive.read(entry) + b"\0")
    except (zipfile.BadZipFile, OSError):  # not a zip, or one that lies about its sizes
        digest = hashlib.sha256(path.read_bytes())
    return digest.hexdigest()


def test_every_case_is_written_with_a_consistent_expectation(tmp_path: Path) -> None:
    cases = write_hostile_folder(tmp_path / "folder", SMALL)
    assert sorted(case.name for case in cases.values()) == sorted(CASES)
    for path, case in cases.items():
        assert os.path.lexists(path), case.name
        assert path.parent in (tmp_path / "folder", tmp_path / "folder" / "sub")
        if case.outcome == "indexed":
            # A blank picture is indexed, as a scan, with no words to find.
            assert case.phrase or case.note == "indexed as scanned image", case
            assert case.reason is None, case
        else:
            assert isinstance(case.reason, Reason), case
            assert not case.phrase, case
    assert (tmp_path / "folder-outside" / "secret.txt").is_file()


def test_the_same_bytes_every_time(tmp_path: Path) -> None:
    first = write_hostile_folder(tmp_path / "one", SMALL)
    second = write_hostile_folder(tmp_path / "two", SMALL)
    one, two = digest(first), digest(second)
    assert one.keys() == two.keys()
    for name in one:
        # Links name their own folder; PDFs saved by PyMuPDF may differ in size by a digit.
        if not one[name].startswith("link") and name not in SAVED_BY_PYMUPDF:
            assert one[name] == two[name], name


def test_a_shuffle_renames_all_but_the_names_that_are_the_case(tmp_path: Path) -> None:
    plain = write_hostile_folder(tmp_path / "plain", SMALL)
    shuffled = write_hostile_folder(tmp_path / "shuffled", SMALL, shuffle=3)
    again = write_hostile_folder(tmp_path / "again", SMALL, shuffle=3)
    assert sorted(c.name for c in shuffled.values()) == sorted(c.name for c in plain.values())
    assert [p.name for p in shuffled] == [p.name for p in again]
    for path, case in shuffled.items():
        if case.name in ODD_NAMES or path.is_symlink():
            assert path.name == Path(case.name).name
        else:
            assert path.name.endswith("-" + case.name)
    assert sorted(p.name for p in shuffled) != sorted(p.name for p in plain)


def test_only_writes_the_cases_named(tmp_path: Path) -> None:
    cases = write_hostile_folder(tmp_path / "folder", SMALL, only={"bomb.epub", "sub/up"})
    assert {case.name for case in cases.values()} == {"bomb.epub", "sub/up"}
    assert sorted(p.name for p in (tmp_path / "folder").iterdir()) == ["bomb.epub", "sub"]


def test_the_bombs_inflate_and_the_lying_zip_lies(tmp_path: Path) -> None:
    folder = tmp_path / "folder"
    sizes = dataclasses.replace(QUICK, bomb_mb=20)
    write_hostile_folder(folder, sizes, only={"bomb.epub", "lying-sizes.epub"})
    with zipfile.ZipFile(folder / "bomb.epub") as bomb:
        chapter = bomb.read("c1.xhtml")  # checks the CRC too
        assert bomb.namelist()[0] == "mimetype"
    assert len(chapter) > sizes.bomb_mb * 10**6 > 100 * (folder / "bomb.epub").stat().st_size
    assert chapter.endswith(b"</body></html>")
    with zipfile.ZipFile(folder / "lying-sizes.epub") as lying:
        assert lying.getinfo("c1.xhtml").file_size == 4096


@pytest.mark.parametrize(
    "name",
    [
        "outline-cycle.pdf",
        "xobject-cycle.pdf",
        "deep-array.pdf",
        "xref-loop.pdf",
        "stream-bomb.pdf",
        "image-bomb.pdf",
        "actions.pdf",
        "huge-page.pdf",
        "many-pages.pdf",
    ],
)
def test_the_raw_pdfs_hold_their_phrase_and_need_no_repair(name: str, tmp_path: Path) -> None:
    (case,) = write_hostile_folder(tmp_path / "folder", QUICK, only={name}).items()
    path, expected = case
    with pymupdf.open(path) as document:
        text = " ".join(" ".join(page.get_text().split()) for page in document)
        assert not document.is_repaired
    assert expected.phrase in text


def test_the_latin_1_file_is_not_utf_8_and_holds_real_words(tmp_path: Path) -> None:
    folder = tmp_path / "folder"
    write_hostile_folder(folder, QUICK, only={"latin-1.txt", "cp1252.txt"})
    data = (folder / "latin-1.txt").read_bytes()
    with pytest.raises(UnicodeDecodeError):
        data.decode("utf-8")
    assert all(word in LATIN_1 for word in LATIN_1_WORDS)
    assert data.decode("latin-1") == LATIN_1
    assert b"\x80" in (folder / "cp1252.txt").read_bytes()  # the euro sign


def test_the_file_system_cases(tmp_path: Path) -> None:
    folder = tmp_path / "folder"
    write_hostile_folder(folder, QUICK, only={"pipe.txt", "link.txt", "loop.txt", "sub/up"})
    assert stat.S_ISFIFO((folder / "pipe.txt").lstat().st_mode)
    assert os.readlink(folder / "link.txt") == "/etc/passwd"
    assert not (folder / "loop.txt").exists()  # ELOOP: a link to itself
    assert (folder / "sub" / "up").resolve() == folder.resolve()


def test_a_folder_can_be_written_again(tmp_path: Path) -> None:
    names = {"pipe.txt", "locked.md", "link.txt", "sub/up", "good.pdf"}
    write_hostile_folder(tmp_path / "folder", QUICK, only=names)
    again = write_hostile_folder(tmp_path / "folder", QUICK, only=names)
    assert {case.name for case in again.values()} == names
