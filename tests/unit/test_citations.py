import json
from dataclasses import asdict, dataclass, replace

from app.answering import Source
from app.answering.citations import (
    Attribution,
    CitationTracker,
    claims_citing,
    mark,
    supporting_sentences,
)


@dataclass(frozen=True)
class Src:
    number: int
    text: str
    heading: str | None = None
    document: str = "notes.txt"


SOURCES = [
    Src(1, "Introduction. This report describes the data governance programme of Northwind Ltd."),
    Src(2, "Customer invoices must be retained for seven years after the end of the fiscal year."),
    Src(3, "员工档案在员工离职后必须保存十年。"),
]


def attributions(tracker: CitationTracker, pieces: list[str]) -> list[Attribution]:
    found = []
    for piece in pieces:
        found += tracker.feed(piece)
    return found + tracker.finish()


def stream(tracker: CitationTracker, pieces: list[str]) -> list[tuple[int, int, bool]]:
    """The citations: the sentences a source supports (an unverified one is not cited)."""
    found = attributions(tracker, pieces)
    return [(a.number, a.end, a.explicit) for a in found if not a.missing]


def test_a_finished_sentence_is_attributed_to_the_source_that_supports_it() -> None:
    tracker = CitationTracker(SOURCES, "How long are invoices kept?")
    text = "Invoices are retained for seven years after the fiscal year."
    found = stream(
        tracker, ["Invoices are retained", " for seven years", " after the fiscal year."]
    )
    assert found == [(2, len(text), False)]
    assert tracker.grounded_share == 1.0


def test_a_sentence_is_only_judged_once_the_next_one_begins() -> None:
    tracker = CitationTracker(SOURCES)
    assert tracker.feed("Invoices are retained for seven years.") == []
    assert [a.number for a in tracker.feed(" The")] == [2]


def test_abbreviations_do_not_end_a_sentence_and_inventions_are_not_cited() -> None:
    tracker = CitationTracker(SOURCES, "Who is the CEO of Northwind?")
    assert stream(tracker, ["The CEO of Northwind Ltd.", " is John", " Doe."]) == []
    assert tracker.grounded_share == 0.0


def test_explicit_markers_are_honoured_and_unknown_numbers_ignored() -> None:
    tracker = CitationTracker(SOURCES)
    found = stream(tracker, ["See [2] and [1, 7]", "."])
    assert found[:2] == [(2, 7, True), (1, 18, True)]


def test_chinese_sentences_are_attributed_by_bigrams() -> None:
    tracker = CitationTracker(SOURCES, "员工档案要保存多久？")
    assert [a.number for a in tracker.feed("员工离职后必须保存十年。")] == [3]


def test_answers_without_content_words_count_as_no_sentences() -> None:
    tracker = CitationTracker(SOURCES, "Is it so?")
    assert stream(tracker, ["Yes, it is."]) == []
    assert tracker.grounded_share is None


# From the manuals evaluation: answers a 0.5B model wrote, whose page went uncited before.
MANUAL = [
    Src(
        1, "A security upload for bookworm gets the version 1.5-3+deb12u1, as the upload rules say."
    ),
    Src(
        2, "Information about the archive: uploads are processed by dak, with information for all."
    ),
    Src(3, "CUPS 打印系统的浏览器界面：http://localhost:631/"),
]


def test_an_answers_lead_in_does_not_dilute_or_misplace_its_support() -> None:
    tracker = CitationTracker(MANUAL, "What version would a security upload to bookworm get?")
    answer = (
        "Based on the information provided in the Debian Developer's Reference, a security "
        "upload to bookworm would get version 1.5-3+deb12u1."
    )
    assert [number for number, _, _ in stream(tracker, [answer])] == [1]


def test_the_source_stating_the_answers_value_is_cited() -> None:
    tracker = CitationTracker(MANUAL, "CUPS 打印系统的浏览器界面在哪个端口？")
    found = stream(tracker, ["根据 Debian 参考卡片，CUPS 打印系统的浏览器界面在端口 631。"])
    assert [number for number, _, _ in found] == [3]


