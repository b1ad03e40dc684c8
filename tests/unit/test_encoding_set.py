"""The decoder reads real prose in 29 languages, in every legacy encoding that holds each one
(tests/encodings.py): at least 97 % of the decidable cases exactly, and Danish and Norwegian in
Latin-1 and Windows-1252 always (they were read as Windows-1250)."""

from __future__ import annotations

from tests.encodings import ENCODINGS, measure


def test_the_decidable_cases_are_decoded_exactly() -> None:
    measurement = measure()
    wrong = [
        (r.case.language, r.case.variant, r.case.encoding, r.read_as)
        for r in measurement.decidable
        if not r.exact
    ]
    assert measurement.share >= 0.97, wrong


def test_the_set_holds_15_languages_in_every_encoding() -> None:
    results = measure().results
    assert len({r.case.language for r in results if r.case.decidable}) >= 15
    assert {r.case.encoding for r in results} == set(ENCODINGS)


def test_danish_and_norwegian_in_western_code_pages_are_exact() -> None:
    western = [
        r
        for r in measure().results
        if r.case.language in {"danish", "norwegian"} and r.case.encoding in {"latin-1", "cp1252"}
    ]
    assert len(western) == 8
    assert [(r.case.text, r.case.encoding, r.read_as) for r in western if not r.exact] == []
