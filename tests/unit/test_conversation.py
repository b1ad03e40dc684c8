"""Conversations without a model: the standalone rewrite, numbering across turns, what fits, and
how they are kept in the library file."""

from __future__ import annotations

import asyncio
from dataclasses import replace
from pathlib import Path

import pytest

from app.answering.conversation import Conversation, Turn, standalone
from app.answering.events import Source
from app.cjk import estimate_tokens
from app.index import Library, conversations
from app.index.store import HistoryRecord, Store

FIRST = "When was the English edition of the Harbor Handbook published?"


@pytest.mark.parametrize(
    "follow_up",
    [
        "And the Chinese edition?",
        "why?",
        "Which page says so?",
        "show me the command",
        "Who translated it?",
        "那中文版呢？",
        "为什么？",
    ],
)
def test_a_follow_up_that_cannot_stand_alone_borrows_the_previous_question(
    follow_up: str,
) -> None:
    assert standalone(follow_up, FIRST) == f"{FIRST} {follow_up}"


def test_a_question_that_stands_alone_is_read_as_it_is() -> None:
    question = "Which encryption protects personal data at rest in the Northwind report?"
    assert standalone(question, None) == question  # the first turn
    unrelated = "How many days does the privacy office take to answer subject access requests?"
    assert standalone(unrelated, FIRST) == unrelated


def test_a_follow_up_searches_for_the_versions_the_previous_answer_named() -> None:
    """A question about "that release" is about the release the answer named, which the
    first question did not: searching for the question's words alone found every release."""
    first = "Which Requests release added support for chardet 5.0.0?"
    answered = "Requests 2.28.1 added it [1]."
    asked = "When was that release published?"
    assert standalone(asked, first, answered) == f"{first} 2.28.1 {asked}"
    named = Turn(first, first, "…", answered, (source(1, 10),))
    assert Conversation(7, [named]).standalone(asked) == f"{first} 2.28.1 {asked}"
    # A declined turn's draft named nothing the user read.
    declined = replace(named, answer="The documents do not seem to answer this.", declined=True)
    assert Conversation(7, [declined]).standalone(asked) == f"{first} {asked}"


def source(number: int, chunk_id: int, text: str = "word " * 40) -> Source:
    return Source(number, chunk_id, 1, "handbook.pdf", "/handbook.pdf", 2, "1", None, text, 0.5)


def turn(question: str, sources: tuple[Source, ...], answer: str = "It was 2019 [1].") -> Turn:
    user = f"Sources: {[s.number for s in sources]}\n\nQuestion: {question}"
    return Turn(question, question, user, answer, sources)


def test_sources_are_numbered_across_the_conversation_and_sent_once() -> None:
    conversation = Conversation(7, [turn(FIRST, (source(1, 10), source(2, 11)))])
    chosen = [source(1, 11), source(2, 30), source(3, 10), source(4, 31)]

    plan = conversation.plan(chosen, room_tokens=10_000)

    assert [(s.chunk_id, s.number) for s in plan.found] == [(11, 2), (30, 3), (10, 1), (31, 4)]
    assert [s.chunk_id for s in plan.send] == [30, 31]  # 10 and 11 are in the first turn
    assert sorted(s.number for s in plan.visible) == [1, 2, 3, 4]
    assert plan.kept == tuple(conversation.turns)
    assert plan.dropped == 0


def test_a_removed_documents_passages_are_never_sent_again_by_a_follow_up() -> None:
    """Removing a document takes its text out of every later prompt: the turn that sent its
    passage is left out (and said so), however much room there is."""
    removed = replace(source(1, 10, "The vault code is 4471."), document_id=2)
    conversation = Conversation(7, [turn(FIRST, (removed,)), turn("why?", (source(2, 11),))])

    plan = conversation.plan([source(1, 11)], room_tokens=10_000, present={1})

    assert [t.question for t in plan.kept] == ["why?"]
    assert (plan.withdrawn, plan.dropped) == (1, 0)
    assert all(s.document_id == 1 for s in plan.visible)
    assert conversation.plan([source(1, 11)], 10_000, present={1, 2}).withdrawn == 0


