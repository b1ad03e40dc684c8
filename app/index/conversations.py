"""Conversations in the library's SQLite file: a title and its turns, the history rows linked to it.

Functions of a Store, run on the library's reader or writer thread; above the index they are
`Library` methods.
"""

from __future__ import annotations

import json
from collections.abc import Collection
from dataclasses import dataclass
from datetime import UTC, datetime

from app.index.schema import SEARCHABLE
from app.index.store import HistoryEntry, Store
from app.index.terms import keyword_terms

TITLE_CHARS = 80
EXCERPT_CHARS = 90  # of a matching answer, around the first word found: one line in the sidebar
SEARCH_HITS = 1000  # matching answers read at most (the best first): a conversation's best


@dataclass(frozen=True, slots=True)
class ConversationInfo:
    id: int
    title: str  # the first question, cut to TITLE_CHARS
    created_at: str
    updated_at: str
    turns: int  # questions asked (a question's versions are one turn)
    client: bool  # an MCP client's (it knows it by a handle): the desktop continues a copy
    routes: tuple[str, ...] = ()  # the routes its answers took (local, cloud…), sorted


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
    title = _title(first_question)
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
            store.db.execute(
                f"""INSERT INTO history_fts (rowid, body)
                    SELECT id, {SEARCHABLE}(question || char(10) || answer) FROM history
                    WHERE conversation_id = ?""",
                [conversation_id],
            )
    return conversation_id


def _title(text: str) -> str:
    title = " ".join(text.split())
    return title[: TITLE_CHARS - 1] + "…" if len(title) > TITLE_CHARS else title


def listing(store: Store) -> list[ConversationInfo]:
    """Every conversation, the most recently continued first."""
    rows = store.db.execute(
        """SELECT c.id, c.title, c.created_at, c.updated_at, (
                      SELECT count(*) FROM (
                          SELECT question, lag(question) OVER (ORDER BY id) AS before
                          FROM history WHERE conversation_id = c.id)
                      WHERE before IS NOT question),
                  c.handle IS NOT NULL, group_concat(DISTINCT h.route)
           FROM conversations c LEFT JOIN history h ON h.conversation_id = c.id
           GROUP BY c.id ORDER BY c.updated_at DESC, c.id DESC"""
    ).fetchall()
    listed = []
    for conversation_id, title, created, updated, turns, client, routes in rows:
        taken = tuple(sorted(routes.split(","))) if routes else ()
        listed.append(
            ConversationInfo(conversation_id, title, created, updated, turns, bool(client), taken)
        )
    return listed


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


def truncate(store: Store, conversation_id: int, first_dropped: int) -> int:
    """Delete the recorded answer `first_dropped` (a history id) and every later one of the
    conversation: the user asks that turn again differently, and what followed it rested on the
    old one. Returns how many were deleted."""
    with store.writing():
        cursor = store.db.execute(
            "DELETE FROM history WHERE conversation_id = ? AND id >= ?",
            [conversation_id, first_dropped],
        )
    return cursor.rowcount


def keep_version(store: Store, conversation_id: int, versions: Collection[int], kept: int) -> None:
    """Mark which of a question's recorded answers (its versions, history ids) the
    conversation continues: `kept`'s turn is marked kept, the others' not (a failed or stopped
    one has no turn to mark: when it is `kept`, no version of the question is context)."""
    wanted = sorted(set(versions))
    marks = ", ".join("?" * len(wanted))
    with store.writing():
        rows = store.db.execute(
            f"""SELECT id, turn FROM history
                WHERE conversation_id = ? AND turn IS NOT NULL AND id IN ({marks})""",
            [conversation_id, *wanted],
        ).fetchall()
        for history_id, turn in rows:
            marked = json.loads(turn) | {"kept": history_id == kept}
            store.db.execute(
                "UPDATE history SET turn = ? WHERE id = ?",
                [json.dumps(marked, ensure_ascii=False), history_id],
            )


def follow_first_question(store: Store, conversation_id: int, old: str, new: str) -> bool:
    """The user edited the conversation's first question `old` into `new`: its title follows,
    unless the user renamed it (it is no longer the one the old question gave it)."""
    with store.writing():
        cursor = store.db.execute(
            "UPDATE conversations SET title = ? WHERE id = ? AND title = ?",
            [_title(new), conversation_id, _title(old)],
        )
    return cursor.rowcount > 0


def rename(store: Store, conversation_id: int, title: str) -> bool:
    """Give the conversation the user's own title; False when there is no such one."""
    with store.writing():
        cursor = store.db.execute(
            "UPDATE conversations SET title = ? WHERE id = ?", [_title(title), conversation_id]
        )
    return cursor.rowcount > 0


@dataclass(frozen=True, slots=True)
class ConversationMatch:
    conversation_id: int
    excerpt: str  # the words found in its best matching turn; "" when its title matched


def search(store: Store, query: str) -> list[ConversationMatch]:
    """The conversations whose title holds `query` (the latest first), then those whose
    questions or answers hold all its words, the best match first; a word may be the start of
    a longer one (the user is still typing it). Words are the library's search terms: CJK
    text as bigrams, as the documents' passages are searched."""
    matches: dict[int, ConversationMatch] = {}
    wanted = " ".join(query.split())
    if not wanted:
        return []
    pattern = "%" + wanted.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"
    for (conversation_id,) in store.db.execute(
        "SELECT id FROM conversations WHERE title LIKE ? ESCAPE '\\' ORDER BY updated_at DESC",
        [pattern],
    ):
        matches[conversation_id] = ConversationMatch(conversation_id, "")
    terms = keyword_terms(wanted, limit=None)
    if not terms:
        return list(matches.values())
    expression = " AND ".join('"' + term.replace('"', '""') + '"*' for term in terms)
    rows = store.db.execute(
        """SELECT h.conversation_id, h.question, h.answer
           FROM history_fts JOIN history h ON h.id = history_fts.rowid
           WHERE history_fts MATCH ? AND h.conversation_id IS NOT NULL
           ORDER BY bm25(history_fts) LIMIT ?""",
        [expression, SEARCH_HITS],
    )
    for conversation_id, question, answer in rows:
        if conversation_id not in matches:
            excerpt = _excerpt(answer, terms) or _excerpt(question, terms)
            matches[conversation_id] = ConversationMatch(conversation_id, excerpt)
    return list(matches.values())


def _excerpt(text: str, terms: list[str]) -> str:
    """The text around the first of `terms` it holds, on one line; "" when it holds none."""
    lowered = text.lower()
    found = [at for term in terms if (at := lowered.find(term.lower())) >= 0]
    if not found:
        return ""
    start = max(0, min(found) - EXCERPT_CHARS // 3)
    end = start + EXCERPT_CHARS
    excerpt = " ".join(text[start:end].split())
    return ("…" if start else "") + excerpt + ("…" if end < len(text) else "")
