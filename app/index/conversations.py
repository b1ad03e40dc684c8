"""Conversations in the library's SQLite file: a title and its turns, the history rows linked to it.

Functions of a Store, run on the library's reader or writer thread; above the index they are
`Library` methods.
"""

from __future__ import annotations

import json
from collections.abc import Collection
from dataclasses import dataclass
from datetime import UTC, datetime

from app.index.store import HistoryEntry, Store

TITLE_CHARS = 80


@dataclass(frozen=True, slots=True)
class ConversationInfo:
    id: int
    title: str  # the first question, cut to TITLE_CHARS
    created_at: str
    updated_at: str
    turns: int
    client: bool  # an MCP client's (it knows it by a handle): the desktop continues a copy


@dataclass(frozen=True, slots=True)
class KeptConversation:
    entries: list[HistoryEntry]  # its recorded answers in order
    client: bool


def create(
    store: Store, first_question: str, handle: str | None = None, copying: int | None = None
) -> int:
    """A new conversation; `handle` is the id an MCP client knows it by (None: the desktop's).
    `copying`: a conversation whose turns it starts with (and whose title it takes): the
    desktop continues an MCP client's conversation in a copy, so the client never reads the
    user's questions, nor sends them again to its model."""
    now = datetime.now(UTC).isoformat(timespec="microseconds")  # orders the list
    title = " ".join(first_question.split())
    if len(title) > TITLE_CHARS:
        title = title[: TITLE_CHARS - 1] + "…"
    with store.writing():
        if copying is not None:
            row = store.db.execute("SELECT title FROM conversations WHERE id = ?", [copying])
            title = (row.fetchone() or [title])[0]
        cursor = store.db.execute(
            "INSERT INTO conversations (title, created_at, updated_at, handle) VALUES (?, ?, ?, ?)",
            [title, now, now, handle],
        )
        conversation_id = int(cursor.lastrowid or 0)
        if copying is not None:
            columns = [c for c in store.db["history"].columns_dict if c != "id"]
            copied = ", ".join("?" if c == "conversation_id" else c for c in columns)
            store.db.execute(
                f"""INSERT INTO history ({", ".join(columns)})
                    SELECT {copied} FROM history WHERE conversation_id = ? ORDER BY id""",
                [conversation_id, copying],
            )
    return conversation_id


def listing(store: Store) -> list[ConversationInfo]:
    """Every conversation, the most recently continued first."""
    rows = store.db.execute(
        """SELECT c.id, c.title, c.created_at, c.updated_at, count(h.id), c.handle IS NOT NULL
           FROM conversations c LEFT JOIN history h ON h.conversation_id = c.id
           GROUP BY c.id ORDER BY c.updated_at DESC, c.id DESC"""
    ).fetchall()
    return [ConversationInfo(*row) for row in rows]


def latest(store: Store) -> int | None:
    """The desktop's conversation continued last (an MCP client's are the client's to go on)."""
    row = store.db.execute(
        """SELECT id FROM conversations WHERE handle IS NULL
           ORDER BY updated_at DESC, id DESC LIMIT 1"""
    ).fetchone()
    return None if row is None else int(row[0])


def by_handle(store: Store, handle: str) -> int | None:
    row = store.db.execute("SELECT id FROM conversations WHERE handle = ?", [handle]).fetchone()
    return None if row is None else int(row[0])


def kept(store: Store, conversation_id: int) -> KeptConversation | None:
    """The conversation's recorded answers and whose it is; None when there is no such one."""
    found = store.db.execute(
        "SELECT handle IS NOT NULL FROM conversations WHERE id = ?", [conversation_id]
    ).fetchone()
    if found is None:
        return None
    rows = store.db.query(
        "SELECT * FROM history WHERE conversation_id = ? ORDER BY id", [conversation_id]
    )
    return KeptConversation([HistoryEntry.from_row(row) for row in rows], bool(found[0]))


def delete(store: Store, conversation_id: int) -> bool:
    """The conversation and its turns; False when there was none."""
    with store.writing():
        store.db.execute("DELETE FROM history WHERE conversation_id = ?", [conversation_id])
        cursor = store.db.execute("DELETE FROM conversations WHERE id = ?", [conversation_id])
    return cursor.rowcount > 0


def quoting(store: Store, document_ids: Collection[int]) -> list[int]:
    """The recorded answers (history ids) that cited or sent a passage of these documents."""
    wanted = set(document_ids)
    rows = store.db.execute("SELECT id, citations, turn FROM history").fetchall()
    found = []
    for history_id, citations, turn in rows:
        sources = json.loads(citations) + (json.loads(turn)["sources"] if turn else [])
        if any(source.get("document_id") in wanted for source in sources):
            found.append(int(history_id))
    return found


def forget(store: Store, history_ids: Collection[int]) -> int:
    """Delete these recorded answers (a conversation keeps its other turns)."""
    forgotten = 0
    with store.writing():
        for history_id in history_ids:
            deleted = store.db.execute("DELETE FROM history WHERE id = ?", [history_id])
            forgotten += deleted.rowcount
    return forgotten
