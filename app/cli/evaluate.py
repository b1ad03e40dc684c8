"""`docent eval`: the same questions through local only, cloud only and auto, in one table;
`--summaries`: local summaries scored on the key facts they keep."""

from __future__ import annotations

import argparse
import json
import sys
from importlib import resources
from pathlib import Path

from app.bench.eval_set import SOURCES, fetch_documents, load_sources, set_folder
from app.bench.evaluation import (
    MODES,
    asked_together,
    breakdown,
    evaluate,
    load_questions,
    router_table,
    table,
)
from app.bench.summaries_eval import evaluate_summaries, load_cases, summaries_table
from app.bootstrap import Docent
from app.cli.documents import UsageError, resolve
from app.cli.terminal import printable
from app.intake import FileFailed
from app.samples import shipped_questions_path


def add_parsers(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    evaluation = commands.add_parser(
        "eval", help="the same questions through local only, cloud only and auto, in one table"
    )
    evaluation.add_argument(
        "qa",
        nargs="?",
        type=Path,
        default=None,
        help="a QA .jsonl file (default: the set shipped for the sample documents)",
    )
    evaluation.add_argument(
        "--documents",
        nargs="*",
        type=Path,
        default=None,
        help="index these first (default: the documents that a sources.toml beside QA pins, "
        "fetched into Docent's cache; with the shipped set: the sample documents)",
    )
    evaluation.add_argument(
        "--mirror",
        default=None,
        metavar="URL",
        help="fetch the pinned documents' packages from this base URL instead of the hosts "
        "sources.toml names (their paths are kept)",
    )
    evaluation.add_argument(
        "--summaries",
        type=Path,
        default=None,
        metavar="SUMMARIES.jsonl",
        help="instead of questions: summarize each part this file names on the local model and "
        "report the key facts kept, false claims made, text cut mid-sentence and time",
    )
    evaluation.add_argument(
        "--modes",
        default="local only,cloud only,auto",
        help="comma-separated, from: local only, cloud only, auto",
    )
    evaluation.add_argument(
        "--limit", type=int, default=None, help="only the first N questions (or parts)"
    )
    evaluation.add_argument(
        "--split",
        choices=["all", "tune", "holdout"],
        default="all",
        help="only the questions of this split (holdout: never used to tune)",
    )
    evaluation.add_argument("--json", type=Path, default=None, help="also write the rows here")


async def evaluate_questions(docent: Docent, arguments: argparse.Namespace) -> int:
    if arguments.summaries is not None:
        return await _evaluate_summaries(docent, arguments)
    qa_path = arguments.qa or shipped_questions_path()
    chosen = [qa for qa in load_questions(qa_path) if arguments.split in ("all", qa.split)]
    # In the order they are asked, so that --limit keeps a conversation's first turns.
    questions = [qa for group in asked_together(chosen) for qa in group][: arguments.limit]
    modes = [mode.strip() for mode in arguments.modes.split(",")]
    if unknown := [mode for mode in modes if mode not in MODES]:
        raise UsageError(f"unknown mode {unknown[0]!r} (choose from: {', '.join(MODES)})")
    documents = arguments.documents
    if documents is None and arguments.qa is None and not arguments.mirror:
        documents = [Path(str(resources.files("resources").joinpath("sample")))]
    await _index(docent, arguments.qa, documents, arguments.mirror, embed=True)
    # Every mode answers every question itself: no answer may come from another mode's cache.
    await docent.apply_settings(
        docent.settings.model_copy(
            update={"routing": docent.settings.routing.model_copy(update={"cache_ttl_s": 0})}
        )
    )
    rows = await evaluate(docent.desk, questions, modes)
    print(f"{len(questions)} questions from {qa_path}\n")
    print(printable(table(rows)))
    print("\n" + printable(breakdown(rows)))
    print("\n" + printable(router_table(rows)))
    for row in rows:
        for failure in row["failures"]:
            print(f"{row['mode']}: failed: {printable(failure)}", file=sys.stderr)
    if arguments.json:
        arguments.json.write_text(json.dumps(rows, indent=2, ensure_ascii=False), "utf-8")
    return 0


async def _evaluate_summaries(docent: Docent, arguments: argparse.Namespace) -> int:
    if arguments.qa is not None:
        raise UsageError("give QA or --summaries, not both")
    cases = load_cases(arguments.summaries)[: arguments.limit]
    indexed = await _index(
        docent, arguments.summaries, arguments.documents, arguments.mirror, embed=False
    )
    # A name means the file indexed from the set where there is one (the library may hold
    # another of the same name).
    paths = {path.name: str(path) for path in indexed}
    names = list(dict.fromkeys(case.document for case in cases))
    found = await resolve(docent, [paths.get(name, name) for name in names])
    rows = await evaluate_summaries(
        docent.desk, cases, {name: document.id for name, document in zip(names, found, strict=True)}
    )
    print(f"{len(cases)} parts from {arguments.summaries}, summarized locally\n")
    print(printable(summaries_table(rows)))
    if arguments.json:
        arguments.json.write_text(json.dumps(rows, indent=2, ensure_ascii=False), "utf-8")
    return 0


async def _index(
    docent: Docent,
    set_file: Path | None,
    documents: list[Path] | None,
    mirror: str | None,
    *,
    embed: bool,
) -> list[Path]:
    """Index `documents`, else those that a sources.toml beside `set_file` pins (fetched into
    Docent's cache); the paths indexed."""
    pinned = set_file.parent / SOURCES if set_file else None
    if documents is None and pinned is not None and pinned.is_file():
        documents = await fetch_documents(
            load_sources(pinned),
            set_folder(docent.paths.cache_dir, pinned),
            mirror=mirror,
            report=lambda line: print(printable(line), file=sys.stderr),
        )
    elif mirror:
        raise UsageError(
            f"--mirror needs a {SOURCES} beside QA or --summaries (and no --documents)"
        )
    if documents:
        async for event in docent.intake.index(documents, embed=embed):
            if isinstance(event, FileFailed):
                raise UsageError(f"cannot index {event.path}: {event.reason}")
    return list(documents or [])
