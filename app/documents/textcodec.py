"""Decode text files whose encoding nobody wrote down: BOMs, UTF-16 without BOM, UTF-8, then a
judgement among legacy encodings (cp1252, cp1250, GB18030, Shift-JIS, …).

charset-normalizer proposes the encodings that fit the bytes, but on a sentence or less its ranking
is arbitrary: it read Danish Latin-1 as cp1250 ("Ærøskøbing" as "Ćrřskřbing"), "café" as UTF-16
and "naïve" as Urdu cp1006. Docent judges every candidate reading itself, by what text does not do:
switch script inside a word ("S緌 Paulo"), switch to capitals inside a word ("PшнliЪ"), put a symbol
between two letters ("gę¶l±"), write a Latin word of accented letters only ("Ìîñêâà", Cyrillic
read as Windows-1252), or hold control characters. Latin code pages are judged also by their
languages: the reading whose accented letters the fewest languages of that code page account for
(Danish needs one for æ, ø and å; Ć, ř and ĺ need three). On a tie the more common code page wins,
Windows-1252 first as in browsers, and a tie between readings that differ is reported as a guess.
Latin-script readings charset-normalizer proposes outside these code pages (DOS, Mac, cp1258) are
not considered: without their languages' letters they would fit anything.
"""

from __future__ import annotations

import codecs
import functools
import re
import unicodedata
from collections import Counter
from dataclasses import dataclass
from typing import NamedTuple

_BOMS = (
    (codecs.BOM_UTF32_LE, "utf-32-le"),
    (codecs.BOM_UTF32_BE, "utf-32-be"),
    (codecs.BOM_UTF8, "utf-8"),
    (codecs.BOM_UTF16_LE, "utf-16-le"),
    (codecs.BOM_UTF16_BE, "utf-16-be"),
)
# Control characters other than tab, newline, carriage return, form feed: text barely has them.
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0e-\x1f\x7f]")


