"""Decode text files whose encoding nobody wrote down: BOMs, UTF-16 without BOM, UTF-8, then a
judgement among legacy encodings (cp1252, cp1250, GB18030, Shift-JIS, …).

charset-normalizer proposes the encodings that fit the bytes, but on a sentence or less its ranking
is arbitrary: it read Danish Latin-1 as cp1250 ("Ærøskøbing" as "Ćrřskřbing"), "café" as UTF-16
and "naïve" as Urdu cp1006. Docent judges every candidate reading itself, by what text does not do:
switch script inside a word ("S緌 Paulo"), switch to capitals inside a word ("PшнliЪ"), put a symbol
between two letters ("gę¶l±"), write a Latin word of accented letters only ("Ìîñêâà", Cyrillic
read as Windows-1252), or hold control characters; nor write Han characters or Hangul syllables
that no national character set counts among its everyday ones, or Korean without spaces (Japanese
Shift-JIS read as Korean does both).

Latin readings are judged also by language: how likely their letters are in the language of the
code page that explains them best, from each language's accented-letter frequencies ("født" is
Danish's ø, written once in 100 letters; Windows-1250 reads it "fřdt", with an ř Czech writes less
than half as often, in text three times as accented), and how much rarer the code page's files are
than Western European ones. A reading that differs and is nearly as likely makes the choice a
guess. A Latin reading of a multi-byte encoding (GB18030 holds every letter) is judged against all
the languages; Latin readings charset-normalizer proposes in other single-byte code pages (DOS,
Mac, cp1258) are not considered: without their languages' letters they would fit anything.
"""

from __future__ import annotations

import codecs
import functools
import math
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


