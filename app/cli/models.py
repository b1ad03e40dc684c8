"""`docent models`: the catalog's models and their state, what llama.cpp can use on this
processor, and whether the chat model runs on safe settings; `--setup` assembles them now."""

from __future__ import annotations

import argparse
import sys

from app.bootstrap import Docent
from app.catalog import ensure_model
from app.cli.terminal import Progress
from app.llm.engine import EngineError
from app.llm.local import probe


def add_parsers(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    models = commands.add_parser("models", help="list the catalog's models and their state")
    models.add_argument(
        "--setup", action="store_true", help="assemble and verify the bundled models now"
    )


def models(docent: Docent, arguments: argparse.Namespace) -> int:
    setup = arguments.setup
    progress = Progress()
    for model in docent.catalog.models:
        if setup and model.bundled and (model.default or model.installed):

            def show(done: int, total: int, name: str = model.name) -> None:
                progress.update(f"{name}: {done * 100 // max(total, 1)}%")

            path = ensure_model(model, docent.paths.models_dir, show)
            progress.line(f"{model.name} ({model.role}): ready at {path}")
        else:
            state = "bundled" if model.bundled else "download"
            print(
                f"{model.name:<24} {model.role:<9} {model.size / 1e6:>7.0f} MB  {state}  "
                f"{model.licence}"
            )
    try:
        print(f"\nllama.cpp here: {probe()}")
    except EngineError as error:
        print(f"\nllama.cpp here: {error}", file=sys.stderr)
        return 1
    chat_model = docent.settings.local.chat_model
    mode = docent.chat.safe_mode()
    print(f"{chat_model}: {mode.describe() if mode else 'normal settings'}")
    return 0
