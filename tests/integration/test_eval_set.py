"""An evaluation set's pinned documents fetched from a real HTTP server on 127.0.0.1 standing in
for deb.debian.org and files.pythonhosted.org (through a mirror URL): a real .deb and a real
sdist, built here; the archive cache; each way a fetch fails; and `docent eval` end to end."""

from __future__ import annotations

import gzip
import hashlib
import io
import json
import socket
import tarfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from app.bench.eval_set import EvalSetError, fetch_documents, load_sources, set_folder
from app.paths import Paths
from tests.conftest import docent
from tests.integration.conftest import run
from tests.model_server import ModelServer, Served, model_server

DEB_URL = "https://deb.debian.org/debian/pool/main/f/frob-doc/frob-doc_1.0_all.deb"
SDIST_URL = "https://files.pythonhosted.org/packages/ab/cd/frobpy-2.0.tar.gz"
MANUAL = b"The Frobnicator Manual\n\nThe frobnicator listens on port 4242 by default.\n"
FAQ = b"Frobnicator FAQ\n\nQ: Is it fast?\nA: Yes.\n"
CHANGES = b"Changes\n=======\n\n2.0 (2024-05-01)\n----------------\n\n- Faster frobbing.\n"
PACKAGES = {DEB_URL: ("debian", "frob-doc", "1.0"), SDIST_URL: ("pypi", "frobpy", "2.0")}
DOCUMENTS = [  # name, package, member, the document's bytes (a member ending .gz is gunzipped)
    ("manual.txt", DEB_URL, "usr/share/doc/frob-doc/manual.txt.gz", MANUAL),
    ("faq.txt", DEB_URL, "usr/share/doc/frob-doc/faq.txt", FAQ),
    ("CHANGES.rst", SDIST_URL, "frobpy-2.0/CHANGES.rst", CHANGES),
]


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def tar(members: dict[str, bytes], mode: str) -> bytes:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode=mode) as archive:
        for name, data in members.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            archive.addfile(info, io.BytesIO(data))
    return buffer.getvalue()


def ar(members: dict[str, bytes]) -> bytes:
    """An ar archive, the container of a .deb: 60-byte headers, bodies padded to even sizes."""
    out = b"!<arch>\n"
    for name, data in members.items():
        header = f"{name:<16}{0:<12}{0:<6}{0:<6}{'100644':<8}{len(data):<10}`\n"
        out += header.encode("ascii") + data + b"\n" * (len(data) % 2)
    return out


def deb(files: dict[str, bytes]) -> bytes:
    """A .deb as dpkg-deb builds one: data.tar.xz names its files "./usr/…"."""
    control = tar({"./control": b"Package: frob-doc\nVersion: 1.0\n"}, "w:xz")
    data = tar({f"./{name}": body for name, body in files.items()}, "w:xz")
    return ar({"debian-binary": b"2.0\n", "control.tar.xz": control, "data.tar.xz": data})


@dataclass
class EvalSet:
    server: ModelServer
    folder: Path  # qa.jsonl and sources.toml
    mirror: str
    deb_path: str  # as requested from the server
    sdist_path: str

    def write_sources(self, changed: str = "", **changes: str) -> Path:
        """sources.toml for the set, the `changed` document's entry with `changes` applied."""
        served = {DEB_URL: self.deb_path, SDIST_URL: self.sdist_path}
        lines = []
        for name, url, member, body in DOCUMENTS:
            package = self.server.files[served[url]].source.read_bytes()
            origin, title, version = PACKAGES[url]
            entry = {
                "name": name,
                "source": origin,
                "package": title,
                "version": version,
                "url": url,
                "archive_sha256": sha256(package),
                "archive_size": len(package),
                "member": member,
                "gunzip": member.endswith(".gz"),
                "sha256": sha256(body),
                "pages": 1,
            }
            if name == changed:
                entry |= changes
            lines += [
                "[[document]]",
                *(f"{key} = {json.dumps(value)}" for key, value in entry.items()),
            ]
        path = self.folder / "sources.toml"
        path.write_text("\n".join(lines) + "\n", encoding="utf-8")
        return path

    def requested(self) -> list[str]:
        return [path for path, _range in self.server.requests]


@pytest.fixture
def eval_set(tmp_path: Path) -> Iterator[EvalSet]:
    package = tmp_path / "frob-doc_1.0_all.deb"
    package.write_bytes(
        deb(
            {
                "usr/share/doc/frob-doc/manual.txt.gz": gzip.compress(MANUAL),
                "usr/share/doc/frob-doc/faq.txt": FAQ,
            }
        )
    )
    sdist = tmp_path / "frobpy-2.0.tar.gz"
    sdist.write_bytes(tar({"frobpy-2.0/CHANGES.rst": CHANGES, "frobpy-2.0/setup.py": b""}, "w:gz"))
    folder = tmp_path / "frob-set"
    folder.mkdir()
    deb_path, sdist_path = DEB_URL.split("/", 3)[3], SDIST_URL.split("/", 3)[3]
    with model_server() as server:
        server.files[deb_path] = Served(package)
        server.files[sdist_path] = Served(sdist)
        mirror = server.url("").rstrip("/")
        yield EvalSet(server, folder, mirror, deb_path, sdist_path)


def fetch(eval_set: EvalSet, sources: Path, mirror: str | None = None) -> list[Path]:
    folder = set_folder(Paths.from_environment().cache_dir, sources)
    return run(fetch_documents(load_sources(sources), folder, mirror=mirror or eval_set.mirror))


