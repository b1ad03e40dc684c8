"""The reading steps: the model writes the arithmetic and Python computes it; a lookup's value is
the one the sources state beside the question's words."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path

import openpyxl
import pytest

from app.answering import Finished, SourcesFound, Status
from app.answering.calculation import calculate
from app.answering.extraction import extract, value_kind
from app.answering.pipeline import Answerer
from app.answering.run import Parts
from app.documents.chunking import chunk_pages
from app.documents.office import read_xlsx
from app.documents.parse import PageText
from app.index.store import NewDocument
from app.llm.engine import CancelToken, GenerationEvent, GenerationRequest
from app.routing import LocalOnlyPolicy
from app.settings import Settings
from tests.unit.test_answering import ScriptedEngine, collect, library_with_report, make_answerer


@pytest.mark.parametrize(
    ("written", "expression", "result"),
    [
        ("2015 - 1994", "2015 - 1994", "21"),
        ("`2024-05-29 - 2024-05-20`", "2024-05-29 - 2024-05-20", "9"),  # dates: days
        ("The years:\n(80 − 60) × 2 =", "(80 - 60) * 2", "40"),  # the first arithmetic line
        ("30 / 15", "30 / 15", "2"),
        ("7 / 2", "7 / 2", "3.5"),
        ("1998 - 2003 = -5", "1998 - 2003", "5"),  # "how many" asks for a magnitude
    ],
)
def test_arithmetic_over_copied_values_is_computed(
    written: str, expression: str, result: str
) -> None:
    calculation = calculate(written)
    assert calculation is not None
    assert (calculation.expression, calculation.result) == (expression, result)
    assert calculation.line == f"Calculated from the sources: {expression} = {result}"


@pytest.mark.parametrize(
    "written",
    [
        "The answer is 21 years.",  # words, not arithmetic
        "1460",  # a single value: nothing calculated
        "2024-02-30 - 2024-02-01",  # not a real date
        "__import__('os').system('id')",
        "2 ** 1000000",  # no power: a model cannot make Python hang
        "1 / 0",
        "",
    ],
)
def test_anything_but_arithmetic_is_refused(written: str) -> None:
    assert calculate(written) is None


class SteppingEngine(ScriptedEngine):
    """Writes `step` when asked for a step before the answer (its instruction holds `asked`),
    then the answer pieces."""

    def __init__(self, asked: str, step: str, pieces: list[str]) -> None:
        super().__init__(pieces)
        self.asked = asked
        self.step = step

    async def stream(
        self, request: GenerationRequest, cancel: CancelToken
    ) -> AsyncIterator[GenerationEvent]:
        if self.asked in request.messages[-1].content:
            self.pieces, answer = [self.step], self.pieces
            async for event in super().stream(request, cancel):
                yield event
            self.pieces = answer
            return
        async for event in super().stream(request, cancel):
            yield event


def calculating_engine(arithmetic: str, pieces: list[str]) -> SteppingEngine:
    return SteppingEngine("Write only the arithmetic", arithmetic, pieces)


def querying_engine(query: str, pieces: list[str]) -> SteppingEngine:
    return SteppingEngine("Write only one SQLite SELECT", query, pieces)


def test_a_computation_question_is_answered_with_the_computed_value_in_front_of_the_model(
    tmp_path: Path,
) -> None:
    engine = calculating_engine("7 * 2", ["14 years."])
    answerer, _ = make_answerer(tmp_path, engine)
    events = collect(answerer, "How many years in total are two retention periods?")
    assert any(isinstance(e, Status) for e in events)
    assert len(engine.requests) == 2
    assert (
        engine.requests[1].messages[-1].content.endswith("Calculated from the sources: 7 * 2 = 14")
    )
    assert isinstance(events[-1], Finished)
    assert events[-1].answer == "14 years."  # the calculator supports it: no source says 14


def test_a_lookup_gets_no_calculation_and_prose_adds_nothing(tmp_path: Path) -> None:
    engine = calculating_engine("seven years", ["Seven years."])
    answerer, _ = make_answerer(tmp_path, engine)
    collect(answerer, "How many years are invoices kept?")
    assert len(engine.requests) == 2  # "how many": the step ran, and found no arithmetic
    assert "Calculated" not in engine.requests[1].messages[-1].content
    engine.requests.clear()
    collect(answerer, "Who governs the data?")
    assert len(engine.requests) == 1


def sheet_answerer(tmp_path: Path, engine: ScriptedEngine, settings: Settings) -> Answerer:
    """The report and a 300-row sheet, which the reader cuts into a dozen chunks."""
    workbook = openpyxl.Workbook()
    sheet = workbook.active
    sheet.title = "Scores"
    sheet.append(["Player", "Points"])
    for number in range(300):
        sheet.append([f"player {number}", number])
    workbook.save(tmp_path / "scores.xlsx")
    units = read_xlsx(tmp_path / "scores.xlsx").units
    pages = [PageText(n, unit.label, tuple(unit.blocks)) for n, unit in enumerate(units, 1)]
    chunks = list(chunk_pages(pages))
    library = asyncio.run(library_with_report(tmp_path / "library.sqlite3"))
    new = NewDocument("/docs/scores.xlsx", "Scores", "xlsx", "s", 1, 1, len(units), None)
    asyncio.run(library.write(lambda store: store.write_document(new, chunks)))
    return Answerer(Parts(library, engine, LocalOnlyPolicy("scripted"), settings))


COUNT = "SELECT count(*) FROM scores WHERE points >= 100"


def test_a_sheet_is_computed_over_whole_not_over_the_chunks_retrieval_chose(
    tmp_path: Path,
) -> None:
    """Retrieval hands the prompt a few of the sheet's chunks: counting those answered 'how
    many' with the number of rows a search happened to find."""
    engine = querying_engine(COUNT, ["200 players."])
    events = collect(sheet_answerer(tmp_path, engine, Settings()), "How many players have 100?")
    (found,) = [event for event in events if isinstance(event, SourcesFound)]
    sent = [source for source in found.sources if source.document == "scores.xlsx"]
    assert 0 < len(sent) < 12  # the prompt holds part of the sheet
    query_request, answer_request = engine.requests
    assert "(the sheet 'Scores' of scores.xlsx, 300 rows)" in query_request.messages[-1].content
    assert (
        "The answer, computed over the sheet 'Scores' of scores.xlsx (300 rows): 200. "
        f"Query: {COUNT}; from the rows player 100"
    ) in answer_request.messages[-1].content
    assert isinstance(events[-1], Finished)
    assert events[-1].answer.startswith("200 players")


