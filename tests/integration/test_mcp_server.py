"""`docent serve-mcp` driven by clients nobody here wrote — the MCP Inspector's command-line mode
(npm) and the Python SDK's client — over stdio and Streamable HTTP, on the sample documents and
the bundled models; and the bearer token that any non-loopback bind requires."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections.abc import Iterator
from contextlib import AsyncExitStack, contextmanager
from pathlib import Path
from typing import Any

import httpx
import httpx2
import pytest
from mcp import Client, MCPError, StdioServerParameters
from mcp.client.streamable_http import streamable_http_client
from mcp.types import TextContent

from app.answering.events import DRAFT_REPLACED
from app.processes import free_loopback_port, serving
from tests.conftest import REPO, SHARED_MODELS, files_containing
from tests.integration.conftest import run
from tests.peers.inspector import InspectorFailed, inspect

SAMPLES = REPO / "resources" / "sample"
POLICY = "northwind-retention-policy.pdf"
TEA = "china-tea-primer.pdf"
QUESTION = "How long are customer invoices kept?"
SERVE = [sys.executable, "-m", "app.cli", "serve-mcp"]
READY = "Docent MCP server on"


@pytest.fixture(scope="module")
def library(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A Docent home with the sample documents indexed (by the real CLI), shared by this
    module's servers; short answers keep the real model's part quick on 2 cores."""
    home = tmp_path_factory.mktemp("served-library")
    environment = {
        **os.environ,
        "DOCENT_HOME": str(home),
        "DOCENT_MODELS_DIR": str(SHARED_MODELS),
        "HOME": str(home),
        "PYTHON_KEYRING_BACKEND": "keyring.backends.fail.Keyring",
    }
    subprocess.run(
        [sys.executable, "-m", "app.cli", "index", str(SAMPLES)],
        env=environment,
        check=True,
        capture_output=True,
        timeout=300,
    )
    settings = {"local": {"max_tokens": 48}, "retrieval": {"top_k": 2}}
    (home / "config" / "settings.json").write_text(json.dumps(settings), "utf-8")
    return home


