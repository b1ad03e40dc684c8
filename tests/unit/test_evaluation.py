"""`docent eval` over a scripted desk: conversations asked turn by turn in one Conversation, and
the columns that say how far the answers shown can be trusted."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Mapping
from pathlib import Path
from typing import Any, cast

import pytest

from app.answering import Finished, Source, SourcesFound
from app.answering.conversation import Conversation
from app.answering.metrics import AnswerMetrics
from app.bench.evaluation import EvalError, breakdown, evaluate, load_questions, table

DECLINED = "The documents do not answer this."
METRICS = AnswerMetrics("local", "tiny", "test", 0.0, 0.1, 0.2, 10, 5, None, 0.0)


class ScriptedDesk:
    """Answers each question with its scripted reply (None: declines) from `sources`, citing the
    first; records what was asked and in which conversation."""

    def __init__(self, replies: Mapping[str, str | None], sources: tuple[Source, ...] = ()) -> None:
        self.replies = replies
        self.sources = sources
        self.asked: list[tuple[str, Conversation | None]] = []

    async def ask(
        self, question: str, *, route: str | None = None, conversation: Conversation | None = None
    ) -> AsyncIterator[SourcesFound | Finished]:
        self.asked.append((question, conversation))
        reply = self.replies[question]
        yield SourcesFound(self.sources)
        yield Finished(
            DECLINED if reply is None else reply,
            self.sources[:1],
            METRICS,
            len(self.asked),
            False,
            None,
            unsupported_draft="a guess" if reply is None else None,
        )


def write_questions(folder: Path, lines: list[dict[str, Any]]) -> Path:
    path = folder / "qa.jsonl"
    path.write_text("\n".join(json.dumps(line) for line in lines), encoding="utf-8")
    return path


def qa(question: str, answer: str | None = None, **more: Any) -> dict[str, Any]:
    if answer is None:
        return {"question": question, "answers": [], **more}
    return {"question": question, "answers": [answer], "document": "d.txt", "pages": [1], **more}


def run(desk: ScriptedDesk, path: Path, modes: tuple[str, ...] = ("auto",)) -> list[dict[str, Any]]:
    return asyncio.run(evaluate(cast(Any, desk), load_questions(path), modes))


def test_a_conversation_is_asked_turn_by_turn_in_one_conversation(tmp_path: Path) -> None:
    path = write_questions(
        tmp_path,
        [
            qa("Why?", "bugs", conversation="c", turn=2, kind="follow_up"),
            qa("Which port?", "8080"),
            qa("Who wrote it?", "Ada", conversation="c", turn=1),
            qa("Which year?", "1999", conversation="d", turn=1),
            qa("And before?", "1998", conversation="d", turn=2, kind="follow_up"),
        ],
    )
    desk = ScriptedDesk(
        {"Who wrote it?": "Ada", "Why?": "bugs", "Which port?": "8080", "Which year?": "1999"}
        | {"And before?": "1998"}
    )
    run(desk, path, ("local only", "auto"))

    asked = [question for question, _ in desk.asked[:5]]
    assert asked == ["Who wrote it?", "Why?", "Which port?", "Which year?", "And before?"]
    conversations = [conversation for _, conversation in desk.asked[:5]]
    assert conversations[2] is None  # asked alone
    first, second = conversations[0], conversations[3]
    assert first is not None
    assert second is not None
    assert conversations[1] is first
    assert conversations[4] is second
    assert second is not first
    assert desk.asked[5][1] is not first  # each mode starts its conversations afresh


def test_first_and_later_turns_are_reported_apart(tmp_path: Path) -> None:
    path = write_questions(
        tmp_path,
        [
            qa("Who wrote it?", "Ada", conversation="c", turn=1),
            qa("Why?", "bugs", conversation="c", turn=2, kind="follow_up"),
            qa("Which year?", "1999", conversation="d", turn=1),
            qa("And before?", "1998", conversation="d", turn=2, kind="follow_up"),
            qa("Which port?", "8080"),
        ],
    )
    desk = ScriptedDesk(
        {"Who wrote it?": "Ada", "Why?": "no idea", "Which year?": "1999", "And before?": "1998"}
        | {"Which port?": "8080"}
    )
    (row,) = run(desk, path)
    assert [(a["conversation"], a["turn"]) for a in row["answers"]][:2] == [("c", 1), ("c", 2)]

    groups = breakdown([row])
    assert "| auto | turn first | 2 | 100% |" in groups
    assert "| auto | turn later | 2 | 50% |" in groups
    assert "| auto | kind follow_up | 2 | 50% |" in groups
    assert groups.count("| auto | turn ") == 2  # the question asked alone is in neither


def test_wrong_answers_shown_and_the_share_of_answers_to_trust(tmp_path: Path) -> None:
    path = write_questions(
        tmp_path,
        [
            qa("Which port?", "8080"),  # right
            qa("Which user?", "www-data"),  # wrong, shown
            qa("Which group?", "staff"),  # declined: wrongly
            qa("Who won in 1950?"),  # declined: rightly
            qa("What is the capital?"),  # answered, though nothing answers it: wrong, shown
        ],
    )
    desk = ScriptedDesk(
        {"Which port?": "Port 8080.", "Which user?": "root", "Which group?": None}
        | {"Who won in 1950?": None, "What is the capital?": "Canberra"}
    )
    (row,) = run(desk, path)
    assert row["accuracy"] == 2 / 5
    assert (row["declined_unanswerable"], row["declined_answerable"]) == (1 / 2, 1 / 3)
    assert row["wrong_not_declined"] == 2 / 5
    assert row["right_among_answers"] == 1 / 3  # of the three answers shown, one is right

    header, _, line = table([row]).splitlines()
    assert header.endswith("| wrong, not declined | right among answers |")
    assert line.endswith("| 50% / 33% | 40% | 33% |")
    groups = breakdown([row])
    assert "| auto | kind lookup | 3 | 33% | 0% | 0% | – / 33% | 33% | 50% |" in groups
    assert "| auto | kind unanswerable | 2 | 50% | – | – | 50% / – | 50% | 0% |" in groups


def test_only_declines_leave_nothing_to_trust(tmp_path: Path) -> None:
    path = write_questions(tmp_path, [qa("Which port?", "8080")])
    (row,) = run(ScriptedDesk({"Which port?": None}), path)
    assert (row["wrong_not_declined"], row["right_among_answers"]) == (0.0, None)
    assert table([row]).splitlines()[2].endswith("| 0% | – |")


def test_each_answer_keeps_the_pages_it_was_given_and_cited(tmp_path: Path) -> None:
    path = write_questions(tmp_path, [qa("Which port?", "8080")])
    given = tuple(
        Source(number, number, number, name, name, page, str(page), None, "text", 0.5)
        for number, (name, page) in enumerate([("d.txt", 1), ("e.txt", 3)], start=1)
    )
    (row,) = run(ScriptedDesk({"Which port?": "Port 8080."}, given), path)
    (answer,) = row["answers"]
    assert answer["sources"] == [["d.txt", 1], ["e.txt", 3]]  # in the order given
    assert answer["citations"] == [["d.txt", 1]]
    assert answer["retrieved"]
    assert answer["cited"]


@pytest.mark.parametrize(
    ("lines", "problem"),
    [
        (
            [qa("A?", "a", conversation="c", turn=1), qa("B?", "b", conversation="c", turn=3)],
            "conversation 'c': its turns must be 1, 2, … once each",
        ),
        (
            [qa("A?", "a", conversation="c", turn=2)],
            "conversation 'c': its turns must be 1, 2, … once each",
        ),
        (
            [
                qa("A?", "a", conversation="c", turn=1, split="tune"),
                qa("B?", "b", conversation="c", turn=2, split="holdout"),
            ],
            "conversation 'c': its turns must share one split",
        ),
    ],
)
def test_a_conversation_with_a_missing_turn_or_two_splits_is_refused(
    tmp_path: Path, lines: list[dict[str, Any]], problem: str
) -> None:
    with pytest.raises(EvalError, match=problem):
        load_questions(write_questions(tmp_path, lines))