def test_a_sentence_sharing_neither_a_value_nor_enough_words_stays_unsupported() -> None:
    tracker = CitationTracker(MANUAL, "Who processes uploads?")
    assert stream(tracker, ["Based on the sources, the moon is made of green cheese."]) == []
    assert tracker.grounded_share == 0.0


def test_a_value_stated_only_in_a_sources_heading_cites_that_source() -> None:
    changelog = [
        Src(1, "* New: Style.GWOYEU supports Gwoyeu Romatzyh.", "0.54.0 (2025-03-30)"),
        Src(2, "* New: Style.WADEGILES supports Wade-Giles.", "0.42.0 (2021-05-09)"),
    ]
    tracker = CitationTracker(changelog, "Which version added Style.GWOYEU?")
    assert [n for n, _, _ in stream(tracker, ["Style.GWOYEU was added in 0.54.0."])] == [1]


def test_a_version_or_identifier_is_matched_whole_not_by_its_parts() -> None:
    # Split into words, "v2.26.0" shares "26" and "0" with every 2.2x entry, and FNM_PATHNAME
    # becomes two words that one source holds less often than a sentence's other words.
    changelog = [
        Src(1, "* Requests now supports Brotli compression, if installed.", "2.26.0 (2021-07-13)"),
        Src(2, "* Support for Python 2.6 was dropped; v2 of the API is the default.", "2.25.0"),
        Src(3, "Patterns follow fnmatch(3) without the FNM_PATHNAME flag.", "6.9. Files"),
    ]
    brotli = CitationTracker(changelog, "Since which Requests release is Brotli supported?")
    assert [n for n, _, _ in stream(brotli, ["Since Requests v2.26.0, it supports it."])] == [1]
    flag = CitationTracker(changelog, "Without which flag do Files patterns follow fnmatch?")
    assert [n for n, _, _ in stream(flag, ["The sources give this name: FNM_PATHNAME"])] == [3]


def test_a_one_word_answer_cites_the_only_source_holding_that_word() -> None:
    licences = [
        Src(1, "Use the short name MIT only for the licence text that matches it."),
        Src(2, "The Expat licence is often called MIT; please use Expat instead."),
    ]
    tracker = CitationTracker(licences, "Which short name is used instead of MIT?")
    assert [n for n, _, _ in stream(tracker, ["Please use Expat."])] == [2]
    # Not when it is one word among many that no source states.
    assert stream(tracker, [" Expat, says John Doe of Contoso."]) == []


def test_each_supported_sentence_ends_in_its_sources_marker() -> None:
    first, second = " Invoices are kept seven years.", " The Head of Compliance approves it.\n"
    # Offsets into the text as it streamed (leading space included), as the tracker gives them.
    attributions = [
        Attribution(1, len(first), 1.0, explicit=False),
        Attribution(2, len(first + second), 1.0, explicit=False),
    ]
    assert mark(first + second, attributions) == (
        "Invoices are kept seven years [1]. The Head of Compliance approves it [2]."
    )
    assert mark("人事记录保存七年。", [Attribution(3, 9, 1.0, explicit=False)]) == (
        "人事记录保存七年[3]。"  # no space before a CJK marker
    )


def test_an_answer_whose_model_cites_is_left_as_it_is() -> None:
    attributions = [Attribution(1, 5, 1.0, explicit=True), Attribution(1, 6, 1.0, explicit=False)]
    assert mark("七年[1]。", attributions) == "七年[1]。"
    assert mark(" Nothing supported. ", []) == "Nothing supported."


def test_a_real_answer_streamed_through_the_tracker_is_marked_where_it_is_supported() -> None:
    tracker = CitationTracker(SOURCES, "How long are invoices kept?")
    pieces = ["Invoices are retained", " for seven years.", " 员工档案保存十年。"]
    attributions = [a for piece in pieces for a in tracker.feed(piece)] + tracker.finish()
    assert mark("".join(pieces), attributions) == (
        "Invoices are retained for seven years [2]. 员工档案保存十年[3]。"
    )