# The accented letters of the languages written in Latin code pages, in percent of all the letters
# of their text (Wikipedia's letter-frequency tables; estimates where it has none). The ASCII
# letters count too: Croatian "bića rađaju" has 2 accents in 60 letters, where Icelandic
# "biæa raðaju" would have had 10.
_LETTERS: dict[str, dict[str, float]] = {
    "danish/norwegian": {"æ": 0.8, "ø": 0.9, "å": 1.1, "é": 0.02},
    "swedish": {"å": 1.34, "ä": 1.8, "ö": 1.31, "é": 0.02},
    "finnish": {"ä": 3.58, "ö": 0.44, "å": 0.003},
    "german": {"ä": 0.58, "ö": 0.44, "ü": 0.99, "ß": 0.31},
    "french": {
        "à": 0.49, "â": 0.05, "æ": 0.006, "ç": 0.09, "é": 1.5, "è": 0.27, "ê": 0.22,
        "ë": 0.01, "î": 0.05, "ï": 0.01, "ô": 0.02, "œ": 0.02, "ù": 0.06, "û": 0.06, "ÿ": 0.001,
    },
    "spanish": {"á": 0.5, "é": 0.43, "í": 0.73, "ñ": 0.31, "ó": 0.83, "ú": 0.17, "ü": 0.01},
    "portuguese": {
        "á": 0.4, "à": 0.07, "â": 0.1, "ã": 0.7, "ç": 0.5, "é": 0.4, "ê": 0.3, "í": 0.3,
        "ó": 0.3, "ô": 0.1, "õ": 0.1, "ú": 0.15,
    },
    "italian": {"à": 0.64, "è": 0.26, "é": 0.05, "ì": 0.03, "ò": 0.1, "ù": 0.17},
    "catalan": {
        "à": 0.5, "ç": 0.2, "è": 0.4, "é": 0.4, "í": 0.5, "ï": 0.05, "ò": 0.2, "ó": 0.3,
        "ú": 0.1, "ü": 0.02,
    },
    "dutch": {"é": 0.02, "è": 0.005, "ë": 0.05, "ï": 0.01, "ö": 0.005, "ü": 0.005},
    "icelandic": {
        "á": 1.8, "ð": 4.39, "é": 0.65, "í": 1.57, "ó": 0.99, "ú": 0.61, "ý": 0.23, "þ": 1.46,
        "æ": 0.87, "ö": 0.78,
    },
    "czech": {
        "á": 0.87, "č": 0.46, "ď": 0.02, "é": 0.63, "ě": 1.22, "í": 1.64, "ň": 0.01, "ó": 0.02,
        "ř": 0.38, "š": 0.69, "ť": 0.01, "ú": 0.05, "ů": 0.2, "ý": 1.0, "ž": 0.72,
    },
    "slovak": {
        "á": 2.1, "ä": 0.1, "č": 0.9, "ď": 0.1, "é": 0.5, "í": 1.4, "ĺ": 0.01, "ľ": 0.3,
        "ň": 0.1, "ó": 0.15, "ô": 0.15, "ŕ": 0.01, "š": 0.8, "ť": 0.4, "ú": 0.7, "ý": 1.0,
        "ž": 0.7,
    },
    "polish": {
        "ą": 0.7, "ć": 0.4, "ę": 1.04, "ł": 2.11, "ń": 0.36, "ó": 0.85, "ś": 0.81, "ź": 0.08,
        "ż": 0.71,
    },
    "hungarian": {
        "á": 3.4, "é": 4.3, "í": 0.5, "ó": 0.9, "ö": 1.0, "ő": 0.8, "ú": 0.3, "ü": 0.5, "ű": 0.1,
    },
    "croatian": {"č": 1.0, "ć": 0.6, "đ": 0.2, "š": 0.9, "ž": 0.7},
    "slovenian": {"č": 1.2, "š": 0.9, "ž": 0.8},
    "romanian": {"ă": 4.0, "â": 0.6, "î": 1.3, "ş": 1.5, "ţ": 1.0, "ș": 1.5, "ț": 1.0},
    "turkish": {
        "â": 0.05, "ç": 1.16, "ğ": 1.13, "ı": 5.11, "İ": 0.3, "î": 0.01, "ö": 0.78, "ş": 1.78,
        "û": 0.01, "ü": 1.85,
    },
    "lithuanian": {
        "ą": 0.5, "č": 0.4, "ę": 0.2, "ė": 1.6, "į": 0.6, "š": 1.2, "ų": 0.6, "ū": 0.5, "ž": 0.8,
    },
    "latvian": {
        "ā": 4.0, "č": 0.3, "ē": 1.7, "ģ": 0.1, "ī": 1.5, "ķ": 0.2, "ļ": 0.4, "ņ": 0.4,
        "š": 1.5, "ū": 0.5, "ž": 0.2,
    },
    "estonian": {"ä": 1.0, "õ": 1.0, "ö": 0.2, "ü": 0.9, "š": 0.01, "ž": 0.01},
}  # fmt: skip
_WESTERN = (
    "danish/norwegian", "swedish", "finnish", "german", "french", "spanish", "portuguese",
    "italian", "catalan", "dutch", "icelandic",
)  # fmt: skip
_CENTRAL = (
    "czech", "slovak", "polish", "hungarian", "croatian", "slovenian", "romanian", "german",
)  # fmt: skip
# The accented letters that are words by themselves; elsewhere a lone letter is a misreading
# ("Perchč č cosě"), unless it is an initial and a full stop follows.
_ONE_LETTER_WORDS = {
    "danish/norwegian": "å", "swedish": "åö", "icelandic": "áí", "french": "à", "italian": "è",
    "portuguese": "àé", "romanian": "î", "lithuanian": "į",
}  # fmt: skip


class _CodePage(NamedTuple):
    label: str
    languages: tuple[str, ...]
    # How much rarer its files are than Western European ones, in nats (a factor of 7 is 2): on
    # a word or two the languages' letters are about as likely, and the common code page wins.
    rarity: float


