"""`docent eval`: the same questions through local only, cloud only and auto, in one table;
`--summaries`: local summaries scored on the key facts they keep; `--scanned DPI`: the questions
about a set's PDFs, asked of image-only copies that Docent's OCR pass reads."""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from importlib import resources
from pathlib import Path
from typing import Any

from app.answering.pipeline import choose_sources
from app.bench.eval_set import SOURCES, fetch_documents, load_sources, set_folder
from app.bench.evaluation import (
    MODES,
    QA,
    asked_together,
    breakdown,
    evaluate,
    load_questions,
    router_table,
    table,
)
from app.bench.rasterize import scanned_copies, scanned_folder
from app.bench.summaries_eval import evaluate_summaries, load_cases, summaries_table
from app.bootstrap import Docent
from app.cli.documents import UsageError, resolve
from app.cli.terminal import printable
from app.intake import FileFailed, OcrFailed, OcrProgress
from app.samples import shipped_questions_path

# Below 50 dpi a page is a thumbnail nobody would scan; above 600 one picture takes 100+ MB.
SCAN_DPI = range(50, 601)
OCR_REPORT_PAGES = 10  # an OCR progress line every this many pages (a page takes seconds)


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
    evaluation.add_argument(
        "--scanned",
        type=int,
        default=None,
        metavar="DPI",
        help="ask only the questions about the PDFs of a set with a sources.toml, each PDF "
        "indexed as a scan: its pages rendered at DPI into a copy with no text layer, which "
        "Docent's OCR pass reads (the copies are kept beside the fetched set)",
    )
    evaluation.add_argument(
        "--retrieval-only",
        action="store_true",
        help="no model: only the retrieval recall (an evidence page among the passages a "
        "question's prompt would get), overall and per kind, language and split",
    )
    evaluation.add_argument("--json", type=Path, default=None, help="also write the rows here")


async def evaluate_questions(docent: Docent, arguments: argparse.Namespace) -> int:
    if arguments.scanned is not None:
        _check_scanned(arguments)
    if arguments.summaries is not None:
        return await _evaluate_summaries(docent, arguments)
    qa_path = arguments.qa or shipped_questions_path()
    chosen = [qa for qa in load_questions(qa_path) if arguments.split in ("all", qa.split)]
    # In the order they are asked, so that --limit keeps a conversation's first turns.
    groups = asked_together(chosen)
    skipped = ""
    if arguments.scanned is not None:
        groups, skipped = _about_pdfs(groups)
        if not groups:
            raise UsageError(f"--scanned: {qa_path} asks nothing about a PDF")
    questions = [qa for group in groups for qa in group][: arguments.limit]
    modes = [mode.strip() for mode in arguments.modes.split(",")]
    if unknown := [mode for mode in modes if mode not in MODES]:
        raise UsageError(f"unknown mode {unknown[0]!r} (choose from: {', '.join(MODES)})")
    documents, mirror = arguments.documents, arguments.mirror
    if documents is None and arguments.qa is None and not arguments.mirror:
        documents = [Path(str(resources.files("resources").joinpath("sample")))]
    if arguments.scanned is not None:
        documents = await _scans(docent, arguments.qa, questions, arguments.scanned, mirror)
        mirror = None  # the set is fetched: its scans are indexed like named documents
    await _index(docent, arguments.qa, documents, mirror, embed=True)
    if arguments.retrieval_only:
        return await _retrieval_only(docent, qa_path, questions, arguments.json)
    # Every mode answers every question itself: no answer may come from another mode's cache.
    await docent.apply_settings(
        docent.settings.model_copy(
            update={"routing": docent.settings.routing.model_copy(update={"cache_ttl_s": 0})}
        )
    )
    rows = await evaluate(docent.desk, questions, modes)
    print(f"{len(questions)} questions from {qa_path}")
    if arguments.scanned is not None:
        print(f"scanned at {arguments.scanned} dpi (OCR): {skipped}")
    print()
    print(printable(table(rows)))
    print("\n" + printable(breakdown(rows)))
    print("\n" + printable(router_table(rows)))
    for row in rows:
        for failure in row["failures"]:
            print(f"{row['mode']}: failed: {printable(failure)}", file=sys.stderr)
    if arguments.json:
        arguments.json.write_text(json.dumps(rows, indent=2, ensure_ascii=False), "utf-8")
    return 0


