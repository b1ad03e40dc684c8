"""A question's versions (a retry, a re-ask on the other route) without a model: consecutive
recorded answers to one question are one turn; the kept version is the context, and the one a
reopened conversation shows; each version is shown with the sources it had."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from app.answering.conversation import Conversation, grouped, replayed
from app.answering.events import Finished, SourcesFound
from app.index import conversations
from app.index.store import HistoryEntry, Store
from tests.unit.test_conversation import record, source, turn

FIRST = "How long must customer invoices be kept?"
NEXT = "And email archives?"


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    opened = Store(tmp_path / "library.sqlite3")
    yield opened
    opened.close()


def kept_entries(store: Store, conversation_id: int) -> list[HistoryEntry]:
    kept = conversations.kept(store, conversation_id)
    assert kept is not None
    return kept.entries


def test_a_questions_versions_are_one_turn_whose_kept_version_is_the_context(
    store: Store,
) -> None:
    conversation_id = conversations.create(store, FIRST)
    # Both versions were asked with no earlier turn: each sent its own source as [1].
    local = turn(FIRST, (source(1, 10),), "Seven years [1].")
    cloud = turn(FIRST, (source(1, 20),), "For seven years after the fiscal year [1].")
    first = store.add_history(record(FIRST, conversation_id, local))
    second = store.add_history(record(FIRST, conversation_id, cloud))
    follow_up = turn(NEXT, (source(2, 30),), "After 24 months [2].")
    store.add_history(record(NEXT, conversation_id, follow_up))

    # Unmarked, the last version with a turn is kept.
    asked = grouped(kept_entries(store, conversation_id))
    assert [(a.question, len(a.versions), a.kept) for a in asked] == [(FIRST, 2, 1), (NEXT, 1, 0)]
    assert conversations.listing(store)[0].turns == 2  # versions are one turn

    # The user looked at the first version when asking the next question.
    conversations.keep_version(store, conversation_id, [first, second], first)
    entries = kept_entries(store, conversation_id)
    reopened = Conversation.from_entries(conversation_id, entries)
    assert reopened.turns == [local, follow_up]
    assert [a.shown for a in grouped(entries)] == [0, 0]

    # Shown again: each version with the sources it had; the next turn with the kept one's.
    shown = replayed(entries)
    assert [(r.question, len(r.versions), r.shown) for r in shown] == [(FIRST, 2, 0), (NEXT, 1, 0)]

    def sources_of(events: tuple[object, ...]) -> dict[int, int]:
        found = [e for e in events if isinstance(e, SourcesFound)]
        return {s.number: s.chunk_id for s in found[0].sources}

    assert [sources_of(v) for v in shown[0].versions] == [{1: 10}, {1: 20}]
    assert sources_of(shown[1].versions[0]) == {1: 10, 2: 30}
    ends = [v[-1] for v in shown[0].versions]
    assert [e.history_id for e in ends if isinstance(e, Finished)] == [first, second]


def test_the_newest_turns_versions_can_be_chosen_and_asked_again(store: Store) -> None:
    conversation_id = conversations.create(store, FIRST)
    before = turn("Who keeps them?", (source(1, 5),), "The finance office [1].")
    store.add_history(record("Who keeps them?", conversation_id, before))
    local = turn(FIRST, (source(2, 10),), "Seven years [2].")
    first = store.add_history(record(FIRST, conversation_id, local))
    stopped = store.add_history(record(FIRST, conversation_id, None))  # stopped: no turn

    conversation = Conversation.from_entries(conversation_id, kept_entries(store, conversation_id))
    # A stopped version gives no context: reopened, the one before it is kept and shown.
    assert [v.history_id for v in conversation.newest] == [first, stopped]
    assert conversation.kept_version == first
    assert conversation.turns == [before, local]
    assert conversation.asks_again(f"  {FIRST} ")
    assert not conversation.asks_again(NEXT)
    assert not Conversation().asks_again(FIRST)  # nothing asked yet

    # Looking at the stopped version, the next question continues no version of it.
    conversation.choose(stopped)
    assert conversation.turns == [before]
    conversation.choose(first)
    assert conversation.turns == [before, local]
    conversation.choose(12345)  # not a version of the newest turn: nothing changes
    assert conversation.turns == [before, local]

    conversations.keep_version(store, conversation_id, [first, stopped], stopped)
    entries = kept_entries(store, conversation_id)
    assert [a.kept for a in grouped(entries)] == [0, None]
    assert Conversation.from_entries(conversation_id, entries).turns == [before]
    assert [r.shown for r in replayed(entries)] == [0, 1]  # none kept: the last is shown


def test_the_title_follows_an_edited_first_question_unless_the_user_renamed_it(
    store: Store,
) -> None:
    conversation_id = conversations.create(store, FIRST)
    assert conversations.follow_first_question(store, conversation_id, FIRST, NEXT)
    assert conversations.listing(store)[0].title == NEXT
    conversations.rename(store, conversation_id, "Retention rules")
    assert not conversations.follow_first_question(store, conversation_id, NEXT, FIRST)
    assert conversations.listing(store)[0].title == "Retention rules"