def test_the_oldest_turns_are_left_out_when_the_conversation_outgrows_the_context() -> None:
    long_answer = "The handbook says so. " * 60
    turns = [turn(f"question {n}", (source(n, 100 + n),), answer=long_answer) for n in range(1, 4)]
    conversation = Conversation(7, turns)
    passage = source(1, 101)
    room = 2 * (estimate_tokens(turns[0].user) + estimate_tokens(long_answer) + 16)
    room += estimate_tokens(passage.text) + 16  # sent again: its first turn is left out

    plan = conversation.plan([passage], room_tokens=room)

    assert plan.dropped == 1
    assert [t.question for t in plan.kept] == ["question 2", "question 3"]
    # Its passage left with the first turn: sent again, under a new number.
    assert [(s.chunk_id, s.number) for s in plan.send] == [(101, 4)]


def record(question: str, conversation_id: int | None, turn: Turn | None) -> HistoryRecord:
    return HistoryRecord(
        question=question,
        scope=[],
        answer="" if turn is None else turn.answer,
        status="finished",
        error=None,
        route="local",
        model="m",
        reason="r",
        citations=[],
        retrieval_s=0.01,
        ttft_s=0.1,
        total_s=0.2,
        prompt_tokens=10,
        completion_tokens=3,
        tokens_per_s=10.0,
        cost_usd=0.0,
        grounded=1.0,
        conversation_id=conversation_id,
        standalone=None if turn is None else turn.standalone,
        turn=None if turn is None else turn.as_record(),
    )


def test_a_conversation_is_kept_reopened_and_deleted_with_its_turns(tmp_path: Path) -> None:
    store = Store(tmp_path / "library.sqlite3")
    try:
        first = conversations.create(store, FIRST)
        other = conversations.create(store, "An unrelated question " * 10)
        answered = turn(FIRST, (source(1, 10),))
        store.add_history(record(FIRST, first, answered))
        store.add_history(record("why?", first, None))  # failed: kept, but not context
        store.add_history(record("a question on its own", None, None))

        listed = conversations.listing(store)
        assert [(c.id, c.turns) for c in listed] == [(first, 2), (other, 0)]  # latest first
        assert listed[1].title.endswith("…")
        assert len(listed[1].title) == 80
        assert conversations.latest(store) == first

        kept = conversations.kept(store, first)
        assert kept is not None
        assert not kept.client
        entries = kept.entries
        assert [entry.question for entry in entries] == [FIRST, "why?"]
        reopened = Conversation.from_entries(first, entries)
        assert reopened.turns == [answered]
        assert [entry.question for entry in reopened.entries] == [FIRST, "why?"]  # shown again
        assert conversations.kept(store, other + 1) is None

        assert conversations.delete(store, first)
        assert not conversations.delete(store, first)
        assert conversations.kept(store, first) is None
        assert [entry.question for entry in store.history()] == ["a question on its own"]
    finally:
        store.close()


def test_two_questions_asked_at_once_start_one_conversation(tmp_path: Path) -> None:
    """The second question came before the first one's conversation was recorded (the window
    stops an answer when a new question comes): it made a second conversation."""

    async def scenario() -> tuple[list[int], list[int]]:
        library = Library(tmp_path / "library.sqlite3", None)
        await library.open()
        try:
            conversation = Conversation()
            ids = await asyncio.gather(
                conversation.recorded_id(library, FIRST), conversation.recorded_id(library, "why?")
            )
            listed = await library.conversations()
            return list(ids), [c.id for c in listed]
        finally:
            await library.close()

    ids, listed = asyncio.run(scenario())
    assert ids == listed * 2
    assert len(listed) == 1


def test_the_answers_quoting_a_document_are_found_and_forgotten(tmp_path: Path) -> None:
    """By the sources a conversation turn sent, or by an answer's citations."""
    store = Store(tmp_path / "library.sqlite3")
    try:
        kept = conversations.create(store, FIRST)
        other = replace(source(1, 20), document_id=2)
        sent = store.add_history(record(FIRST, kept, turn(FIRST, (source(1, 10),))))
        elsewhere = store.add_history(record("why?", kept, turn("why?", (other,))))
        cites = {"number": 1, "document_id": 1, "document": "handbook.pdf"}
        cited = store.add_history(replace(record("alone?", None, None), citations=[cites]))
        unrelated = store.add_history(record("a question on its own", None, None))
        quoting = conversations.quoting(store, {1})
        assert conversations.forget(store, quoting) == 2
        left = [entry.id for entry in store.history()]
    finally:
        store.close()
    assert quoting == [sent, cited]
    assert sorted(left) == sorted([elsewhere, unrelated])