_WESTERN = {
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
}
_CENTRAL = {
    "czech": "áčďéěíňóřšťúůýž",
    "slovak": "áäčďéíĺľňóôŕšťúýž",
    "polish": "ąćęłńóśźż",
    "hungarian": "áéíóöőúüű",
    "slovenian/croatian": "čćđšž",
    "romanian": "ăâîşţ",
    "german": "äöüß",
}
# The Latin code pages judged, with their languages' accented letters, in the order a tie prefers
# them: Windows-1252 first (the WHATWG default for unlabelled Western text); ISO-8859-1 for text
# holding a byte Windows-1252 leaves undefined; ISO-8859-2, Central Europe's Unix code page.
_LATIN_CODE_PAGES: dict[str, tuple[str, dict[str, str]]] = {
    "cp1252": ("Windows-1252 (Western European)", _WESTERN),
    "latin-1": ("ISO-8859-1 (Western European)", _WESTERN),
    "cp1250": ("Windows-1250 (Central European)", _CENTRAL),
    "iso-8859-2": ("ISO-8859-2 (Central European)", _CENTRAL),
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
# Names for the note; charset-normalizer's codec name otherwise.
_LABELS = {
    "gb18030": "GB18030 (Chinese)",
    "big5": "Big5 (Traditional Chinese)",
    "big5hkscs": "Big5-HKSCS (Traditional Chinese)",
    "cp950": "Big5 (Traditional Chinese)",
    "cp932": "Shift-JIS (Japanese)",
    "shift_jis": "Shift-JIS (Japanese)",
    "euc_jp": "EUC-JP (Japanese)",
    "euc_jis_2004": "EUC-JP (Japanese)",
    "euc_kr": "EUC-KR (Korean)",
    "cp949": "EUC-KR (Korean)",
    "johab": "Johab (Korean)",
    "cp1251": "Windows-1251 (Cyrillic)",
    "koi8_r": "KOI8-R (Russian)",
    "koi8_u": "KOI8-U (Ukrainian)",
    "cp866": "DOS Cyrillic",
    "mac_cyrillic": "Mac Cyrillic",
    "iso8859_5": "ISO-8859-5 (Cyrillic)",
    "cp1253": "Windows-1253 (Greek)",
    "iso8859_7": "ISO-8859-7 (Greek)",
    "cp1255": "Windows-1255 (Hebrew)",
    "cp1256": "Windows-1256 (Arabic)",
    "cp874": "Windows-874 (Thai)",
}
# The other legacy encodings people write in, asked about by name.
_COMMON = (
    "cp1251",
    "koi8_r",
    "koi8_u",
    "cp866",
    "iso8859_5",
    "cp1253",
    "iso8859_7",
    "cp1255",
    "cp1256",
    "cp874",
    "gb18030",
    "big5",
    "cp932",
    "euc_jp",
    "cp949",
)
_JUDGED = 64 << 10  # bytes of the lines holding non-ASCII bytes judged: fast on a 64 MB file
_NON_ASCII = re.compile(rb"[\x80-\xff]")
_ASCII = bytes(range(0x20, 0x7F)) + b"\t\n\r"
_WORD = re.compile(r"[^\W\d_]+")  # letters (and letter-like signs such as ¹, judged below)
# A symbol between two letters; the apostrophe, middle dot (Catalan l·l), soft hyphen, hyphens and
# CJK punctuation belong there.
_STRAY = re.compile(
    r"(?<=[^\W\d_])[^\w\s\x00-\x7f’·\u00ad\u2010\u2011\u3000-\u303f\uff01-\uff65](?=[^\W\d_])"
)
# A run of text between spaces and ASCII punctuation: a word, or a CJK phrase.
_TOKEN = re.compile(r"[^\s!-/:-@\[-`{-~]+")
_CONTROL_OR_PRIVATE = re.compile(r"[\x80-\x9f\ue000-\uf8ff]")
_SCRIPT_WORDS = ("LETTER", "SYLLABLE", "CHARACTER")
_SCRIPT_GROUPS = {"HIRAGANA": "CJK", "KATAKANA": "CJK", "BOPOMOFO": "CJK"}


class NotTextError(ValueError):
    """The bytes are not text in any encoding we can recognise."""


class Decoded(NamedTuple):
    text: str
    encoding: str
    assumed: str | None = None  # several encodings fit equally well: the one assumed, named

    @property
    def uncertain(self) -> bool:
        return self.assumed is not None


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
    best, assumed = _judge(*_evidence(data))
    # The judged lines decoded; a byte beyond them the encoding lacks is not worth refusing a file.
    decoded = _checked(data.decode(best.encoding, errors="replace"), best.encoding)
    return decoded._replace(assumed=best.label if assumed else None)


@dataclass(frozen=True, slots=True)
class _Reading:
    encoding: str
    label: str
    text: str
    latin: bool
    odd: int  # things text does not do, counted
    languages: int  # Latin: how many of the code page's languages the accented letters need
    chaos: float  # non-Latin: charset-normalizer's measure of mess
    rank: int  # preference on a tie: the code page's order, or charset-normalizer's


def _judge(sample: bytes, cut: bool) -> tuple[_Reading, bool]:
    """The most plausible reading of `sample`, and whether it is a guess: another, different
    reading fits as well, or even the best one is flawed in more than one place in ten."""
    import charset_normalizer  # only for text that is not UTF-8: not at every start-up

    chaos: dict[str, float] = {}
    # A sample `cut` inside a character fits no multi-byte encoding: end it a byte or three sooner.
    for trim in range(4 if cut else 1):
        whole = sample[: len(sample) - trim]
        # charset-normalizer's full scan stops at the first encodings that look clean (it
        # offered only Shift-JIS for a Russian sentence in KOI8-R): ask about the common ones too.
        for match in [
            *charset_normalizer.from_bytes(whole),
            *charset_normalizer.from_bytes(whole, cp_isolation=list(_COMMON)),
        ]:
            encoding = _canonical(match.encoding)
            if _ascii_compatible(encoding):  # not UTF-16, UTF-7, EBCDIC: ruled out, or no text
                chaos[encoding] = min(chaos.get(encoding, 100.0), match.percent_chaos)
        if chaos:
            break
    if not chaos:  # nothing fits without a mess of symbols and controls: binary data
        raise NotTextError("not text in any known encoding")
    readings: list[_Reading] = []
    bound = len(sample)  # the fewest oddities yet: a reading is counted only until it has more
    for rank, (encoding, mess) in enumerate(chaos.items()):
        text = _decoded(sample, encoding)
        if text is None or _latin_script(text):  # Latin readings are judged by their languages
            continue
        odd = _oddity(text, bound)
        bound = min(bound, odd)
        label = _LABELS.get(encoding, encoding)
        readings.append(_Reading(encoding, label, text, False, odd, 0, mess, rank))
    for rank, (code_page, (label, languages)) in enumerate(_LATIN_CODE_PAGES.items()):
        if (text := _decoded(sample, code_page)) is not None:
            odd, needed = _latin_oddity(text, languages, bound)
            bound = min(bound, odd)
            readings.append(_Reading(code_page, label, text, True, odd, needed, 0.0, rank))
    if not readings:
        raise NotTextError("not text in any known encoding")
    readings.sort(key=lambda r: (r.odd, not r.latin, r.languages, r.chaos, r.rank))
    best = readings[0]
    tied = any(_as_good(other, best) and other.text != best.text for other in readings[1:])
    non_ascii = len(best.text) - len(best.text.encode("ascii", "ignore"))
    return best, tied or best.odd > 0.1 * non_ascii


def _as_good(other: _Reading, best: _Reading) -> bool:
    if other.odd != best.odd:
        return False
    if other.latin and best.latin:
        return other.languages == best.languages
    if not other.latin and not best.latin:
        return other.chaos == best.chaos
    return True  # a Latin and a non-Latin reading, each without a flaw: only a guess decides


def _evidence(data: bytes) -> tuple[bytes, bool]:
    """The lines that hold non-ASCII bytes, up to _JUDGED bytes: ASCII reads alike in every
    candidate, and a file's accents may start after a long ASCII preamble. A newline is never
    part of a multi-byte character in the encodings judged, so lines cut nothing; a line too long
    is cut where no character can be, if it can: else the flag says it was cut."""
    lines: list[bytes] = []
    cut = False
    size = 0
    position = 0
    while size < _JUDGED and (found := _NON_ASCII.search(data, position)):
        start = data.rfind(b"\n", position, found.start()) + 1
        end = data.find(b"\n", found.start())
        end = len(data) if end < 0 else end
        line = data[start:end]
        if len(line) > _JUDGED - size:
            # Cut a long line after a byte below 0x30 (space, digits excepted): never part of a
            # multi-byte character (GB18030's four-byte ones hold digits).
            line = line[: _JUDGED - size]
            safe = max(line.rfind(bytes([byte]), -1024) for byte in range(0x30))
            line = line[: safe + 1] if safe >= 0 else line
            cut = safe < 0
        lines.append(line)
        size += len(line) + 1
        position = end + 1
    return b"\n".join(lines), cut


def _decoded(sample: bytes, encoding: str) -> str | None:
    """`sample` decoded, or None when the encoding cannot hold these bytes."""
    try:
        # Incremental: the sample may end inside a multi-byte character.
        return codecs.getincrementaldecoder(encoding)().decode(sample, final=False)
    except (LookupError, UnicodeDecodeError):
        return None


@functools.cache
def _ascii_compatible(encoding: str) -> bool:
    try:
        return _ASCII.decode(encoding) == _ASCII.decode("ascii")
    except (LookupError, UnicodeDecodeError):
        return False


def _oddity(text: str, bound: int) -> int:
    """How often `text` does what text does not: change script or turn to capitals inside a word,
    put a symbol between letters, write a Latin word of accented letters only, hold a control or
    private-use character. Counted exactly up to `bound`; beyond it, some number above."""
    odd = len(_STRAY.findall(text)) + len(_CONTROL_OR_PRIVATE.findall(text))
    # Each distinct token once: text repeats its words.
    tokens = Counter(_TOKEN.findall(text))
    for token, n in tokens.items():
        if odd > bound:
            break
        if not token.isascii():
            odd += n * _token_oddity(token, bound - odd)
    return odd


def _token_oddity(token: str, bound: int) -> int:
    odd = 0
    previous_script: str | None = None
    for position, char in enumerate(token):
        if odd > bound:
            return odd
        # Letters and marks (Thai tone marks) carry a script; digits and signs none.
        script = ("LATIN" if char.isalpha() else None) if char.isascii() else _script(char)
        if script is not None:
            odd += previous_script is not None and script != previous_script
            previous_script = script
        if position and char.isupper() and token[position - 1].islower():
            odd += not (char.isascii() and token[position - 1].isascii())  # "iPhone" is fine
    for match in _WORD.finditer(token):
        word = match.group()
        if len(word) > 1 and all(not c.isascii() and _script(c) == "LATIN" for c in word):
            odd += 1
        odd += sum(not char.isalpha() for char in word)  # "wi¹zka": ¹ is no letter
    return odd


def _latin_oddity(text: str, languages: dict[str, str], bound: int) -> tuple[int, int]:
    """(oddities and accented letters no language of the code page has, languages needed for the
    rest); oddities counted exactly up to `bound`."""
    letters: Counter[str] = Counter()
    for char, n in Counter(text).items():
        if not char.isascii() and char.isalpha() and _script(char) == "LATIN":
            letters[char.lower()] += n
    needed = 0
    left = dict(letters)
    while left:
        best = max(languages.values(), key=lambda alphabet: sum(left.get(c, 0) for c in alphabet))
        if not any(c in left for c in best):
            break
        needed += 1
        left = {c: n for c, n in left.items() if c not in best}
    unexplained = sum(left.values())
    return unexplained + _oddity(text, bound - unexplained), needed


def _latin_script(text: str) -> bool:
    """Every letter that belongs to a script is a Latin one (ª, º and µ belong to none)."""
    return all(_script(char) in (None, "LATIN") for char in set(text) if not char.isascii())


@functools.cache
def _script(char: str) -> str | None:
    """The script of a letter, Han and kana as one; None for what is no letter of a script."""
    words = unicodedata.name(char, "").split()
    if words and words[0] in ("HALFWIDTH", "FULLWIDTH"):
        words = words[1:]
    if not words:
        return None
    if words[0] == "CJK" and any(w.startswith("IDEOGRAPH") for w in words):
        return "CJK"
    if not any(w in _SCRIPT_WORDS for w in words):
        return None
    return _SCRIPT_GROUPS.get(words[0], words[0])


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
