"""An evaluation set's sources.toml and mirror URLs (app.bench.eval_set), without a network."""

from __future__ import annotations

from pathlib import Path

import pytest

from app.bench.eval_set import EvalSetError, load_sources, mirrored

REPO = Path(__file__).resolve().parents[2]
DEB = "https://deb.debian.org/debian/pool/main/d/debian-faq/debian-faq_11.1_all.deb"


def test_a_mirror_takes_the_scheme_and_host_and_keeps_the_path() -> None:
    assert mirrored(DEB, None) == DEB
    assert mirrored(DEB, "http://127.0.0.1:8080") == (
        "http://127.0.0.1:8080/debian/pool/main/d/debian-faq/debian-faq_11.1_all.deb"
    )
    assert mirrored(DEB, "https://mirror.example/pub/") == (
        "https://mirror.example/pub/debian/pool/main/d/debian-faq/debian-faq_11.1_all.deb"
    )
    with pytest.raises(EvalSetError, match="mirror '/srv/mirror' is not an http"):
        mirrored(DEB, "/srv/mirror")


def test_the_manuals_set_pins_every_package_by_size_and_hash() -> None:
    sources = load_sources(REPO / "resources/eval/manuals/sources.toml")
    assert len(sources) == 11
    faq = next(source for source in sources if source.name == "debian-faq.en.pdf")
    assert (faq.origin, faq.archive, faq.archive_size, faq.gunzip) == (
        "debian",
        "debian-faq_11.1_all.deb",
        499508,
        True,
    )
    assert all(len(s.sha256) == len(s.archive_sha256) == 64 for s in sources)


def test_a_broken_sources_file_says_what_is_wrong(tmp_path: Path) -> None:
    path = tmp_path / "sources.toml"
    with pytest.raises(EvalSetError, match=r"cannot read .*sources\.toml"):
        load_sources(path)
    path.write_text('[[document]]\nname = "a.pdf"\n', encoding="utf-8")
    with pytest.raises(EvalSetError, match=r"sources\.toml: a document lacks 'source'"):
        load_sources(path)
    path.write_text("[[document]\n", encoding="utf-8")
    with pytest.raises(EvalSetError, match=r"sources\.toml: not an evaluation set's sources"):
        load_sources(path)