async def _retrieval_only(
    docent: Docent, qa_path: Path, questions: list[QA], json_path: Path | None
) -> int:
    """Each question's sources as the answer's prompt would get them (a conversation's later
    turns are read alone), scored without a model: the retrieval half of the evaluation, for
    comparing indexes (an embedded and a shared library)."""
    retrieval = docent.settings.retrieval
    rows: list[dict[str, Any]] = []
    for qa in questions:
        if not qa.answerable:
            continue
        passages = await docent.library.search(qa.question, retrieval.top_k)
        sources = choose_sources(passages, retrieval.context_tokens)
        rows.append(
            {
                "question": qa.question,
                "kind": qa.kind,
                "lang": qa.lang,
                "split": qa.split,
                "retrieved": qa.retrieved(sources),
                "sources": [[s.document, s.page] for s in sources],
            }
        )
    print(f"{len(rows)} answerable questions from {qa_path}, retrieval only\n")
    print("| group | questions | retrieval recall |\n|---|---|---|")
    groups = [("all", rows)] + [
        (f"{field} {value}", [row for row in rows if row[field] == value])
        for field in ("kind", "lang", "split")
        for value in sorted({row[field] for row in rows})
    ]
    for name, members in groups:
        recall = sum(row["retrieved"] for row in members) / len(members)
        print(f"| {name} | {len(members)} | {recall:.0%} |")
    if json_path:
        text = json.dumps(rows, indent=2, ensure_ascii=False)
        await asyncio.to_thread(json_path.write_text, text, "utf-8")
    return 0


def _check_scanned(arguments: argparse.Namespace) -> None:
    """--scanned needs the set's own PDFs: fetched from its sources.toml, nothing else."""
    if arguments.summaries is not None or arguments.documents is not None:
        raise UsageError("--scanned takes a QA file's own documents: no --summaries or --documents")
    if arguments.qa is None or not (arguments.qa.parent / SOURCES).is_file():
        raise UsageError(f"--scanned needs a QA file with a {SOURCES} beside it")
    if arguments.scanned not in SCAN_DPI:
        raise UsageError(f"--scanned: DPI must be {SCAN_DPI.start} to {SCAN_DPI.stop - 1}")


def _about_pdfs(groups: list[list[QA]]) -> tuple[list[list[QA]], str]:
    """The questions (a conversation whole) about PDFs only, and a line saying what was left out:
    a scan of another format is no document anyone has, and an unanswerable question has none."""
    kept: list[list[QA]] = []
    others: set[str] = set()
    unanswerable = 0
    for group in groups:
        if all(qa.document.casefold().endswith(".pdf") for qa in group):
            kept.append(group)
        else:
            others.update(qa.document for qa in group if qa.document)
            unanswerable += sum(not qa.document for qa in group)
    skipped = sum(map(len, groups)) - sum(map(len, kept))
    line = f"only the questions about PDFs; {skipped} skipped"
    if others:
        line += f" (about {', '.join(sorted(others))}"
        line += f"; {unanswerable} unanswerable)" if unanswerable else ")"
    elif unanswerable:
        line += " (unanswerable)"
    return kept, line


async def _scans(
    docent: Docent, qa: Path, questions: list[QA], dpi: int, mirror: str | None
) -> list[Path]:
    """Image-only copies of the PDFs `questions` are about, fetched and scanned (or cached)."""
    pinned = qa.parent / SOURCES
    needed = {question.document for question in questions}
    folder = set_folder(docent.paths.cache_dir, pinned)
    originals = await fetch_documents(
        [source for source in load_sources(pinned) if source.name in needed],
        folder,
        mirror=mirror,
        report=_progress,
    )
    return await scanned_copies(originals, scanned_folder(folder, dpi), dpi, _progress)


def _progress(line: str) -> None:
    print(printable(line), file=sys.stderr)


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
            if isinstance(event, OcrProgress) and (
                event.done % OCR_REPORT_PAGES == 0 or event.done == event.total
            ):
                _progress(f"{event.path.name}: OCR {event.done}/{event.total} pages")
            elif isinstance(event, OcrFailed):  # the page stays unread, as it would for a user
                _progress(f"{event.path.name}: OCR page {event.page}: {event.reason}")
    return list(documents or [])
