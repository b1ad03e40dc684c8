"""Searching the kept conversations (the sidebar's search box) on a real SQLite library: titles,
then the questions' and answers' words, CJK text as bigrams; deleted answers leave the index,
and a library kept by the previous release is searchable after its migration."""

from __future__ import annotations

import asyncio
from pathlib import Path

from app.index import ConversationMatch, HistoryRecord, Library, conversations
from app.index.store import Store
from tests.unit.test_schema import written_by_release

INVOICES = "How long are customer invoices kept?"
KEPT = "Customer invoices are kept for seven years after the end of the financial year [1]."
TEA = "绿茶和乌龙茶有什么不同？"
OXIDISED = "乌龙茶是半发酵茶，绿茶不发酵 [1]。"


def answered(question: str, answer: str, conversation_id: int) -> HistoryRecord:
    return HistoryRecord(
        question=question, scope=(), answer=answer, status="finished", error=None,
        route="local", model="m", reason="r", citations=(), retrieval_s=0.01, ttft_s=0.1,
        total_s=0.2, prompt_tokens=10, completion_tokens=3, tokens_per_s=10.0, cost_usd=0.0,
        grounded=1.0, conversation_id=conversation_id,
    )  # fmt: skip


def found(matches: list[ConversationMatch]) -> list[int]:
    return [match.conversation_id for match in matches]


def test_conversations_are_found_by_title_question_and_answer_in_english_and_chinese(
    tmp_path: Path,
) -> None:
    async def scenario() -> None:
        library = Library(tmp_path / "library.sqlite3", None)
        await library.open()
        try:
            invoices = await library.create_conversation(INVOICES)
            await library.record(answered(INVOICES, KEPT, invoices))
            await library.record(answered("And receipts?", "Receipts: five years.", invoices))
            tea = await library.create_conversation(TEA)
            await library.record(answered(TEA, OXIDISED, tea))
            client = await library.create_conversation("Who approves deletion?", "a-handle")
            await library.record(answered("Who approves deletion?", "The head of it.", client))

            listed = {c.id: c for c in await library.conversations()}
            assert (listed[invoices].turns, listed[invoices].routes) == (2, ("local",))

            # The answer's words, the best match's text shown around the first one found.
            (match,) = await library.search_conversations("seven years")
            assert match.conversation_id == invoices
            assert "kept for seven years after" in match.excerpt
            # A word being typed finds the words it starts; every word must be there.
            assert found(await library.search_conversations("financ")) == [invoices]
            assert found(await library.search_conversations("financial tea")) == []
            assert found(await library.search_conversations("RECEIPTS five")) == [invoices]
            # Chinese: searched as the bigrams it was indexed as (no spaces between words).
            (match,) = await library.search_conversations("半发酵")
            assert match.conversation_id == tea
            assert "乌龙茶是半发酵茶" in match.excerpt
            assert found(await library.search_conversations("乌龙")) == [tea]
            assert found(await library.search_conversations("红茶")) == []
            # A title holds the query as typed, even a word too common to search for.
            assert found(await library.search_conversations("how long")) == [invoices]
            await library.rename_conversation(tea, "Tea notes")
            (match,) = await library.search_conversations("tea no")
            assert (match.conversation_id, match.excerpt) == (tea, "")
            assert found(await library.search_conversations("approves")) == [client]
            assert await library.search_conversations("   ") == []

            # Deleted conversations and forgotten answers are not found any more.
            await library.delete_conversation(client)
            assert found(await library.search_conversations("approves")) == []
            kept = await library.conversation(invoices)
            assert kept is not None
            await library.forget_answers([kept.entries[1].id])
            assert found(await library.search_conversations("receipts")) == []
            assert found(await library.search_conversations("seven")) == [invoices]
            # The desktop going on with a client's conversation copies its turns: found too.
            client = await library.create_conversation("Q?", "another-handle")
            await library.record(answered("Q?", "Shredded after ninety days.", client))
            copy = await library.create_conversation("Q?", copying=client)
            assert sorted(found(await library.search_conversations("shredded"))) == sorted(
                [client, copy]
            )
        finally:
            await library.close()

    asyncio.run(scenario())


def test_answers_kept_by_the_previous_release_are_searchable_after_its_migration(
    tmp_path: Path,
) -> None:
    path = tmp_path / "library.sqlite3"
    connection = written_by_release(path, schema=9)
    connection.execute("INSERT INTO conversations VALUES (4, 'tea?', 'then', 'then', NULL)")
    values = ", ".join(["?"] * 23)
    row = [9, "then", "tea?", "[]", OXIDISED, "finished", None, "local", "m", "why", "[]"]
    row += [0.1, 0.2, 0.3, 10, 5, 4.0, 0.0, 1.0, None, 4, "tea?", None]
    connection.execute(f"INSERT INTO history VALUES ({values})", row)
    connection.close()

    store = Store(path)
    try:
        (match,) = conversations.search(store, "半发酵")
    finally:
        store.close()
    assert match.conversation_id == 4