RELEASES = [
    Src(1, "Debian 12 bookworm was released on 2023-06-10, with Linux kernel 6.1."),
    Src(2, "The Harbor Handbook's English edition was published in 2019 by Quay Press."),
    Src(3, "Annual leave is five days; the upload limit is 2,048 MB per file."),
    Src(4, "年假为五天，上传上限为每个文件2048兆字节，单位写作MiB即可。"),
]


def verdicts(sentence: str, question: str = "") -> tuple[list[int], tuple[str, ...]]:
    """The sources a sentence is cited to, and the facts it was left unverified for."""
    found = attributions(CitationTracker(RELEASES, question), [sentence])
    cited = [a.number for a in found if not a.missing]
    missing = tuple(fact for a in found for fact in a.missing)
    return cited, missing


def test_a_sentence_made_of_a_passages_words_with_a_wrong_fact_is_unverified() -> None:
    """Support is the facts, not the words: the right words around a wrong date, number or
    name leave the sentence uncited and say which fact no passage states."""
    assert verdicts("Debian 12 bookworm was released on 10 June 2023.") == ([1], ())
    assert verdicts("Debian 12 bookworm was released on August 6, 2010.") == (
        [],
        ("2010", "August"),  # 6 is June's number: the date's month
    )
    assert verdicts("Debian 12 bookworm was released with Linux kernel 5.10.") == ([], ("5.10",))
    assert verdicts("Debian 12 bookworm was released with Linux kernel 6.10.") == ([], ("6.10",))
    assert verdicts("The English edition was published in 2019 by Lotus Books.") == (
        [],
        ("books", "lotus"),
    )
    assert verdicts("The English edition was published in 2019 by Quay Press.") == ([2], ())
    # A possessive is the name's, not a name "s" of its own.
    lotus = [Src(1, "Lotus Books published the Chinese edition in 2022.")]
    found = attributions(CitationTracker(lotus), ["Lotus Books’s Chinese edition came in 2022."])
    assert [(a.number, a.missing) for a in found] == [(1, ())]


def test_facts_are_compared_however_they_are_written() -> None:
    assert verdicts("Staff get 5 days of annual leave.")[0] == [3]
    assert verdicts("Staff get six days of annual leave.") == ([], ("6",))
    assert verdicts("The upload limit is 2048 MB per file.")[0] == [3]
    assert verdicts("The upload limit is 2,084 MB per file.")[1] == ("2084",)
    assert verdicts("年假是5天。")[0] == [4]
    assert verdicts("年假是七天。") == ([], ("7",))
    # A name written into Chinese text without spaces is still the passage's word.
    assert verdicts("上传上限的单位是MiB。") == ([4], ())
    # A name the question gave is no invention of the answer's; a number it gave is a fact the
    # passage must state: "Debian 15" beside a passage's "forky" (Debian 14's) is no support.
    assert verdicts("The Lotus handbook came in 2019.", "When did the Lotus handbook come?") == (
        [2],
        (),
    )
    assert verdicts("Debian 15 bookworm was released on 10 June 2023.", "Debian 15?")[1] == ("15",)


def test_a_sentence_joining_two_passages_cites_both() -> None:
    cited, missing = verdicts("Bookworm came out in 2023, and the English edition in 2019.")
    assert (sorted(cited), missing) == ([1, 2], ())


def test_the_first_sentence_stating_facts_is_the_answers_key() -> None:
    tracker = CitationTracker(RELEASES, "When was bookworm released?")
    attributions(tracker, ["It was released in 2010. Its kernel is Linux 6.1."])
    assert tracker.facts_verified == [False, True]
    assert tracker.key_unverified
    tracker = CitationTracker(RELEASES, "When was bookworm released?")
    attributions(tracker, ["It was released on 2023-06-10. It ships kernel 6.3."])
    assert not tracker.key_unverified
    # A computed value is Docent's own: not an invention.
    tracker = CitationTracker(RELEASES, "How many years after the handbook came bookworm?")
    tracker.computed("2023 - 2019 = 4")
    sentence = "Bookworm was released 4 years after the English edition."
    assert [a.missing for a in attributions(tracker, [sentence])] == [()]


