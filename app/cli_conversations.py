"""`docent conversations`, and which conversation `docent ask` joins (`--continue`,
`--conversation ID`, or a new one)."""

from __future__ import annotations

from dataclasses import asdict

from app.answering.conversation import Conversation, ConversationNotFound, reopen
from app.errors import DocentError
from app.index import Library, conversations
from app.terminal import printable, printable_json


class NoConversation(DocentError):
    """`--continue` with no conversation kept yet."""


async def continued(
    library: Library, continue_last: bool, conversation_id: int | None
) -> Conversation:
    """The conversation a question joins: the last one, the one named, or a new one."""
    if continue_last:
        conversation_id = await library.read(conversations.latest)
        if conversation_id is None:
            raise NoConversation("there is no conversation to continue yet: ask without --continue")
    if conversation_id is None:
        return Conversation()
    return await reopen(library, conversation_id)


async def conversations_command(
    library: Library, show: int | None, delete: int | None, as_json: bool
) -> int:
    if delete is not None:
        if not await library.write(lambda store: conversations.delete(store, delete)):
            raise ConversationNotFound(f"there is no conversation {delete}")
        print(f"deleted conversation {delete}")
        return 0
    if show is not None:
        await reopen(library, show)  # a clear error when there is none
        rows = await library.read(lambda store: conversations.turns(store, show))
        if as_json:
            print(printable_json(rows))
            return 0
        for row in rows:
            print(printable(f"Q: {row['question']}"))
            if row["standalone"] != row["question"]:
                print(printable(f"   (searched for: {row['standalone']})"))
            print(printable(f"A: {row['answer'] or row['error'] or '[' + row['status'] + ']'}"))
            for citation in row["citations"]:
                print(printable(f"   [{citation['number']}] {citation['where']}"))
            print()
        return 0
    listed = await library.read(conversations.listing)
    if as_json:
        print(printable_json([asdict(conversation) for conversation in listed]))
        return 0
    if not listed:
        print("no conversations yet: `docent ask` starts one")
    for conversation in listed:
        turns = f"{conversation.turns} turn{'s' if conversation.turns != 1 else ''}"
        print(
            printable(
                f"{conversation.id:>5}  {conversation.updated_at}  {turns:>8}  {conversation.title}"
            )
        )
    return 0
