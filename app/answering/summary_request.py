"""Whether a question asks for a summary ("what is this document about?", "summarize chapter 3",
"这份文档讲了什么", "总结第三章"), and of what: read by rules, in microseconds, before any search.

Only requests about a document or one of its chapters count: "summarize the refund policy" asks
about a topic, which retrieval answers better than a summary of everything.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from app.answering.sections import NUMBER_WORDS, number_of

_DOCUMENT = r"(?:document|doc|file|pdf|paper|book|report|text|article|manual|this)"
_CHAPTER_WORDS = r"(?:chapter|chap\.|ch\.|part|section)"
_NUMBER = rf"(\d{{1,3}}|{'|'.join(NUMBER_WORDS)})"
_HAN_NUMBER = r"([0-9零一二三四五六七八九十两]{1,4})"

_WHOLE = re.compile(
    rf"^\s*(?:what(?:\s+is|['’]s)\s+(?:(?:this|the|that)\s+{_DOCUMENT}|this|it)\s+about"
    rf"|what\s+(?:does|do)\s+(?:this|the|that)\s+{_DOCUMENT}\s+(?:say|cover|contain|talk about)"
    rf"|(?:please\s+)?(?:summari[sz]e|sum up|give (?:me )?(?:a |an )?(?:summary|overview) of)"
    rf"\s+(?:(?:this|the|that|the whole|the entire)\s+{_DOCUMENT})"
    rf"|(?:please\s+)?(?:summari[sz]e|sum up)(?:\s+(?:it|this))?"
    rf"|(?:give (?:me )?)?(?:a |an )?(?:summary|overview|tl;?dr)(?:\s+please)?)"
    rf"\s*[?.!]*\s*$",
    re.IGNORECASE,
)
_PART = re.compile(
    rf"^\s*(?:please\s+)?(?:summari[sz]e|sum up|give (?:me )?(?:a |an )?(?:summary|overview) of"
    rf"|what(?:\s+is|['’]s)\s+in|what\s+does)\s+(?:the\s+)?{_CHAPTER_WORDS}\s*{_NUMBER}\b"
    rf"(?:\s+(?:say|cover|about))?(?:\s+please)?\s*[?.!]*\s*$"
    rf"|^\s*(?:please\s+)?(?:summari[sz]e|sum up)\s+(?:the\s+)?{_CHAPTER_WORDS}\s+"
    rf"(?:on|about|called|titled)\s+[\"“']?(.+?)[\"”']?\s*[?.!]*\s*$",
    re.IGNORECASE,
)
_ZH_DOCUMENT = r"(?:这|本|该|此)(?:份|个|篇|本)?(?:文档|文件|文章|书|报告|资料)"
_ZH_WHOLE = re.compile(
    rf"^\s*(?:{_ZH_DOCUMENT}(?:主要)?(?:讲|说|写|介绍|谈)了?(?:些)?什么|{_ZH_DOCUMENT}(?:是)?关于什么"
    rf"|{_ZH_DOCUMENT}的(?:主要)?内容是?什么"
    rf"|(?:请)?(?:总结|概括|摘要|归纳)(?:一下)?(?:{_ZH_DOCUMENT}|全文)?(?:的)?(?:内容|要点)?)"
    r"\s*[?？。!！]*\s*$"
)
_ZH_PART = re.compile(
    rf"^\s*(?:(?:请)?(?:总结|概括|归纳)(?:一下)?第\s*{_HAN_NUMBER}\s*[章节部篇](?:的)?(?:内容|要点)?"
    rf"|第\s*{_HAN_NUMBER}\s*[章节部篇](?:主要)?(?:讲|说|写)了?(?:些)?什么)"
    r"\s*[?？。!！]*\s*$"
)


@dataclass(frozen=True, slots=True)
class SummaryRequest:
    """A summary of the whole document, or of a chapter by number or by its heading's words."""

    chapter: int | None = None
    title: str | None = None

    @property
    def part(self) -> str:
        """How a stored summary names its part ('' for the whole document)."""
        if self.chapter is not None:
            return f"chapter {self.chapter}"
        return f"titled {self.title}" if self.title else ""


def summary_request(question: str) -> SummaryRequest | None:
    if _WHOLE.match(question) or _ZH_WHOLE.match(question):
        return SummaryRequest()
    if match := _PART.match(question):
        number, title = match.group(1), match.group(2)
        return SummaryRequest(chapter=number_of(number)) if number else SummaryRequest(title=title)
    if match := _ZH_PART.match(question):
        return SummaryRequest(chapter=number_of(match.group(1) or match.group(2)))
    return None


def chapter_request(chapter: str | None) -> SummaryRequest:
    """A chapter named on a command line or by a tool: its number, or words of its heading."""
    if chapter is None or not chapter.strip():
        return SummaryRequest()
    number = number_of(chapter)
    return SummaryRequest(chapter=number) if number is not None else SummaryRequest(title=chapter)
