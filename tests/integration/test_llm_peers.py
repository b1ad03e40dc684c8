"""Any LLM behind MCP: third-party servers (their real npm and PyPI packages, over stdio) in
front of llama.cpp's OpenAI-compatible server on 127.0.0.1, as Docent's cloud route.

@houtini/lm sends status, not text, in its progress messages; mcp-llm-gateway sends nothing
and returns a chat.completion as JSON. Each must show its answer, and only its answer."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

from app.cloud.client import McpChatEngine
from app.cloud.pricing import PriceTable
from app.llm.engine import (
    CancelToken,
    GenerationDone,
    GenerationRequest,
    Message,
    StatusReported,
    TokenGenerated,
)
from app.paths import Paths
from app.settings import McpServerSettings
from tests.documents import write_pdf
from tests.integration.test_cli import docent
from tests.integration.test_mcp_client import connected
from tests.peers.llm_servers import houtini, llm_gateway

MODEL = "qwen-mini"  # the llama_server fixture's alias
REQUEST = GenerationRequest(
    [
        Message("system", "Answer briefly."),
        Message("user", "Reply with exactly: The invoices are kept for seven years."),
    ],
    max_tokens=40,
    temperature=0.0,
)


async def answer_twice(
    settings: McpServerSettings,
) -> tuple[list[object], bool | None, list[object]]:
    connection = await connected(settings)
    engine = McpChatEngine(connection, MODEL, PriceTable({}).cost)
    first = [event async for event in engine.stream(REQUEST, CancelToken())]
    learned = connection.progress_is_text
    second = [event async for event in engine.stream(REQUEST, CancelToken())]
    await connection.close()
    return first, learned, second


def test_a_server_whose_progress_is_status_shows_it_as_status_and_answers_with_its_result(
    llama_server: str, tmp_path: Path
) -> None:
    first, learned, second = asyncio.run(answer_twice(houtini(llama_server, MODEL, tmp_path)))
    assert learned is False  # "auto" learnt it from the first answer: its result is not the text
    for events in (first, second):
        statuses = [e.text for e in events if isinstance(e, StatusReported)]
        (answer,) = [e.text for e in events if isinstance(e, TokenGenerated)]
        done = events[-1]
        assert statuses[0] == "Connecting to model..."
        assert "seven years" in answer.lower()
        assert not any(word in answer for word in ("Connecting", "Streaming", "---", "Model:"))
        assert isinstance(done, GenerationDone)
        assert done.first_token_at == done.last_token_at  # TTFT: when the answer came, whole
        assert done.cost_usd is None  # no price for this model: unknown, not free


def test_a_server_that_returns_a_chat_completion_answers_with_its_message(
    llama_server: str, tmp_path: Path
) -> None:
    first, learned, _ = asyncio.run(answer_twice(llm_gateway(llama_server, MODEL, tmp_path)))
    (answer,) = [e.text for e in first if isinstance(e, TokenGenerated)]
    done = first[-1]
    assert "seven years" in answer.lower()
    assert not answer.lstrip().startswith("{")
    assert not any(isinstance(e, StatusReported) for e in first)
    assert learned is None  # no progress at all: nothing to learn
    assert isinstance(done, GenerationDone)
    assert done.completion_tokens < 40  # the server's usage, not an estimate of the JSON


def test_docent_ask_answers_through_a_third_party_server_with_cost_unknown(
    isolated_paths: Paths, llama_server: str, tmp_path: Path
) -> None:
    server = houtini(llama_server, MODEL, tmp_path).model_dump()
    isolated_paths.settings_file.write_text(json.dumps({"cloud": {"servers": [server]}}))
    assert docent("index", str(write_pdf(tmp_path / "report.pdf"))).returncode == 0
    asked = docent("ask", "--route", "cloud", "How long are invoices kept?")
    assert asked.returncode == 0, asked.stderr
    assert "[Connecting to model...]" in asked.stderr  # status, beside the answer
    answer, _, rest = asked.stdout.partition("\n\nSources:")
    assert not any(word in answer for word in ("Connecting", "Model:"))
    assert "seven" in answer.lower() or "7" in answer
    assert "route: cloud (houtini/qwen-mini)" in rest
    assert rest.rstrip().endswith("cost unknown")
