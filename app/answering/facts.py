"""What a sentence states that can be checked against a passage: its numbers however written
("2,048" is 2048, "five days" is 5 days, "五天" too), months, versions and identifiers, and the
names it gives.

Support judged by shared words alone passed inventions: "Debian 12 was released on August 6,
2010" is made of a passage's words with a wrong date. So an answer's sentence is supported only
when its cited passages state every fact it carries (citations.py); one that states a fact no
passage does is shown as unverified, never as cited.
"""

from __future__ import annotations

import calendar
import re
from dataclasses import dataclass

from app.cjk import CJK_RUN
from app.index.terms import stated_values

# 1,234 / 1,234.5 (and a thin or no-break space as the separator): one number.
_GROUPED = re.compile(r"(?<![\w.,])\d{1,3}(?:[,\u202f\u00a0]\d{3})+(?:\.\d+)?(?![\w,]*\d)")
_NUMBER = re.compile(r"^\d+(?:\.\d+)?$")
_ORDINAL = re.compile(r"\b(\d+)(?:st|nd|rd|th)\b", re.IGNORECASE)
_ISO_DATE = re.compile(r"\b(\d{4})-(\d{2})-(\d{2})\b")
_LIST_ITEM = re.compile(r"(?m)^\s*(?:\d{1,2}[.)]|[-*•])\s+")
_WORD = re.compile(r"[A-Za-z][A-Za-z'’-]*")
_LATIN_WORDS = re.compile(r"[^\W\d_]+")
_POSSESSIVE = re.compile(r"['’]s$")

_UNITS = {
    word: value
    for value, word in enumerate(
        "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen "
        "fifteen sixteen seventeen eighteen nineteen".split()
    )
}
_TENS = {
    "twenty": 20,
    "thirty": 30,
    "forty": 40,
    "fifty": 50,
    "sixty": 60,
    "seventy": 70,
    "eighty": 80,
    "ninety": 90,
}
_SCALES = {"hundred": 100, "thousand": 1000, "million": 1_000_000, "billion": 1_000_000_000}
_ORDINAL_WORDS = {
    "second": 2,
    "third": 3,
    "fourth": 4,
    "fifth": 5,
    "sixth": 6,
    "seventh": 7,
    "eighth": 8,
    "ninth": 9,
    "tenth": 10,
    "twice": 2,
    "double": 2,
    "dozen": 12,
}
# "one" reads as a pronoun ("one of the"), "first" as an order of steps, "two" as the question's
# own pair ("the two releases"): as a claim's facts they would flag sentences whose passage never
# needed to say 1 or 2; a passage's still count.
_TOO_COMMON = {"one", "first", "two"}
_MONTHS = {
    name: number
    for number, names in enumerate(
        (
            ("january", "jan"),
            ("february", "feb"),
            ("march", "mar"),
            ("april", "apr"),
            ("may",),
            ("june", "jun"),
            ("july", "jul"),
            ("august", "aug"),
            ("september", "sep", "sept"),
            ("october", "oct"),
            ("november", "nov"),
            ("december", "dec"),
        ),
        start=1,
    )
    for name in names
}
_CJK_DIGITS = {
    "零": 0,
    "〇": 0,
    "一": 1,
    "二": 2,
    "两": 2,
    "三": 3,
    "四": 4,
    "五": 5,
    "六": 6,
    "七": 7,
    "八": 8,
    "九": 9,
}
_CJK_SCALES = {"十": 10, "百": 100, "千": 1000, "万": 10_000, "亿": 100_000_000}
_CJK_NUMERAL = re.compile(r"[零〇一二两三四五六七八九十百千万亿]+")
# A Chinese numeral is a count only before a measure word: 一 alone is also "a", "once", "all".
_CJK_MEASURE = re.compile(
    r"(?:个|天|年|月|日|号|次|名|人|项|条|页|章|节|种|位|元|岁|周|星期|小时|分钟|分|秒|倍|版|步|台|份|本|张|行|列|队|场|届)"
)
# Capitalised words that name nothing: sentence glue a model capitalises.
_NOT_NAMES = frozenset(
    "i a an the this that these those it its he she they we you yes no not if in on at of for to "
    "and or but so as by from with however also each every all both there here then when where "
    "what which who how why please note see".split()
)


@dataclass(frozen=True, slots=True)
class Facts:
    numbers: frozenset[str]  # normalised: "2048", "5", "1.5"
    values: frozenset[str]  # versions and identifiers, whole: "1.5-2.1", "fnm_pathname"
    months: frozenset[int]
    names: frozenset[str]  # casefolded words of the names a sentence gives

    def __len__(self) -> int:
        return len(self.numbers) + len(self.values) + len(self.months) + len(self.names)

    @property
    def specific(self) -> bool:
        """No bare short number among them: a "6" is in many passages, "3.8" or "2019" is not."""
        return all(len(number) >= 3 or "." in number for number in self.numbers)

    def described(self) -> list[str]:
        """The facts as a user reads them (what no passage states)."""
        months = [calendar.month_name[month] for month in sorted(self.months)]
        return sorted(self.numbers | self.values) + months + sorted(self.names)


NO_FACTS = Facts(frozenset(), frozenset(), frozenset(), frozenset())


