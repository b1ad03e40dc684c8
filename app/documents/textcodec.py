"""Decode text files whose encoding nobody wrote down: BOMs, UTF-16 without BOM, UTF-8, then
charset-normalizer for legacy encodings (GB18030, Shift-JIS, cp1252, …)."""

from __future__ import annotations

import codecs
import re

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


class NotTextError(ValueError):
    """The bytes are not text in any encoding we can recognise."""


def decode_text(data: bytes) -> tuple[str, str]:
    """Return (text, encoding name). Raises NotTextError for binary data."""
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
    return _checked(str(best), _canonical(best.encoding))


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


def _checked(text: str, encoding: str) -> tuple[str, str]:
    if len(_CONTROL.findall(text[:65536])) > 0.05 * max(1, len(text[:65536])):
        raise NotTextError("binary data (mostly control characters)")
    return text, encoding