@pytest.fixture
def served(library: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Servers started by this test (and their children) serve `library`."""
    monkeypatch.setenv("DOCENT_HOME", str(library))
    return library


@contextmanager
def http_server(log: Path, *options: str, host: str = "127.0.0.1") -> Iterator[str]:
    """`docent serve-mcp --transport streamable-http` as a child; yields its loopback URL."""
    port = free_loopback_port()
    command = [*SERVE, "--transport", "streamable-http", "--host", host, "--port", str(port)]
    with serving([*command, *options], READY, log, timeout_s=120):
        yield f"http://127.0.0.1:{port}/mcp"


def stdio_client() -> Client:
    return Client(StdioServerParameters(command=SERVE[0], args=SERVE[1:], env=dict(os.environ)))


async def http_client(stack: AsyncExitStack, url: str, token: str | None = None) -> Client:
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    http = await stack.enter_async_context(
        httpx2.AsyncClient(headers=headers, timeout=httpx2.Timeout(30, read=300))
    )
    return await stack.enter_async_context(Client(streamable_http_client(url, http_client=http)))


def text_of(result: Any) -> str:
    return "".join(c.text for c in result.content if isinstance(c, TextContent))


async def exercise(client: Client, outside_file: Path) -> None:
    """Every tool and the page resource, their typed outputs, and their errors."""
    tools = {tool.name: tool for tool in (await client.list_tools()).tools}
    assert set(tools) == {
        "list_documents",
        "search_documents",
        "read_page",
        "ask",
        "summarize_document",
    }
    assert all(tool.output_schema for tool in tools.values())
    assert set(tools["search_documents"].output_schema["properties"]) == {
        "untrusted",  # the passages are the documents' words: data, never instructions
        "query",
        "passages",
    }

    listed = (await client.call_tool("list_documents", {})).structured_content
    documents = {d["name"]: d for d in listed["documents"]}
    assert set(documents) == {POLICY, TEA, "welcome-to-docent.md"}
    policy = documents[POLICY]
    assert (policy["pages"], policy["embedded"]) == (3, True)

    found = await client.call_tool("search_documents", {"query": QUESTION, "k": 3})
    passages = found.structured_content["passages"]
    assert len(passages) == 3
    assert (passages[0]["document"], passages[0]["page"]) == (POLICY, 2)
    assert "seven years" in passages[0]["text"]
    assert [p["score"] for p in passages] == sorted((p["score"] for p in passages), reverse=True)
    scoped = await client.call_tool(
        "search_documents", {"query": QUESTION, "k": 5, "documents": [TEA]}
    )
    assert {p["document"] for p in scoped.structured_content["passages"]} == {TEA}

    page = await client.call_tool("read_page", {"document": policy["id"], "page": 2})
    assert page.structured_content["pages"] == 3
    assert "seven years after the end of the financial year" in page.structured_content["text"]
    by_path = await client.call_tool("read_page", {"document": str(SAMPLES / POLICY), "page": 2})
    assert by_path.structured_content == page.structured_content
    resource = await client.read_resource(f"docent://documents/{policy['id']}/pages/2")
    assert resource.contents[0].text == page.structured_content["text"]  # type: ignore[union-attr]

    for arguments, error in (
        ({"document": "nothing.pdf", "page": 1}, "no indexed document matches 'nothing.pdf'"),
        ({"document": POLICY, "page": 4}, f"{POLICY} has 3 pages: there is no page 4"),
        ({"document": POLICY, "page": 0}, "there is no page 0"),
        # A real file outside the library: its path is compared, never opened.
        ({"document": str(outside_file), "page": 1}, "no indexed document matches"),
        ({"document": "../../../etc/passwd", "page": 1}, "no indexed document matches"),
    ):
        failed = await client.call_tool("read_page", arguments)
        assert failed.is_error
        assert error in text_of(failed)
        assert "TOP SECRET" not in text_of(failed)
    unknown = await client.call_tool("search_documents", {"query": "x", "documents": ["9"]})
    assert unknown.is_error
    assert "no indexed document matches '9'" in text_of(unknown)
    with pytest.raises(MCPError, match="no indexed document matches '99'"):
        await client.read_resource("docent://documents/99/pages/1")


async def ask(client: Client) -> None:
    """A real answer from the bundled model: its text streams as progress, then the result."""
    partial: list[str] = []

    async def progress(value: float, total: float | None, message: str | None) -> None:
        partial.append(message or "")

    result = await client.call_tool(
        "ask", {"question": QUESTION}, read_timeout_seconds=300, progress_callback=progress
    )
    assert not result.is_error, text_of(result)
    answer = result.structured_content
    assert len(partial) >= 3  # streamed, not whole
    # The result is the streamed text with a marker closing each sentence Docent tied to a
    # source, as the window shows it (the model wrote none itself).
    assert re.sub(r" \[\d+\]", "", answer["answer"]) == "".join(partial).strip()
    assert any(f" [{c['number']}]" in answer["answer"] for c in answer["citations"])
    assert re.search(r"seven|7", answer["answer"])
    assert answer["declined"] is False
    assert any(c["document"] == POLICY and c["page"] == 2 for c in answer["citations"])
    metrics = answer["metrics"]
    assert (metrics["route"], metrics["model"], metrics["cost_usd"]) == (
        "local",
        "qwen2.5-coder-0.5b",
        0.0,
    )
    assert 0 < metrics["ttft_s"] < metrics["total_s"]
    assert metrics["completion_tokens"] == len(partial)

    # A follow-up in the same conversation: searched with the first question's words, and
    # its prompt extends the first one's (the server's model kept that prefix).
    follow_up = "Which page says so?"
    arguments = {"question": follow_up, "conversation_id": answer["conversation_id"]}
    result = await client.call_tool("ask", arguments, read_timeout_seconds=300)
    assert not result.is_error, text_of(result)
    followed = result.structured_content
    assert followed["conversation_id"] == answer["conversation_id"]
    assert followed["standalone"] == f"{QUESTION} {follow_up}"
    assert followed["metrics"]["cached_tokens"] > metrics["prompt_tokens"]
    # A conversation is reached by the id the server gave its client, never by the library's
    # own sequential number (the desktop's conversations have none a client could pass).
    assert len(answer["conversation_id"]) >= 24
    for guess in ("1", "2", "999999"):
        unknown = await client.call_tool("ask", {"question": "why?", "conversation_id": guess})
        assert unknown.is_error
        assert "there is no such conversation" in text_of(unknown)


async def summarize(client: Client) -> None:
    """A summary streams as progress and cites pages; asked again, the stored one returns."""
    partial: list[str] = []

    async def progress(value: float, total: float | None, message: str | None) -> None:
        partial.append(message or "")

    made = await client.call_tool(
        "summarize_document",
        {"document": POLICY},
        read_timeout_seconds=300,
        progress_callback=progress,
    )
    assert not made.is_error, text_of(made)
    summary = made.structured_content
    # What streamed, with the cited pages' markers the summary ends up with (as an answer's).
    # (A sentence stating a fact no page states carries its flag instead; a step cut off by
    # its token limit ends at its last whole sentence, so the text may stop before the stream.)
    shown = re.sub(r" ?\[(?:\d+|unverified: [^\]]*)\]", "", summary["summary"])
    assert "".join(partial).strip().startswith(shown.rstrip("…"))
    assert summary["citations"]
    assert re.search(r"\[\d+\]", summary["summary"])
    assert {c["document"] for c in summary["citations"]} == {POLICY}
    assert summary["metrics"]["route"] == "local"
    again = await client.call_tool("summarize_document", {"document": POLICY})
    assert again.structured_content["summary"] == summary["summary"]
    assert again.structured_content["metrics"]["route"] == "cache"
    missing = await client.call_tool("summarize_document", {"document": POLICY, "chapter": "9"})
    assert missing.is_error
    assert "has no chapter 9" in text_of(missing)
    # A question that asks for a summary gets it (the stored one), in a conversation of its own.
    asked = await client.call_tool(
        "ask", {"question": "What is this document about?", "documents": [POLICY]}
    )
    assert not asked.is_error, text_of(asked)
    assert asked.structured_content["answer"] == summary["summary"]
    assert asked.structured_content["metrics"]["route"] == "cache"


@pytest.fixture
def outside_file(tmp_path: Path) -> Path:
    secret = tmp_path / "not-indexed.txt"
    secret.write_text("TOP SECRET: never served", "utf-8")
    return secret


def test_the_python_sdk_client_over_stdio(served: Path, outside_file: Path) -> None:
    async def scenario() -> None:
        async with stdio_client() as client:
            await exercise(client, outside_file)
            await ask(client)
            await summarize(client)

    run(scenario())


def test_the_python_sdk_client_over_streamable_http(
    served: Path, keychain: None, outside_file: Path, tmp_path: Path
) -> None:
    """On 127.0.0.1 too, only with the token: every account on the machine reaches it."""

    async def scenario(url: str, token: str) -> None:
        async with AsyncExitStack() as stack:
            client = await http_client(stack, url, token)
            await exercise(client, outside_file)
            await ask(client)

    log = tmp_path / "server.log"
    with http_server(log) as url:
        refused = httpx.post(url, json={"jsonrpc": "2.0", "id": 1, "method": "ping"}, timeout=30)
        assert refused.status_code == 401
        run(scenario(url, token_shown(log)))


def check_with_the_inspector(target: list[str], *auth: str, asks: bool = True) -> None:
    """List the tools and call each one (`ask` and `summarize_document` only if `asks`: the
    model is slow on 2 cores)."""
    listed = inspect(target, *auth, "--method", "tools/list")
    assert {tool["name"] for tool in listed["tools"]} == {
        "list_documents",
        "search_documents",
        "read_page",
        "ask",
        "summarize_document",
    }
    assert all("outputSchema" in tool for tool in listed["tools"])

    def call(tool: str, *arguments: str) -> Any:
        return inspect(
            target, *auth, "--method", "tools/call", "--tool-name", tool, "--tool-arg", *arguments
        )

    documents = inspect(target, *auth, "--method", "tools/call", "--tool-name", "list_documents")
    ids = {d["name"]: d["id"] for d in documents["structuredContent"]["documents"]}
    assert set(ids) == {POLICY, TEA, "welcome-to-docent.md"}
    found = call("search_documents", f"query={QUESTION}", "k=2")["structuredContent"]
    assert (found["passages"][0]["document"], found["passages"][0]["page"]) == (POLICY, 2)
    page = call("read_page", f"document={ids[POLICY]}", "page=2")["structuredContent"]
    assert "seven years" in page["text"]
    missing = call("read_page", f"document={ids[POLICY]}", "page=7")
    assert missing["isError"] is True
    assert "has 3 pages: there is no page 7" in missing["content"][0]["text"]
    if not asks:
        return
    answer = call("ask", f"question={QUESTION}")
    assert answer["isError"] is False
    assert re.search(r"seven|7", answer["structuredContent"]["answer"])
    assert answer["structuredContent"]["metrics"]["route"] == "local"
    summary = call("summarize_document", f"document={ids[TEA]}")
    assert summary["isError"] is False
    assert {c["document"] for c in summary["structuredContent"]["citations"]} == {TEA}


def test_the_mcp_inspector_over_stdio(served: Path) -> None:
    check_with_the_inspector(SERVE)
    templates = inspect(SERVE, "--method", "resources/templates/list")
    assert [t["uriTemplate"] for t in templates["resourceTemplates"]] == [
        "docent://documents/{document_id}/pages/{page}"
    ]


def token_shown(log: Path) -> str:
    shown = re.findall(r"^    (\S{40,})$", log.read_text("utf-8"), re.MULTILINE)
    assert len(shown) == 1, log.read_text("utf-8")
    return shown[0]


def test_every_bind_requires_the_bearer_token(served: Path, keychain: None, tmp_path: Path) -> None:
    """Bound to every interface (reached here only through 127.0.0.1): without the token, or
    with a wrong one, requests get 401; the token is made once, kept in the keychain only,
    shown once, and can be replaced."""
    first_log = tmp_path / "first.log"
    with http_server(first_log, host="0.0.0.0") as url:
        token = token_shown(first_log)
        initialize = {"jsonrpc": "2.0", "id": 1, "method": "ping"}
        for headers in ({}, {"Authorization": "Bearer wrong-token"}):
            refused = httpx.post(url, json=initialize, headers=headers, timeout=30)
            assert refused.status_code == 401
            assert refused.headers["www-authenticate"].startswith("Bearer")

        async def refused_without_token() -> None:
            async with AsyncExitStack() as stack:
                await http_client(stack, url)

        with pytest.raises(ExceptionGroup) as refusal:  # the SDK's way of saying 401
            run(refused_without_token())
        assert refusal.group_contains(MCPError, match="error response")

        assert POLICY in run(listed(url, token))
        with pytest.raises(InspectorFailed, match="invalid_token"):  # its words for a 401
            inspect([url], "--method", "tools/list")
        check_with_the_inspector([url], "--header", f"Authorization: Bearer {token}", asks=False)
    assert files_containing(served, token) == []  # the keychain holds it, nothing else
    # What a user pastes into a client, printed on demand (the token shown once is not lost).
    printed = subprocess.run(
        [*SERVE, "--transport", "streamable-http", "--print-config"],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    entry = json.loads(printed.stdout)["mcpServers"]["docent"]
    assert entry["headers"] == {"Authorization": f"Bearer {token}"}
    assert entry["url"] == "http://127.0.0.1:8765/mcp"

    again_log = tmp_path / "again.log"
    with http_server(again_log, host="0.0.0.0") as url:
        assert token not in again_log.read_text("utf-8")  # shown once
        assert "bearer token kept in the OS keychain" in again_log.read_text("utf-8")
        assert POLICY in run(listed(url, token))

    renewed_log = tmp_path / "renewed.log"
    with http_server(renewed_log, "--new-token", host="0.0.0.0") as url:
        renewed = token_shown(renewed_log)
        assert renewed != token
        old = httpx.post(
            url, json=initialize, headers={"Authorization": f"Bearer {token}"}, timeout=30
        )
        assert old.status_code == 401
        assert POLICY in run(listed(url, renewed))


async def listed(url: str, token: str) -> list[str]:
    async with AsyncExitStack() as stack:
        client = await http_client(stack, url, token)
        result = await client.call_tool("list_documents", {})
        return [d["name"] for d in result.structured_content["documents"]]


@pytest.mark.parametrize("host", ["0.0.0.0", "127.0.0.1"])
def test_without_a_keychain_no_http_bind_starts(served: Path, host: str) -> None:
    port = free_loopback_port()
    command = [*SERVE, "--transport", "streamable-http", "--host", host, "--port", str(port)]
    result = subprocess.run(command, capture_output=True, text=True, timeout=120)
    assert result.returncode == 2
    assert "serving over HTTP needs a bearer token kept in the keychain" in result.stderr
    assert "No OS keychain was found" in result.stderr
    with pytest.raises(httpx.ConnectError):
        httpx.get(f"http://127.0.0.1:{port}/mcp", timeout=5)


def test_a_crash_is_the_ask_tools_error_and_a_replaced_draft_is_said_in_the_stream(
    served: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    flag = tmp_path / "crash-once"
    flag.touch()
    monkeypatch.setenv("DOCENT_ENGINE_FAULT", f"mid-answer@{flag}")

    async def scenario() -> None:
        async with stdio_client() as client:
            crashed = await client.call_tool(
                "ask", {"question": QUESTION}, read_timeout_seconds=300
            )
            assert crashed.is_error
            assert text_of(crashed).endswith(
                "the local model crashed (segmentation fault) while answering"
            )
            # The restarted model answers; a draft no source supports streamed first, and the
            # stream says it is replaced before the answer that replaces it.
            partial: list[str] = []

            async def progress(value: float, total: float | None, message: str | None) -> None:
                partial.append(message or "")

            result = await client.call_tool(
                "ask",
                {"question": "What is the capital of Australia?"},
                read_timeout_seconds=300,
                progress_callback=progress,
            )
            assert not result.is_error, text_of(result)
            answer = result.structured_content
            assert answer["declined"] is True
            streamed = "".join(partial)
            draft, _, replacement = streamed.partition(f"\n\n[{DRAFT_REPLACED}]\n\n")
            assert draft.strip()
            assert replacement == answer["answer"]
            assert answer["answer"].startswith("The documents do not seem to answer this")

    run(scenario())
    assert not flag.exists()
