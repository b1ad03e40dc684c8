"""A three-turn conversation with the real bundled model: the second and third questions only make
sense after the first; retrieval reads their standalone form, the answers cite the right pages,
the follow-up's prompt extends the previous one (KV prefix reused), and the library keeps it."""

from __future__ import annotations

import json
from pathlib import Path

from app.answering import Citation, Finished, InConversation, SourcesFound
from app.answering.conversation import Conversation
from app.answering.desk import AnswersForgotten, ConversationDeleted
from app.errors import DocentError
from app.index import HistoryRecord
from tests.conftest import docent
from tests.documents import HANDBOOK_SECTIONS, write_pdf
from tests.integration.conftest import index_all, opened, run


async def converse(tmp_path: Path, questions: list[str]) -> tuple[list[list], Conversation, list]:
    async with opened() as docent:
        await index_all(
            docent,
            [
                write_pdf(tmp_path / "handbook.pdf", HANDBOOK_SECTIONS),
                write_pdf(tmp_path / "report.pdf"),
            ],
        )
        await docent.library.embed_pending()
        answerer = await docent.desk.answerer()
        conversation = Conversation()
        turns = []
        for question in questions:
            turns.append(
                [event async for event in answerer.answer(question, conversation=conversation)]
            )
        assert conversation.id is not None
        conversation_id = conversation.id
        kept = await docent.library.conversation(conversation_id)
        assert kept is not None
        return turns, conversation, kept.entries


def one(events: list, kind: type) -> object:
    [found] = [event for event in events if isinstance(event, kind)]
    return found


def test_follow_ups_are_answered_from_the_conversation_and_reuse_its_kv_prefix(
    tmp_path: Path,
) -> None:
    first = "When was the English edition of the Harbor Handbook published?"
    turns, conversation, rows = run(
        converse(tmp_path, [first, "And the Chinese edition?", "Who translated it?"])
    )
    finished = [one(events, Finished) for events in turns]
    joined = [one(events, InConversation) for events in turns]
    assert all(isinstance(f, Finished) and not f.unsupported_draft for f in finished)

    # Turn 1 stands alone; the follow-ups borrow its terms for retrieval.
    assert [j.standalone for j in joined] == [
        first,
        f"{first} And the Chinese edition?",
        f"{first} And the Chinese edition? Who translated it?",
    ]
    assert len({j.conversation_id for j in joined}) == 1
    found = [one(events, SourcesFound) for events in turns]
    assert any(s.document == "handbook.pdf" and s.page == 3 for s in found[1].sources)

    assert "2019" in finished[0].answer
    assert "2022" in finished[1].answer
    assert "Mei Lin" in finished[2].answer
    cited = [{c.source.page for c in events if isinstance(c, Citation)} for events in turns]
    assert 2 in cited[0]
    assert 3 in cited[1]
    assert 3 in cited[2]
    # Numbered across the conversation: a page already sent keeps its number.
    numbers = {(s.document, s.page): s.number for f in found for s in f.sources}
    assert len(set(numbers.values())) == len(numbers)

    # Turn 2's prompt extends turn 1's prompt and answer: only its new part was evaluated.
    one_, two = finished[0].metrics, finished[1].metrics
    assert two.cached_tokens >= one_.prompt_tokens
    assert two.cached_tokens < two.prompt_tokens

    # Kept: the turns in order, with standalone forms, answers and citations.
    assert [entry.question for entry in rows] == [
        first,
        "And the Chinese edition?",
        "Who translated it?",
    ]
    assert [entry.standalone for entry in rows] == [j.standalone for j in joined]
    assert [entry.answer for entry in rows] == [f.answer for f in finished]
    assert all(entry.citations for entry in rows)
    assert len(conversation.turns) == 3


def test_the_cli_continues_lists_shows_exports_and_deletes_conversations(tmp_path: Path) -> None:
    assert (
        docent("index", str(write_pdf(tmp_path / "handbook.pdf", HANDBOOK_SECTIONS))).returncode
        == 0
    )
    assert "no conversations yet" in docent("conversations").stdout
    nothing = docent("ask", "--continue", "why?")
    assert nothing.returncode == 2
    assert "there is no conversation to continue yet" in nothing.stderr

    first = "When was the English edition of the Harbor Handbook published?"
    started = json.loads(docent("ask", "--json", first).stdout)
    assert started["standalone"] == first
    followed = docent("ask", "--json", "--continue", "And the Chinese edition?")
    assert followed.returncode == 0, followed.stderr
    result = json.loads(followed.stdout)
    assert result["conversation_id"] == started["conversation_id"]
    assert result["standalone"] == f"{first} And the Chinese edition?"
    assert "2022" in result["answer"]
    assert result["metrics"]["cached_tokens"] == 0  # a new process: nothing cached to extend

    (listed,) = json.loads(docent("conversations", "--json").stdout)
    assert (listed["id"], listed["title"], listed["turns"]) == (result["conversation_id"], first, 2)
    shown = docent("conversations", "--show", str(listed["id"])).stdout
    assert f"Q: {first}" in shown
    assert f"(searched for: {first} And the Chinese edition?)" in shown
    assert "handbook.pdf, p. 2 (page 3 of the file) — Chinese edition" in shown
    # The same question again is another version of its turn: the export keeps one of them.
    again = docent("ask", "--json", "--continue", "And the Chinese edition?")
    assert again.returncode == 0, again.stderr
    exported = tmp_path / "conversation.md"
    export = docent("conversations", "--export", str(listed["id"]), "--out", str(exported))
    assert export.returncode == 0, export.stderr
    markdown = exported.read_text(encoding="utf-8")
    assert markdown.startswith(f"# {first}\n\n## {first}\n")
    assert "## And the Chinese edition?\n\n*Searched for: " in markdown
    assert "2022" in markdown.split("## And the Chinese edition?")[1]
    assert "] handbook.pdf, p. 2 (page 3 of the file) — Chinese edition" in markdown
    assert markdown.count("*route: local (") == 2
    assert markdown.count("## And the Chinese edition?") == 1
    assert markdown.endswith("*Answer 2 of 2 (1 other answer not exported)*\n")

    assert docent("conversations", "--delete", str(listed["id"])).returncode == 0
    for gone in (
        docent("conversations", "--show", str(listed["id"])),
        docent("ask", "--conversation", str(listed["id"]), "why?"),
    ):
        assert gone.returncode == 2
        assert f"there is no conversation {listed['id']}" in gone.stderr
    assert docent("history", "--json").stdout.strip() == "[]"  # its turns went with it


