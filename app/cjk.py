"""Chinese, Japanese and Korean text has no spaces between words: helpers that account for it."""

from __future__ import annotations

import re

# Han (incl. extension A and compatibility ideographs), kana, hangul.
_CJK_CLASS = (
    "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff\U00020000-\U0002ebef"
)
# One pattern for runs and single characters: compiling a class this wide takes ~5 ms each.
CJK_RUN = re.compile(f"[{_CJK_CLASS}]+")


def has_cjk(text: str) -> bool:
    return CJK_RUN.search(text) is not None


def is_cjk_char(char: str) -> bool:
    return len(char) == 1 and CJK_RUN.fullmatch(char) is not None


def bigrams(run: str) -> list[str]:
    """Overlapping character bigrams of a CJK run: the classic word-free index for CJK search."""
    if len(run) < 2:
        return [run] if run else []
    return [run[i : i + 2] for i in range(len(run) - 1)]


def segment_for_index(text: str) -> str:
    """Text with each CJK run replaced by its space-separated bigrams, for a unicode61 FTS index."""
    if text.isascii():
        return text
    return CJK_RUN.sub(lambda match: " " + " ".join(bigrams(match.group())) + " ", text)


def estimate_tokens(text: str) -> int:
    """A tokenizer-free estimate: ~4 characters per token in Latin text, 1 per CJK character."""
    if text.isascii():
        return (len(text) + 3) // 4
    cjk = sum(map(len, CJK_RUN.findall(text)))
    return cjk + (len(text) - cjk + 3) // 4
