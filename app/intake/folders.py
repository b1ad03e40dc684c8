"""Which files a dropped or watched folder holds, without leaving it.

A link the user gives by itself is followed: it is their choice. Inside a folder, a link is
followed only to something inside that folder; a link out of it (say to /etc/passwd) and a link
back up (a loop) are skipped with a message. The window, the CLI and the folder watcher all choose
files here, so the start-up scan and the live watcher apply one rule.
"""

from __future__ import annotations

import errno
import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from app.documents import is_document_name
from app.documents.links import LEADS_OUTSIDE, real_inside
from app.errors import DocentError


@dataclass(slots=True)
class Collected:
    files: list[Path] = field(default_factory=list)
    skipped: list[tuple[Path, str]] = field(default_factory=list)  # with the reason
    missing: list[Path] = field(default_factory=list)  # given, but not there
    # The real folder each file found in a folder must still lie in when it is read: a file
    # swapped for a link out of it after this walk is refused then (a file given by itself has
    # none: following its link is the user's choice).
    roots: dict[Path, Path] = field(default_factory=dict)
    outside: list[Path] = field(default_factory=list)  # links out of the folder, skipped


def still_inside(path: Path, real_root: Path) -> Path:
    """`path`'s real place, if it still lies inside `real_root`; else OutsideLink."""
    real = real_inside(path, real_root)
    if real is None:
        raise OutsideLink(LEADS_OUTSIDE)
    return real


class OutsideLink(DocentError):
    """A file that was inside the chosen folder now leads out of it."""


def collect_files(paths: Iterable[Path], within: Sequence[Path] | None = None) -> Collected:
    """Expand folders into their supported, non-hidden files (sorted); keep files given by name.
    With `within` (the watched folders), every path must also lie inside one of them."""
    collected = Collected()
    bounds = [(folder.absolute(), Path(os.path.realpath(folder))) for folder in within or []]
    for given in paths:
        path = given.expanduser().absolute()
        if bounds:
            root = next((b for b in bounds if path.is_relative_to(b[0])), None)
            if root is None or not _inside(path, root[1]):
                collected.skipped.append((path, _outside(root[0] if root else None)))
                collected.outside.append(path)
                continue
            if path.is_dir():
                _walk(path, root, collected)
            elif path.exists():
                collected.files.append(_within(path, root))
                collected.roots[collected.files[-1]] = root[1]
        elif path.is_dir():
            _walk(path, (path, Path(os.path.realpath(path))), collected)
        elif path.exists() or path.is_symlink():
            collected.files.append(path)
        else:
            collected.missing.append(path)
    collected.files = list(dict.fromkeys(collected.files))
    return collected


def _walk(folder: Path, root: tuple[Path, Path], collected: Collected) -> None:
    """Supported files under `folder`, which lies inside `root` (as given, resolved)."""
    found: list[Path] = []
    skipped = collected.skipped
    for directory, folders, names in os.walk(folder):  # never descends into links
        here = Path(directory)
        folders[:] = sorted(name for name in folders if not name.startswith("."))
        for name in list(folders):
            link = here / name
            if link.is_symlink():
                folders.remove(name)
                target = Path(os.path.realpath(link))
                if not _inside(target, root[1]):
                    skipped.append((link, _outside(root[0])))
                elif Path(os.path.realpath(here)).is_relative_to(target):
                    skipped.append((link, "a link back to a folder that holds it"))
                # else: a link to a folder inside, whose files are found where they really are
        for name in sorted(names):
            path = here / name
            if not is_document_name(name):
                continue
            if not path.is_symlink():
                found.append(path)
            elif not path.exists():
                skipped.append((path, _why_unreachable(path)))
            elif not _inside(Path(os.path.realpath(path)), root[1]):
                skipped.append((path, _outside(root[0])))
                collected.outside.append(path)
            else:
                found.append(_within(path, root))
    collected.files += sorted(found)
    collected.roots |= dict.fromkeys(found, root[1])


def _inside(real: Path, real_root: Path) -> bool:
    return Path(os.path.realpath(real)).is_relative_to(real_root)


def _within(path: Path, root: tuple[Path, Path]) -> Path:
    """A file inside `root` by its real place, named under the root as given (so a link and
    its target are one document)."""
    return root[0] / Path(os.path.realpath(path)).relative_to(root[1])


def _outside(folder: Path | None) -> str:
    where = f"outside {folder}" if folder else "outside the watched folders"
    return f"a link to something {where}: only what is inside the chosen folder is indexed"


def _why_unreachable(link: Path) -> str:
    try:
        os.stat(link)
    except OSError as error:
        if error.errno == errno.ELOOP:
            return "a link that loops (it leads back to itself)"
    return "a broken link"
