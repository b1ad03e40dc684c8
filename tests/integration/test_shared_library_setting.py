"""The library Settings → Library names is every front door's: the command line and `docent
serve-mcp` (an MCP client nobody here wrote: the Python SDK's, over stdio) read the shared
library on a real PostgreSQL without `--library`; `--library local` names this computer's."""

from __future__ import annotations

import json
import os
import sys

from mcp import Client, StdioServerParameters

from app.paths import Paths
from app.samples import sample_path
from tests.conftest import docent
from tests.integration.conftest import run

POLICY = "northwind-retention-policy.pdf"
QUESTION = "How long are customer invoices kept?"


def test_the_cli_and_the_mcp_server_use_the_library_the_settings_name(
    shared_library: str, isolated_paths: Paths
) -> None:
    isolated_paths.settings_file.write_text(
        json.dumps({"library": {"shared_url": shared_library}}), "utf-8"
    )
    indexed = docent("index", "--no-embed", str(sample_path(POLICY)))
    assert indexed.returncode == 0, indexed.stderr
    assert POLICY in docent("docs").stdout
    here = docent("--library", "local", "docs")
    assert here.returncode == 0, here.stderr
    assert POLICY not in here.stdout  # this computer's library never saw it
    refused = docent("--library", "local", "models")
    assert refused.returncode == 2
    assert "--library does not apply to `models`" in refused.stderr

    async def served() -> tuple[list[str], list[tuple[str, int]]]:
        server = StdioServerParameters(
            command=sys.executable, args=["-m", "app.cli", "serve-mcp"], env=dict(os.environ)
        )
        async with Client(server) as client:
            listed = (await client.call_tool("list_documents", {})).structured_content
            found = await client.call_tool("search_documents", {"query": QUESTION, "k": 2})
        passages = found.structured_content["passages"]
        return (
            [d["name"] for d in listed["documents"]],
            [(p["document"], p["page"]) for p in passages],
        )

    names, passages = run(served())
    assert names == [POLICY]
    assert passages[0] == (POLICY, 2)
