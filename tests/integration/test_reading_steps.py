"""The extraction step on the real bundled model: a changelog's release is only in its section
titles, and the answer names the one the question asks for."""

from __future__ import annotations

from pathlib import Path

from app.answering import Finished, Source
from tests.integration.conftest import index_all, opened, run

# A changelog as reStructuredText: each release's version is only in its section title.
CHANGELOG = """Changelog
=========

2.29.0 (2023-04-26)
-------------------

- Requests now defers chunked requests to the urllib3 implementation.

2.28.0 (2022-06-09)
-------------------

- Requests has officially dropped support for Python 2.7.
- Requests now has an optional dependency on charset_normalizer.

2.27.1 (2022-01-05)
-------------------

- Fixed parsing of the NO_PROXY environment variable.
"""


def test_a_release_lookup_is_answered_from_the_version_in_the_section_title(
    tmp_path: Path,
) -> None:
    changelog = tmp_path / "HISTORY.rst"
    changelog.write_text(CHANGELOG, encoding="utf-8")

    async def scenario() -> tuple[list[object], tuple[Source, ...]]:
        async with opened() as docent:
            await index_all(docent, [changelog])
            await docent.library.embed_pending()
            answerer = await docent.desk.answerer()
            events = [e async for e in answerer.answer("In which release was Python 2.7 dropped?")]
            return events, events[0].sources  # type: ignore[attr-defined]

    events, sources = run(scenario())
    assert {s.heading for s in sources} >= {"2.28.0 (2022-06-09)"}  # titles read as headings
    finished = events[-1]
    assert isinstance(finished, Finished)
    assert "2.28.0" in finished.answer
    assert any(source.heading == "2.28.0 (2022-06-09)" for source in finished.citations)
