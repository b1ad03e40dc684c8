"""`docent --smoke-test`: does this installation work, end to end?

The real window, in a throwaway library (the user's own is never touched; the models folder is
shared so the bundled model is joined only once): index the sample policy PDF, answer one
question with the bundled model, print the answer and its route, and start the cloud gateway as
the app does (the frozen app re-runs itself as `-m app.cli gateway`). Exit 0 when all of it
worked; anything else prints why and exits 1. `make package-test` runs it on the built bundle.
"""

from __future__ import annotations

import asyncio
import sys
import tempfile
from importlib import resources
from pathlib import Path

from PySide6.QtWidgets import QApplication

from app.bootstrap import Docent
from app.errors import DocentError
from app.paths import Paths
from app.processes import free_loopback_port
from app.settings import Settings
from ui.main import open_window

SAMPLE = "northwind-retention-policy.pdf"
QUESTION = "How long are customer invoices kept?"
# Generous: a first run joins the bundled model (500 MB) before it answers on a slow CPU.
TIME_LIMIT_S = 600.0


class SmokeTestFailed(DocentError):
    """The installation does not work; the message says which step failed."""


async def _index_and_ask(docent: Docent) -> None:
    async with open_window(docent) as window:
        print("window: shown", flush=True)  # `make package-test` times the start by this line
        sample = Path(str(resources.files("resources").joinpath(f"sample/{SAMPLE}")))
        await window.add_paths([sample])
        indexed = {d.name: d for d in await docent.library.documents()}.get(SAMPLE)
        if indexed is None or not indexed.chunks or indexed.embedded < indexed.chunks:
            raise SmokeTestFailed(f"{sample} was not indexed and embedded: {indexed}")
        print(f"indexed: {SAMPLE}, {indexed.pages} pages, {indexed.chunks} chunks embedded")

        await window.ask(QUESTION)
        conversation = window.turns
        if (turn := conversation.current) is None:
            raise SmokeTestFailed("the question was not shown")
        footer = turn.badge.text()
        exchange = turn.text()  # Q:, A:, Sources:, then the badge's line
        answer = turn.answer.toPlainText().strip()
        bundled = docent.catalog.default("chat").name
        if not footer.startswith(f"route: local ({bundled})"):
            raise SmokeTestFailed(f"the bundled model {bundled} did not answer: {footer}")
        if not answer:
            raise SmokeTestFailed(f"the answer is empty: {exchange}")
        if SAMPLE not in {source.document for source in conversation.cited_sources()}:
            raise SmokeTestFailed(f"the answer cites nothing from {SAMPLE}: {exchange}")
        print(exchange.strip())
        if (engine := docent.chat.state) is not None:
            print(f"local engine: {engine.describe()}")


async def _gateway() -> None:
    # Imported here, after the window: the app loads the MCP server only when it starts the
    # gateway, and loaded first it added ~0.45 s to the start `make package-test` times.
    from app.cloud.gateway import Provider
    from app.cloud.probe import probe_server
    from app.cloud.routes import gateway_server

    # Nothing listens on the provider's port: starting the gateway and listing its tools never
    # calls the provider, and nothing is read from or written to the keychain.
    provider = Provider("smoke", f"http://127.0.0.1:{free_loopback_port()}/v1", ("none",), None)
    probe = await probe_server(gateway_server([provider]), None)
    if not probe.ok:
        raise SmokeTestFailed(f"the cloud gateway did not start: {probe.describe()}")
    print(f"gateway: {probe.describe()}")


async def _smoke(home: Path) -> None:
    paths = Paths(
        home / "config", home / "data", home / "cache", Paths.from_environment().models_dir
    )
    paths.create()
    docent = Docent(paths, Settings())
    await docent.open()
    try:
        await _index_and_ask(docent)
        await _gateway()
        # Detection only (keyring's backends come from entry points): nothing is read or stored.
        print(f"keychain: {(await docent.secret_store()).describe()}")
    finally:
        await docent.close()


async def session(_app: QApplication) -> int:
    try:
        with tempfile.TemporaryDirectory(prefix="docent-smoke-") as home:
            await asyncio.wait_for(_smoke(Path(home)), TIME_LIMIT_S)
    except Exception as error:  # any failure at all is the answer to "does it work?"
        reason = f"timed out after {TIME_LIMIT_S:g} s" if isinstance(error, TimeoutError) else error
        print(f"smoke test failed: {type(error).__name__}: {reason}", file=sys.stderr)
        return 1
    print("smoke test passed")
    return 0
