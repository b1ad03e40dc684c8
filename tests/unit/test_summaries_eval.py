"""`docent eval --summaries`: summaries scored on the key facts they keep, the false claims they
make and whether they end mid-sentence, over a scripted desk."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any, cast

import pytest

from app.answering import Finished
from app.answering.metrics import AnswerMetrics
from app.answering.sections import PartNotFound
from app.bench.eval_set import load_sources
from app.bench.evaluation import EvalError
from app.bench.summaries_eval import (
    SummaryCase,
    ends_mid_sentence,
    evaluate_summaries,
    load_cases,
    score,
    summaries_table,
)

METRICS = AnswerMetrics("local", "tiny", "test", 0.0, 0.1, 0.2, 10, 5, None, 0.0)
MANUALS = Path(str(resources.files("resources").joinpath("eval/manuals")))


@pytest.mark.parametrize(
    ("summary", "cut"),
    [
        ("It covers ports.", False),
        ("It covers ports [2].", False),
        ("It covers ports. [2]", False),
        ("It covers ports.[2][5]", False),
        ('It says "use port 80."', False),
        ("Does it cover ports?", False),
        ("它介绍了主机名解析[3]。", False),
        ("它介绍了主机名解析。[3]", False),
        ("It covers ports and", True),
        ("It covers ports [2]", True),
        ("它介绍了主机名", True),
        ("", True),
    ],
)
def test_a_summary_ends_mid_sentence_unless_its_last_sentence_is_closed(
    summary: str, cut: bool
) -> None:
    assert ends_mid_sentence(summary) is cut


def case(**more: Any) -> SummaryCase:
    line = {
        "document": "licence.txt",
        "chapter": None,
        "facts": ["2.0", ["patent", "patents"], [["royalty", "free"]]],
        "false": [["version 3"], "51%"],
    }
    return load_cases(write_cases(Path(more.pop("folder")), [line | more]))[0]


def write_cases(folder: Path, lines: list[dict[str, Any]]) -> Path:
    path = folder / "summaries.jsonl"
    path.write_text("\n".join(json.dumps(line) for line in lines), encoding="utf-8")
    return path


def test_facts_kept_and_false_claims_made_are_counted(tmp_path: Path) -> None:
    scored = score(case(folder=tmp_path), "Apache 2.0 grants a Royalty-free patent licence.")
    assert scored["facts_kept"] == 1.0
    assert (scored["false_claims"], scored["mid_sentence"]) == (0, False)

    scored = score(case(folder=tmp_path), "It is version 3 of a free licence, 51% of")
    assert scored["facts_kept"] == 0.0  # "free" alone is not "royalty" and "free"
    assert scored["facts_missed"] == [[["2.0"]], [["patent"], ["patents"]], [["royalty", "free"]]]
    assert (scored["false_claims"], scored["mid_sentence"]) == (2, True)


@dataclass
class ScriptedJob:
    steps: int
    summary: str
    runs: list[tuple[str | None, bool]]

    @property
    def plan(self) -> Any:
        return type("Plan", (), {"steps": self.steps})()

    async def run(
        self, route: str | None = None, *, replace_stored: bool = True
    ) -> AsyncIterator[Finished]:
        self.runs.append((route, replace_stored))
        yield Finished(self.summary, (), METRICS, 1, False, None)


class ScriptedDesk:
    def __init__(self, summaries: dict[tuple[int, str | None], str]) -> None:
        self.summaries = summaries
        self.runs: list[tuple[str | None, bool]] = []

    async def summary(self, document_id: int, chapter: str | None = None) -> ScriptedJob:
        if (document_id, chapter) not in self.summaries:
            raise PartNotFound(f"the document has no {chapter!r}")
        return ScriptedJob(2, self.summaries[document_id, chapter], self.runs)


def test_each_part_is_summarized_locally_afresh_and_reported(tmp_path: Path) -> None:
    whole = case(folder=tmp_path)
    chapter = case(folder=tmp_path, chapter="Grant of Patent License", lang="en")
    missing = case(folder=tmp_path, chapter="Appendix")
    desk = ScriptedDesk(
        {
            (7, None): "The Apache License 2.0 grants royalty-free patent rights [1].",
            (7, "Grant of Patent License"): "Version 3 grants a patent licence",
        }
    )
    rows = asyncio.run(
        evaluate_summaries(cast(Any, desk), [whole, chapter, missing], {"licence.txt": 7})
    )
    assert desk.runs == [("local", False), ("local", False)]  # never the stored summary's place
    assert [row["part"] for row in rows] == ["whole", "Grant of Patent License", "Appendix"]
    assert rows[2]["error"] == "the document has no 'Appendix'"

    lines = summaries_table(rows).splitlines()
    assert lines[0] == (
        "| document | part | lang | steps | key facts kept | false claims | ends mid-sentence "
        "| time |"
    )
    assert lines[2].startswith("| licence.txt | whole | en | 2 | 100% | 0 | no | ")
    assert lines[3].startswith(
        "| licence.txt | Grant of Patent License | en | 2 | 33% | 1 | yes | "
    )
    assert lines[4].startswith("| licence.txt | Appendix | en | – | failed: the document has no ")
    assert lines[5].startswith("| all | 2 of 3 summarized | | 4 | 67% | 1 | 1 | ")


def test_a_line_without_facts_is_refused(tmp_path: Path) -> None:
    path = write_cases(tmp_path, [{"document": "licence.txt", "chapter": None}])
    with pytest.raises(EvalError, match=r"line 1: not a summary line \('facts'\)"):
        load_cases(path)


def test_the_manuals_set_summaries_name_its_documents_and_enough_facts() -> None:
    cases = load_cases(MANUALS / "summaries.jsonl")
    names = {source.name for source in load_sources(MANUALS / "sources.toml")}
    assert 4 <= len(cases) <= 6
    for part in cases:
        assert part.document in names
        assert 5 <= len(part.facts) <= 8
        assert len(part.false) == 2
    assert {part.lang for part in cases} == {"en", "zh"}