def test_the_desk_tells_its_subscribers_of_a_deleted_conversation_and_refuses_unknown_ones(
    tmp_path: Path,
) -> None:
    """Another front end (the window) follows a delete made elsewhere (the CLI of the same
    Docent, an MCP client); an id that is not there is a clear error, not a silent no-op."""

    async def scenario() -> tuple[list[object], list[str]]:
        async with opened(embeddings=False) as docent:
            desk = docent.desk
            refusals = []
            for attempt in (desk.latest(), desk.open(1), desk.delete(1)):
                try:
                    await attempt
                except DocentError as refused:
                    refusals.append(str(refused))
            kept = await docent.library.create_conversation("How long are invoices kept?")
            with desk.subscribe() as changes:
                await desk.delete(kept)
                events = [await anext(changes)]
            assert await desk.conversations() == []
            return events, refusals

    events, refusals = run(scenario())
    assert events == [ConversationDeleted(1)]
    assert refusals == [
        "there is no conversation to continue yet",
        "there is no conversation 1",
        "there is no conversation 1",
    ]


def test_the_desktop_goes_on_with_an_mcp_clients_conversation_in_a_copy(tmp_path: Path) -> None:
    """A conversation an MCP client started shows in the window; a question the user asks in
    it goes to a copy of the desktop's own, so the client never reads the user's turn (nor has
    its model shown it), and "continue the latest" never picks the client's."""
    private = "And the Chinese edition, code BLUEHERON?"

    async def scenario() -> None:
        async with opened(embeddings=False) as docent:
            await index_all(docent, [write_pdf(tmp_path / "handbook.pdf", HANDBOOK_SECTIONS)])
            desk = docent.desk
            clients = Conversation(handle="a-handle-only-the-client-knows")
            [
                _
                async for _ in desk.ask(
                    "When was the English edition of the Harbor Handbook published?",
                    conversation=clients,
                )
            ]
            assert clients.id is not None
            (listed,) = await desk.conversations()
            assert listed.client

            users = await desk.open(clients.id)
            assert (users.id, users.continues) == (None, clients.id)
            assert len(users.turns) == 1  # the client's turn is the user's context too
            [_ async for _ in desk.ask(private, conversation=users)]
            assert users.id not in (None, clients.id)

            again = await desk.open_handle("a-handle-only-the-client-knows")
            assert [entry.question for entry in again.entries] == [
                "When was the English edition of the Harbor Handbook published?"
            ]
            copy = await desk.open(users.id)
            assert [entry.question for entry in copy.entries] == [
                "When was the English edition of the Harbor Handbook published?",
                private,
            ]
            assert (copy.id, copy.continues) == (users.id, None)
            assert (await desk.latest()).id == users.id
            listing = await desk.conversations()
            assert [(c.id, c.client, c.title) for c in listing] == [
                (users.id, False, listed.title),
                (clients.id, True, listed.title),
            ]

    run(scenario())


def test_editing_a_question_drops_its_turn_and_the_later_ones_from_the_library_and_the_context(
    tmp_path: Path,
) -> None:
    """The user edits the second of three questions: that turn and the third go from the
    kept conversation and from the turns the next question continues; the first stays, as do
    other conversations' answers, and the window hears of it."""

    def turn(question: str, conversation_id: int) -> HistoryRecord:
        return HistoryRecord(
            question=question, scope=[], answer=f"answer to {question}", status="finished",
            error=None, route="local", model="m", reason="why", citations=[], retrieval_s=0.0,
            ttft_s=0.1, total_s=0.2, prompt_tokens=1, completion_tokens=1, tokens_per_s=None,
            cost_usd=0.0, grounded=1.0, conversation_id=conversation_id, standalone=question,
            turn={"user": question, "answer": f"answer to {question}", "sources": []},
        )  # fmt: skip

    async def scenario() -> None:
        async with opened(embeddings=False) as docent:
            desk, library = docent.desk, docent.library
            kept = await library.create_conversation("first?")
            other = await library.create_conversation("elsewhere?")
            ids = [await library.record(turn(q, kept)) for q in ("first?", "second?", "third?")]
            await library.record(turn("elsewhere?", other))
            conversation = await desk.open(kept)
            assert len(conversation.turns) == 3
            with desk.subscribe() as changes:
                assert await desk.drop_turns(conversation, ids[1]) == 2
                assert await anext(changes) == AnswersForgotten(2)
            assert [t.question for t in conversation.turns] == ["first?"]
            assert [e.question for e in conversation.entries] == ["first?"]
            reopened = await desk.open(kept)
            assert [e.question for e in reopened.entries] == ["first?"]
            assert [t.question for t in reopened.turns] == ["first?"]
            assert reopened.standalone("and then?") == "first? and then?"
            untouched = await desk.open(other)
            assert [e.question for e in untouched.entries] == ["elsewhere?"]
            assert await desk.drop_turns(Conversation(), ids[0]) == 0  # never recorded: none

    run(scenario())