def test_in_excerpts_mode_with_a_cascade_the_sheet_is_computed_over_the_excerpts_alone(
    tmp_path: Path,
) -> None:
    """The draft goes to the cloud, which may see the excerpts only: a count over the rest of
    the sheet would tell it what they do not."""
    settings = Settings.model_validate({"routing": {"cascade": True, "privacy": "excerpts"}})
    engine = querying_engine(COUNT, ["Some players."])
    collect(sheet_answerer(tmp_path, engine, settings), "How many players have 100?")
    query_request = engine.requests[0]
    assert "300 rows" not in query_request.messages[-1].content
    assert "(the sheet 'Scores' of scores.xlsx, " in query_request.messages[-1].content


@dataclass(frozen=True)
class Passage:
    text: str
    heading: str | None = None
    number: int = 0  # unused by extraction; a source has one


CHANGELOG = [
    Passage("2.29.0 (2023-04-26)\n- Requests now defers chunked requests to urllib3.", None),
    Passage("- Requests has officially dropped support for Python 2.7.", "2.28.0 (2022-06-09)"),
    Passage("- Fixed parsing of NO_PROXY; see CVE-2021-33503 and CVE-2023-32681.", "2.27.1"),
    Passage("- REQUESTS_CA_BUNDLE now sets the certificate bundle.", "2.27.0"),
]


@pytest.mark.parametrize(
    ("question", "kind", "value"),
    [
        ("In which release was Python 2.7 dropped?", "version", "2.28.0"),  # from a title
        ("Which CVE covers the NO_PROXY parsing fix?", "CVE", "CVE-2021-33503"),
        ("Which variable sets the certificate bundle?", "name", "REQUESTS_CA_BUNDLE"),
        ("Who maintains Requests?", None, None),
    ],
)
def test_the_value_asked_for_is_the_one_beside_the_questions_words(
    question: str, kind: str | None, value: str | None
) -> None:
    assert value_kind(question) == kind
    found = extract(kind, question, CHANGELOG) if kind else None
    assert (found.value if found else None) == value


@pytest.mark.parametrize(
    "question",
    [
        "In which release was Python 3.13 dropped?",  # the sources name 2.7, not 3.13
        "In which release was REQUESTS_CA_BUNDLE_PATH added?",
    ],
)
def test_no_value_is_given_whose_surroundings_lack_what_the_question_names(question: str) -> None:
    """A question naming a version or an identifier no source names beside a value is one the
    sources do not answer: the value beside its other words was an invention the model then
    stated as the sources' (7 of the 24 unanswerable tune questions got one)."""
    assert value_kind(question) == "version"
    assert extract("version", question, CHANGELOG) is None


def test_the_value_is_judged_by_its_own_sentence_not_a_neighbouring_example() -> None:
    """Debian's Developer's Reference, 5.11.2: an example per sentence, close together."""
    versioning = [
        Passage(
            "For a native package, if the current version is 1.5, an NMU gets version 1.5+nmu1. "
            "For a non-native package, if the current version is 1.5-2, it gets 1.5-2.1."
        )
    ]
    question = "What version does an NMU get for a non-native package at version 1.5-2?"
    found = extract("version", question, versioning)
    assert found is not None
    assert found.value == "1.5-2.1"
