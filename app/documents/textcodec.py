"""Decode text files whose encoding nobody wrote down: BOMs, UTF-16 without BOM, UTF-8, then
charset-normalizer for legacy encodings (GB18030, Shift-JIS, cp1252, …).

Latin-script single-byte code pages fit the same bytes equally well as far as charset-normalizer
can tell: it decoded Danish Latin-1 as cp1250 ("Ærøskøbing" as "Ćrřskřbing"). Among them Docent
keeps the decoding whose accented letters the fewest languages of that code page account for
(Danish needs one for æ, ø and å; Ć, ř and ĺ need three), and on a tie the more common code page,
Windows-1252 first as in browsers; a tie between decodings that differ is reported as a guess.
"""

from __future__ import annotations

import codecs
import re
import unicodedata
from collections import Counter
from typing import NamedTuple

import charset_normalizer

_BOMS = (
    (codecs.BOM_UTF32_LE, "utf-32-le"),
    (codecs.BOM_UTF32_BE, "utf-32-be"),
    (codecs.BOM_UTF8, "utf-8"),
    (codecs.BOM_UTF16_LE, "utf-16-le"),
    (codecs.BOM_UTF16_BE, "utf-16-be"),
)
# Control characters other than tab, newline, carriage return, form feed: text barely has them.
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0e-\x1f\x7f]")


# The accented letters of the languages written in each Latin code page, in the order a tie
# prefers them (Windows-1252 first: the WHATWG default for unlabelled Western text).
_LATIN_CODE_PAGES: dict[str, tuple[str, dict[str, str]]] = {
    "cp1252": (
        "Windows-1252 (Western European)",
        {
            "danish/norwegian": "æøåé",
            "swedish/finnish": "åäöé",
            "german": "äöüß",
            "french": "àâæçéèêëîïôœùûüÿ",
            "spanish": "áéíñóúü",
            "portuguese": "áâãàçéêíóôõú",
            "italian": "àèéìíîòóùú",
            "dutch": "áéèëïóöüú",
            "icelandic": "áðéíóúýþæö",
            "catalan": "àçèéíïòóúü",
        },
    ),
    "cp1250": (
        "Windows-1250 (Central European)",
        {
            "czech": "áčďéěíňóřšťúůýž",
            "slovak": "áäčďéíĺľňóôŕšťúýž",
            "polish": "ąćęłńóśźż",
            "hungarian": "áéíóöőúüű",
            "slovenian/croatian": "čćđšž",
            "romanian": "ăâîşţ",
            "german": "äöüß",
        },
    ),
    "cp1257": (
        "Windows-1257 (Baltic)",
        {
            "lithuanian": "ąčęėįšųūž",
            "latvian": "āčēģīķļņšūž",
            "estonian": "äõöüšž",
            "german": "äöüß",
        },
    ),
    "cp1254": (
        "Windows-1254 (Turkish)",
        {"turkish": "âçğıîöşûü", "german": "äöüß", "french": "àâçéèêëîïôûü"},
    ),
}
_SAMPLE = 1 << 20  # bytes judged: enough letters, and fast on a 64 MB file


class NotTextError(ValueError):
    """The bytes are not text in any encoding we can recognise."""


class Decoded(NamedTuple):
    text: str
    encoding: str
    assumed: str | None = None  # several encodings fit: the one assumed, for the user


def decode_text(data: bytes) -> Decoded:
    """Decode `data`, or raise NotTextError for binary data."""
    for bom, encoding in _BOMS:
        if data.startswith(bom):
            return _checked(data[len(bom) :].decode(encoding, errors="replace"), encoding)
    if utf16 := _utf16_without_bom(data):
        return _checked(data.decode(utf16, errors="replace"), utf16)
    if b"\x00" in data:
        raise NotTextError("binary data (contains NUL bytes)")
    try:
        return _checked(data.decode("utf-8"), "utf-8")
    except UnicodeDecodeError:
        pass
    best = charset_normalizer.from_bytes(data).best()
    if best is None or best.encoding is None:
        raise NotTextError("not text in any known encoding")
    text = str(best)
    if _latin_script(text):
        return _latin(data)
    return _checked(text, _canonical(best.encoding))


def _latin_script(text: str) -> bool:
    """Every accented letter is a Latin one (so a Latin code page is the question)."""
    return all(
        unicodedata.name(char, "").startswith("LATIN")
        for char in set(text[:_SAMPLE])
        if not char.isascii() and char.isalpha()
    )


def _latin(data: bytes) -> Decoded:
    sample = data[:_SAMPLE]
    judged: list[tuple[tuple[int, int], int, str, str]] = []
    for rank, (code_page, (_, languages)) in enumerate(_LATIN_CODE_PAGES.items()):
        try:
            text = sample.decode(code_page)
        except UnicodeDecodeError:  # a byte this code page leaves undefined
            continue
        judged.append((_implausibility(text, languages), rank, code_page, text))
    if not judged:
        raise NotTextError("not text in any known encoding")
    judged.sort()
    cost, _, code_page, text = judged[0]
    tied = any(other[0] == cost and other[3] != text for other in judged[1:])
    label = _LATIN_CODE_PAGES[code_page][0]
    return _checked(data.decode(code_page), code_page)._replace(assumed=label if tied else None)


def _implausibility(text: str, languages: dict[str, str]) -> tuple[int, int]:
    """(accented letters no language of the code page has, languages needed for the rest).

    A non-letter between two letters ("wi¹zka": Polish read as Windows-1252) counts as a letter
    no language has."""
    letters: Counter[str] = Counter()
    strays = 0
    for position, char in enumerate(text):
        if char.isascii():
            continue
        if char.isalpha():
            letters[char.lower()] += 1
        elif 0 < position < len(text) - 1 and text[position - 1].isalpha():
            strays += text[position + 1].isalpha()
    needed = 0
    left = dict(letters)
    while left:
        best = max(languages.values(), key=lambda alphabet: sum(left.get(c, 0) for c in alphabet))
        if not any(c in left for c in best):
            break
        needed += 1
        left = {c: n for c, n in left.items() if c not in best}
    return sum(left.values()) + strays, needed


def _utf16_without_bom(data: bytes) -> str | None:
    """Mostly-ASCII UTF-16 has a NUL in every other byte; CJK UTF-16 is left to the BOM."""
    sample = data[:4096]
    if len(sample) < 4:
        return None
    even, odd = sample[0::2], sample[1::2]
    if odd.count(0) > 0.4 * len(odd) and even.count(0) < 0.05 * len(even):
        return "utf-16-le"
    if even.count(0) > 0.4 * len(even) and odd.count(0) < 0.05 * len(odd):
        return "utf-16-be"
    return None


def _canonical(encoding: str) -> str:
    # charset-normalizer reports GBK-family text as gb18030 or gbk; gb18030 is the superset.
    return "gb18030" if encoding.lower() in {"gbk", "gb2312"} else encoding


def _checked(text: str, encoding: str) -> Decoded:
    if len(_CONTROL.findall(text[:65536])) > 0.05 * max(1, len(text[:65536])):
        raise NotTextError("binary data (mostly control characters)")
    return Decoded(text, encoding)
