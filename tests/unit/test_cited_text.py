"""Text written in steps and what it cites (app/answering/run.py)."""

from app.answering.citations import Attribution
from app.answering.events import Source
from app.answering.run import CitedText


def source(number: int) -> Source:
    return Source(number, number, 1, "notes.txt", "/notes.txt", 1, "1", None, "text", 1.0)


def test_a_step_cut_off_by_its_token_limit_ends_at_its_last_whole_sentence() -> None:
    """A summary's overview stopped at 120 tokens ended mid-word ("The handbook covers the
    instal"): it ends at its last sentence, and a citation of the cut tail goes with it."""
    written = CitedText("Harbor  \n")
    start = len(written.text)
    cite = written.citer([source(1), source(2)])
    written.text += "The handbook covers deployment. 它有两个版本。 It also lists the instal"
    first = written.text.index(".") + 1
    second = written.text.index("。") + 1
    # The step's attributions count from its own start.
    cite([Attribution(1, first - start, 1.0, False), Attribution(2, second - start, 1.0, False)])
    cite([Attribution(1, len(written.text) - start, 1.0, False)])
    written.end_at_last_sentence(start)
    assert written.text == "Harbor  \nThe handbook covers deployment. 它有两个版本。"
    assert [c.at for c in written.citations] == [first, second]
    assert written.marked() == "Harbor  \nThe handbook covers deployment [1]. 它有两个版本[2]。"


def test_a_step_with_no_whole_sentence_keeps_its_words_and_says_it_was_cut() -> None:
    written = CitedText("Overview: ")
    written.text += "The handbook covers deployment and"
    written.end_at_last_sentence(len("Overview: "))
    assert written.text == "Overview: The handbook covers deployment and…"