def test_documents_land_checked_and_the_archives_are_downloaded_once(eval_set: EvalSet) -> None:
    sources = eval_set.write_sources()
    reported: list[str] = []
    folder = set_folder(Paths.from_environment().cache_dir, sources)

    def fetch_reporting() -> list[Path]:
        coroutine = fetch_documents(
            load_sources(sources), folder, mirror=eval_set.mirror, report=reported.append
        )
        return run(coroutine)

    paths = fetch_reporting()
    assert [path.name for path in paths] == ["manual.txt", "faq.txt", "CHANGES.rst"]
    assert [path.read_bytes() for path in paths] == [MANUAL, FAQ, CHANGES]  # manual gunzipped
    assert all(path.parent == folder for path in paths)
    # One .deb holds two documents: it is downloaded once.
    assert eval_set.requested() == [eval_set.deb_path, eval_set.sdist_path]
    assert reported[0] == "manual.txt: frob-doc 1.0 (debian)"

    reported.clear()
    assert fetch_reporting() == paths
    assert reported == ["manual.txt: cached", "faq.txt: cached", "CHANGES.rst: cached"]
    (folder / "faq.txt").unlink()
    (folder / "CHANGES.rst").write_bytes(b"changed by hand")
    fetch_reporting()  # taken out of the kept archives again
    assert (folder / "faq.txt").read_bytes() == FAQ
    assert (folder / "CHANGES.rst").read_bytes() == CHANGES
    assert len(eval_set.requested()) == 2  # nothing downloaded a second time


def test_a_wrong_archive_sha256_is_refused_and_nothing_is_kept(eval_set: EvalSet) -> None:
    sources = eval_set.write_sources("CHANGES.rst", archive_sha256="0" * 64)
    with pytest.raises(EvalSetError) as raised:
        fetch(eval_set, sources)
    message = str(raised.value)
    assert f"cannot fetch CHANGES.rst from {eval_set.mirror}/{eval_set.sdist_path}" in message
    got = sha256(eval_set.server.files[eval_set.sdist_path].source.read_bytes())
    assert f"sha256 {got[:12]}…, expected 190 bytes" in message
    assert "sha256 000000000000…" in message
    assert "The file was deleted" in message
    folder = set_folder(Paths.from_environment().cache_dir, sources)
    archives = sorted(path.name for path in (folder / "archives").iterdir())
    assert archives == ["frob-doc_1.0_all.deb", "frob-doc_1.0_all.deb.verified"]  # the good one
    assert not (folder / "CHANGES.rst").exists()


def test_a_wrong_document_sha256_is_refused_and_nothing_is_written(eval_set: EvalSet) -> None:
    sources = eval_set.write_sources("faq.txt", sha256="f" * 64)
    with pytest.raises(EvalSetError) as raised:
        fetch(eval_set, sources)
    assert str(raised.value) == (
        f"faq.txt: sha256 mismatch: usr/share/doc/frob-doc/faq.txt in frob-doc_1.0_all.deb has "
        f"sha256 {sha256(FAQ)}, sources.toml expects {'f' * 64}; nothing was written"
    )
    folder = set_folder(Paths.from_environment().cache_dir, sources)
    assert sorted(path.name for path in folder.iterdir()) == ["archives", "manual.txt"]


def test_a_member_the_package_lacks_is_named(eval_set: EvalSet) -> None:
    sources = eval_set.write_sources("CHANGES.rst", member="frobpy-2.0/NEWS.rst")
    with pytest.raises(EvalSetError, match=r"^CHANGES.rst: frobpy-2.0/NEWS.rst is not a file in "):
        fetch(eval_set, sources)


def test_an_unreachable_or_missing_url_is_named(eval_set: EvalSet) -> None:
    sources = eval_set.write_sources()
    with socket.socket() as unused:  # a port that nothing listens on once it is closed
        unused.bind(("127.0.0.1", 0))
        closed = f"http://127.0.0.1:{unused.getsockname()[1]}"
    with pytest.raises(EvalSetError, match=rf"^cannot fetch manual.txt from {closed}/debian/"):
        fetch(eval_set, sources, mirror=closed)
    del eval_set.server.files[eval_set.sdist_path]
    with pytest.raises(EvalSetError, match=r"CHANGES.rst from .* not on the server \(HTTP 404\)"):
        fetch(eval_set, sources)


def test_docent_eval_fetches_the_set_beside_its_questions(
    eval_set: EvalSet, isolated_paths: Paths
) -> None:
    eval_set.write_sources()
    question = {
        "question": "Which port does the frobnicator listen on by default?",
        "answers": ["4242"],
        "document": "manual.txt",
        "pages": [1],
    }
    qa = eval_set.folder / "qa.jsonl"
    qa.write_text(json.dumps(question) + "\n", encoding="utf-8")
    out = eval_set.folder / "rows.json"
    isolated_paths.settings_file.write_text(json.dumps({"local": {"max_tokens": 48}}))

    arguments = ("--mirror", eval_set.mirror, "--modes", "local only", "--json", str(out))
    result = docent("eval", str(qa), *arguments)
    assert result.returncode == 0, result.stderr
    assert "manual.txt: frob-doc 1.0 (debian)" in result.stderr
    assert f"1 questions from {qa}" in result.stdout
    (row,) = json.loads(out.read_text())
    assert (row["mode"], row["questions"], len(row["answers"])) == ("local only", 1, 1)
    assert row["retrieval_recall"] == 1.0  # the fetched manual was indexed under its name
    assert row["failures"] == []
    cached = set_folder(isolated_paths.cache_dir, eval_set.folder / "sources.toml")
    assert (cached / "manual.txt").read_bytes() == MANUAL

    refused = docent("eval", str(qa), "--mirror", eval_set.mirror, "--documents", str(cached))
    assert refused.returncode == 2
    assert "--mirror needs a sources.toml beside QA or --summaries (and no --documents)" in (
        refused.stderr
    )