def test_an_english_answer_to_chinese_passages_is_checked_by_its_facts() -> None:
    """No words are shared across the languages: the passages stating the sentence's facts are
    the ones it cites (two, for two specific versions), and a computed difference is Docent's."""
    changelog = [
        Src(1, "0.44.0 (2021-11-14) 增加 Python 3.10 下的测试，正式支持 Python 3.10 。"),
        Src(2, "0.37.0 (2020-02-09) 增加 Python 3.8 下的测试，正式支持 Python 3.8 。"),
        Src(3, "0.53.0 (2024-09-15) 内置对 pyinstaller 打包的支持。"),
    ]
    question = (
        "pypinyin 正式支持 Python 3.8 的版本与正式支持 Python 3.10 的版本，发布日期相隔多少天？"
    )
    tracker = CitationTracker(changelog, question)
    tracker.computed("2021-11-14 - 2020-02-09 = 644 days")
    sentence = "Python 3.8 and Python 3.10 support came in the two releases, 644 days apart."
    found = attributions(tracker, [sentence])
    assert sorted(a.number for a in found) == [1, 2]
    assert all(not a.missing for a in found)
    # A fact no passage states leaves it unverified, whichever passage the facts chose.
    tracker = CitationTracker(changelog, question)
    assert attributions(tracker, ["Python 3.10 support took 6 days."])[0].missing == ("6",)


def test_the_sentences_citing_a_source_are_found_with_the_markers_before_or_after_the_stop() -> (
    None
):
    answer = (
        "Invoices are kept for seven years [2]. The programme covers privacy. [1] "
        "员工档案保存十年[3]。Archives go after 24 months [1, 2]."
    )
    assert claims_citing(answer, 2) == [
        "Invoices are kept for seven years",
        "Archives go after 24 months",
    ]
    assert claims_citing(answer, 1) == [
        "The programme covers privacy",
        "Archives go after 24 months",
    ]
    assert claims_citing(answer, 3) == ["员工档案保存十年"]
    assert claims_citing(answer, 4) == []
    clauses = "Invoices are kept seven years [1]; deletion needs approval [2][3]."
    assert claims_citing(clauses, 2) == ["deletion needs approval"]
    assert claims_citing(clauses, 3) == ["deletion needs approval"]


def test_the_sentences_a_source_supports_an_answer_with_are_picked_in_its_order() -> None:
    passage = (
        "Customer invoices must be retained for seven years after the end of the fiscal year. "
        "Email archives are deleted after 24 months unless a legal hold applies. "
        "Personal data is encrypted at rest."
    )
    claims = ["Email archives go after 24 months", "Invoices are kept for seven years"]
    assert supporting_sentences(passage, claims) == (
        "Customer invoices must be retained for seven years after the end of the fiscal year.",
        "Email archives are deleted after 24 months unless a legal hold applies.",
    )
    assert supporting_sentences(passage, ["The weather was fine"]) == ()
    assert supporting_sentences(
        "员工档案保存十年。财务凭证保存十五年。", ["财务凭证要保存十五年"]
    ) == ("财务凭证保存十五年。",)


def test_a_source_read_back_from_a_stored_conversation_keeps_its_sentences_as_a_tuple() -> None:
    used = ("Customer invoices must be retained for seven years.",)
    source = Source(1, 9, 1, "report.pdf", "/report.pdf", 2, "1", None, used[0], 0.5, used)
    stored = json.loads(json.dumps(asdict(source)))
    assert Source(**stored).used == used
    assert Source(**stored) == replace(source, used=())  # the sentences are no part of identity
