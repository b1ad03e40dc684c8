"""`docent conversations` (list, show, export or delete the kept conversations) and `docent history`
(recent questions with their route, latency and cost)."""

from __future__ import annotations

import argparse
from dataclasses import asdict
from pathlib import Path

from app.answering.export import conversation_markdown
from app.answering.metrics import describe_cost
from app.bootstrap import Docent
from app.cli.terminal import printable, printable_json


def add_parsers(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    kept = commands.add_parser(
        "conversations", help="list the kept conversations; show or delete one"
    )
    kept.add_argument("--show", type=int, metavar="ID", help="print a conversation's turns")
    kept.add_argument("--delete", type=int, metavar="ID", help="delete a conversation")
    kept.add_argument(
        "--export", type=int, metavar="ID", help="a conversation as Markdown, with its sources"
    )
    kept.add_argument("--out", type=Path, metavar="FILE", help="write the export to FILE")
    kept.add_argument("--json", action="store_true")
    history = commands.add_parser("history", help="recent questions with route, latency and cost")
    history.add_argument("-n", type=int, default=10, help="how many (default 10)")
    history.add_argument("--json", action="store_true")


async def conversations(docent: Docent, arguments: argparse.Namespace) -> int:
    desk = docent.desk
    if arguments.delete is not None:
        await desk.delete(arguments.delete)
        print(f"deleted conversation {arguments.delete}")
        return 0
    if arguments.export is not None:
        exported = await desk.open(arguments.export)
        titles = {kept.id: kept.title for kept in await desk.conversations()}
        markdown = conversation_markdown(titles[arguments.export], exported.entries)
        if arguments.out is None:
            print(printable(markdown), end="")
        else:
            arguments.out.write_text(markdown, encoding="utf-8")
            print(f"wrote conversation {arguments.export} to {arguments.out}")
        return 0
    if arguments.show is not None:
        entries = (await desk.open(arguments.show)).entries
        if arguments.json:
            print(printable_json([asdict(entry) for entry in entries]))
            return 0
        for entry in entries:
            print(printable(f"Q: {entry.question}"))
            if entry.standalone and entry.standalone != entry.question:
                print(printable(f"   (searched for: {entry.standalone})"))
            print(printable(f"A: {entry.answer or entry.error or '[' + entry.status + ']'}"))
            for citation in entry.citations:
                print(printable(f"   [{citation['number']}] {citation['where']}"))
            print()
        return 0
    listed = await desk.conversations()
    if arguments.json:
        print(printable_json([asdict(conversation) for conversation in listed]))
        return 0
    if not listed:
        print("no conversations yet: `docent ask` starts one")
    for conversation in listed:
        turns = f"{conversation.turns} turn{'s' if conversation.turns != 1 else ''}"
        print(
            printable(
                f"{conversation.id:>5}  {conversation.updated_at}  {turns:>8}  "
                f"{'[MCP client] ' if conversation.client else ''}{conversation.title}"
            )
        )
    return 0


async def history(docent: Docent, arguments: argparse.Namespace) -> int:
    entries = await docent.desk.history(arguments.n)
    if arguments.json:
        print(printable_json([asdict(entry) for entry in entries]))
        return 0
    for entry in reversed(entries):
        ttft = "–" if entry.ttft_s is None else f"{entry.ttft_s:.2f} s"
        print(
            printable(
                f"{entry.asked_at}  {entry.route} ({entry.model})  TTFT {ttft}  "
                f"total {entry.total_s:.1f} s  {describe_cost(entry.cost_usd)}  [{entry.status}]"
            )
        )
        print(f"    Q: {printable(entry.question)}")
    budget = docent.desk.budget
    await budget.load()
    print(f"budget: {budget.describe()}")
    return 0