@dataclass(frozen=True, slots=True)
class Evidence:
    """What a passage states: every number however written, its months, values, and its words
    (`facts.names`: every word, casefolded, is where a claim's name is looked up)."""

    facts: Facts

    @classmethod
    def of(cls, text: str) -> Evidence:
        numbers, values = _numbers_and_values(text, claim=False)
        months = {_MONTHS[w.casefold()] for w in _WORD.findall(text) if w.casefold() in _MONTHS}
        months |= {int(match[2]) for match in _ISO_DATE.finditer(text) if 1 <= int(match[2]) <= 12}
        # Chinese runs on into Latin words ("使用YYYYMMDD作为"): they are cut apart first.
        words = frozenset(w.casefold() for w in _LATIN_WORDS.findall(CJK_RUN.sub(" ", text)))
        return cls(Facts(numbers, values, frozenset(months), words))

    def lacks(self, claim: Facts) -> Facts:
        """The claim's facts this passage does not state."""
        return Facts(
            claim.numbers - self.facts.numbers,
            claim.values - self.facts.values,  # a version or identifier, stated whole
            claim.months - self.facts.months,
            claim.names - self.facts.names,
        )


def facts_of(sentence: str) -> Facts:
    """The checkable facts of an answer's sentence."""
    sentence = _LIST_ITEM.sub(" ", sentence)
    numbers, values = _numbers_and_values(sentence, claim=True)
    return Facts(numbers, values, frozenset(_months(sentence)), frozenset(_names(sentence)))


def ungrouped(text: str) -> str:
    """Numbers written without their thousands separators: "2,048" states 2048."""
    return _GROUPED.sub(lambda m: re.sub(r"[,\u202f\u00a0]", "", m[0]), text)


def _numbers_and_values(text: str, claim: bool) -> tuple[frozenset[str], frozenset[str]]:
    text = _ORDINAL.sub(r"\1", ungrouped(text))
    numbers: set[str] = set()
    values: set[str] = set()
    for value in stated_values(text):
        if _NUMBER.match(value):
            numbers.add(_normal(value))
        elif not value.isdigit():
            values.add(value)
    numbers |= _spelled(text, claim)
    numbers |= _chinese(text, claim)
    if not claim:  # an ISO date states its parts: "2010-08-06" says August and 6
        for match in _ISO_DATE.finditer(text):
            numbers |= {_normal(part) for part in match.groups()}
    return frozenset(numbers), frozenset(values)


def _normal(number: str) -> str:
    """An integer without leading zeros ("08" is 8); a dotted number as written: 5.10 is a
    kernel version, not 5.1."""
    return number if "." in number else str(int(number))


def _spelled(text: str, claim: bool) -> set[str]:
    """English number words, "twenty-one" and "three hundred" included."""
    found: set[str] = set()
    total: int | None = None
    for word in re.findall(r"[a-z]+", text.casefold()):
        if claim and word in _TOO_COMMON:
            word = ""
        if word in _UNITS or word in _TENS:
            total = (total or 0) + _UNITS.get(word, _TENS.get(word, 0))
        elif word in _SCALES and total is not None:
            total *= _SCALES[word]
        else:
            if total is not None:
                found.add(str(total))
                total = None
            if word in _ORDINAL_WORDS:
                found.add(str(_ORDINAL_WORDS[word]))
            elif word == "first":
                found.add("1")
    if total is not None:
        found.add(str(total))
    return found


def _chinese(text: str, claim: bool) -> set[str]:
    found: set[str] = set()
    for run in CJK_RUN.findall(text):
        for match in _CJK_NUMERAL.finditer(run):
            counted = _CJK_MEASURE.match(run, match.end()) is not None
            if claim and not counted:
                continue
            if (value := _cjk_value(match[0])) is not None:
                found.add(str(value))
    return found


def _cjk_value(numeral: str) -> int | None:
    """一千二百 = 1200, 十五 = 15, 二〇一九 = 2019 (digit by digit)."""
    if all(character in _CJK_DIGITS for character in numeral):
        return int("".join(str(_CJK_DIGITS[character]) for character in numeral))
    total, section, digit = 0, 0, None
    for character in numeral:
        if character in _CJK_DIGITS:
            digit = _CJK_DIGITS[character]
        elif character in ("万", "亿"):
            total = (total + section + (digit or 0)) * _CJK_SCALES[character]
            section, digit = 0, None
        else:
            section += (1 if digit is None else digit) * _CJK_SCALES[character]
            digit = None
    return total + section + (digit or 0)


def _months(sentence: str) -> set[int]:
    """Month names next to a number ("August 6", "6 May 2019"): "may" alone is a verb."""
    words = re.findall(r"[A-Za-z]+\.?|\d+", sentence)
    found: set[int] = set()
    for i, word in enumerate(words):
        name = word.rstrip(".").casefold()
        if name in _MONTHS and word[0].isupper():
            near = words[max(i - 1, 0) : i] + words[i + 1 : i + 2]
            if any(w.isdigit() for w in near):
                found.add(_MONTHS[name])
    return found


def _names(sentence: str) -> set[str]:
    """Capitalised words past the sentence's first word (and CamelCase or ALL-CAPS ones
    anywhere): the names a sentence gives, which its passage must give too."""
    found: set[str] = set()
    for i, match in enumerate(_WORD.finditer(sentence)):
        word = _POSSESSIVE.sub("", match[0]).strip("'’-")
        folded = word.casefold()
        if len(word) < 2 or folded in _NOT_NAMES or folded in _MONTHS:
            continue
        shaped = word[1:] != word[1:].lower()  # CamelCase, ALL-CAPS
        if (i > 0 and word[0].isupper()) or shaped:
            found.update(p.casefold() for p in _LATIN_WORDS.findall(word) if len(p) > 1)
    return found