# The Latin code pages judged, in the order an exact tie prefers them: Windows-1252 first (the
# WHATWG default for unlabelled Western text); ISO-8859-1 for text holding a byte Windows-1252
# leaves undefined; ISO-8859-2, Central Europe's Unix code page.
_LATIN_CODE_PAGES = {
    "cp1252": _CodePage("Windows-1252 (Western European)", _WESTERN, 0.0),
    "latin-1": _CodePage("ISO-8859-1 (Western European)", _WESTERN, 0.0),
    "cp1250": _CodePage("Windows-1250 (Central European)", _CENTRAL, 2.0),
    "iso-8859-2": _CodePage("ISO-8859-2 (Central European)", _CENTRAL, 2.0),
    "cp1257": _CodePage(
        "Windows-1257 (Baltic)", ("lithuanian", "latvian", "estonian", "german"), 4.0
    ),
    "cp1254": _CodePage("Windows-1254 (Turkish)", ("turkish", "german", "french"), 4.0),
}
# A Latin reading from a multi-byte code page (GB18030 holds every letter; EUC-KR holds æ, ø, ß)
# can be any language: such bytes are nothing else.
_MULTI_BYTE = frozenset(
    {"gb18030", "big5", "big5hkscs", "cp950", "cp932", "shift_jis", "euc_jp", "euc_jis_2004",
     "euc_kr", "cp949", "johab"}
)  # fmt: skip
_ALL_LANGUAGES = tuple(_LETTERS)
# Of a letter in a language, a small share is a word of another language of the code page:
# a name, a quotation.
_BORROWED = 0.02
# A non-ASCII symbol costs as much as a letter written once in 500 ("¹" is no cheaper than "ą"),
# or once in 50,000 if no Latin code page has it: Latin text has no box drawing ("dignit┐").
_SYMBOL_COST = math.log(500)
_FOREIGN_SYMBOL_COST = math.log(50_000)
_LONE_COST = math.log(100)  # a lone letter the language never writes alone
# Latin readings this much less likely than the best (in nats) are not a real alternative.
_MARGIN = 6.0
_HANGUL_WORD = 8  # syllables: longer runs without a space are no Korean words
# The first level of each national Han character set, by its bytes: the everyday characters.
_EVERYDAY_HAN = (("gb2312", 0xB0A1, 0xD7FE), ("big5", 0xA440, 0xC67E), ("euc_jp", 0xB0A1, 0xCFFE))

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
_LONE_LETTER = re.compile(r"(?<![^\W\d_])[^\W\d_](?![^\W\d_]|\.)")  # not an initial
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
    # Latin: how unlikely its letters are, in nats, in its likeliest language (plus the code
    # page's rarity); else charset-normalizer's measure of mess
    cost: float
    rank: int  # preference on a tie: the code page's order, then charset-normalizer's


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
    for rank, (code_page, (label, languages, rarity)) in enumerate(_LATIN_CODE_PAGES.items()):
        if (text := _decoded(sample, code_page)) is not None:
            odd, cost = _latin_oddity(text, languages, bound)
            bound = min(bound, odd)
            readings.append(_Reading(code_page, label, text, True, odd, rarity + cost, rank))
    for rank, (encoding, mess) in enumerate(chaos.items(), start=len(readings)):
        text = _decoded(sample, encoding)
        if text is None:
            continue
        label = _LABELS.get(encoding, encoding)
        if not _latin_script(text):
            odd = _oddity(text, bound)
            readings.append(_Reading(encoding, label, text, False, odd, mess, rank))
        elif encoding in _MULTI_BYTE:
            odd, cost = _latin_oddity(text, _ALL_LANGUAGES, bound)
            readings.append(_Reading(encoding, label, text, True, odd, cost, rank))
        else:  # a single-byte Latin code page not judged above (DOS, Mac): it would fit anything
            continue
        bound = min(bound, odd)
    if not readings:
        raise NotTextError("not text in any known encoding")
    readings.sort(key=lambda r: (r.odd, not r.latin, r.cost, r.rank))
    best = readings[0]
    tied = any(_as_good(other, best) and other.text != best.text for other in readings[1:])
    non_ascii = len(best.text) - len(best.text.encode("ascii", "ignore"))
    return best, tied or best.odd > 0.1 * non_ascii


def _as_good(other: _Reading, best: _Reading) -> bool:
    if other.odd != best.odd:
        return False
    if other.latin and best.latin:
        return other.cost - best.cost < _MARGIN
    if not other.latin and not best.latin:
        return other.cost == best.cost
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
    private-use character, write a Korean phrase without spaces; and each rare Han character or
    Hangul syllable once. Counted exactly up to `bound`; beyond it, some number above."""
    odd = len(_STRAY.findall(text)) + len(_CONTROL_OR_PRIVATE.findall(text))
    # Each distinct token once: text repeats its words.
    tokens = Counter(_TOKEN.findall(text))
    rare: set[str] = set()  # once each: a name may repeat one
    for token, n in tokens.items():
        if odd + len(rare) > bound:
            break
        if not token.isascii():
            odd += n * _token_oddity(token, bound - odd)
            rare.update(char for char in token if _rare(char))
    return odd + len(rare)


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
    odd += sum(_script(char) == "HANGUL" for char in token) > _HANGUL_WORD
    for match in _WORD.finditer(token):
        word = match.group()
        if len(word) > 1 and all(not c.isascii() and _script(c) == "LATIN" for c in word):
            odd += 1
        odd += sum(not char.isalpha() for char in word)  # "wi¹zka": ¹ is no letter
    return odd


def _latin_oddity(text: str, languages: tuple[str, ...], bound: int) -> tuple[int, float]:
    """(oddities and accented letters no language of the code page has, how unlikely the letters
    are in the likeliest of its languages, in nats); oddities counted exactly up to `bound`."""
    letters: Counter[str] = Counter()
    ascii_letters = 0
    symbols = 0.0
    for char, n in Counter(text).items():
        if char.isascii():
            ascii_letters += n * char.isalpha()
        elif char.isalpha() and _script(char) == "LATIN":
            letters[_folded(char)] += n
        elif not char.isspace():
            symbols += n * (_SYMBOL_COST if _latin_symbol(char) else _FOREIGN_SYMBOL_COST)
    lone = Counter(_folded(c) for c in _LONE_LETTER.findall(text) if not c.isascii())
    models = _language_models(languages)
    unexplained = sum(n for letter, n in letters.items() if letter not in models[0].letters)
    cost = symbols + min(model.cost(ascii_letters, letters, lone) for model in models)
    return unexplained + _oddity(text, bound - unexplained), cost


class _LanguageModel(NamedTuple):
    letters: dict[str, float]  # log-probability of each accented letter of the code page's
    ascii: float  # log-probability of an ASCII letter
    one_letter_words: str

    def cost(self, ascii_letters: int, letters: Counter[str], lone: Counter[str]) -> float:
        cost = -ascii_letters * self.ascii
        cost -= sum(n * self.letters[c] for c, n in letters.items() if c in self.letters)
        return cost + sum(n for c, n in lone.items() if c not in self.one_letter_words) * _LONE_COST


@functools.cache
def _language_models(languages: tuple[str, ...]) -> list[_LanguageModel]:
    """One per language; each lends a share of its probability to the others' letters."""
    shared: Counter[str] = Counter()
    for language in languages:
        shared.update({c: f / len(languages) for c, f in _LETTERS[language].items()})
    models = []
    for language in languages:
        own = _LETTERS[language]
        share = {
            c: ((1 - _BORROWED) * own.get(c, 0) + _BORROWED * f) / 100 for c, f in shared.items()
        }
        models.append(
            _LanguageModel(
                {c: math.log(p) for c, p in share.items()},
                math.log(1 - sum(share.values())),
                _ONE_LETTER_WORDS.get(language, ""),
            )
        )
    return models


def _folded(letter: str) -> str:
    lower = letter.lower()
    return lower if len(lower) == 1 else letter  # "İ" lowers to two characters


@functools.cache
def _rare(char: str) -> bool:
    """A Han character none of GB2312, Big5 and JIS X 0208 counts among its everyday ones (their
    first levels), or a Hangul syllable beyond KS X 1001's 2,350: Shift-JIS kana read as Korean
    or as Chinese is a string of these."""
    name = unicodedata.name(char, "")
    if name.startswith("HANGUL SYLLABLE"):
        return len(char.encode("euc_kr", "ignore")) != 2  # CPython spells the others in 8 bytes
    if name.startswith("CJK UNIFIED IDEOGRAPH"):
        return not any(
            low <= int.from_bytes(char.encode(encoding, "ignore"), "big") <= high
            for encoding, low, high in _EVERYDAY_HAN
        )
    return False


@functools.cache
def _latin_symbol(char: str) -> bool:
    """A symbol Latin text is written with: one of a Latin code page's."""
    return any(_decoded(char.encode(cp, "ignore"), cp) == char for cp in _LATIN_CODE_PAGES)


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
