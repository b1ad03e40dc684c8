"""A chat tool's result, in the shapes real LLM MCP servers return it (tests/peers/llm)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from mcp.types import CallToolResult, TextContent

from app.cloud.client import read_result
from app.llm.engine import EngineError
from app.settings import McpServerSettings

COMPLETION = {  # mcp-llm-gateway passes llama.cpp's chat.completion through
    "id": "chatcmpl-1",
    "object": "chat.completion",
    "choices": [
        {
            "index": 0,
            "message": {"role": "assistant", "content": "Invoices are kept for seven years."},
            "finish_reason": "length",
        }
    ],
    "usage": {"prompt_tokens": 44, "completion_tokens": 8, "total_tokens": 52},
}
HOUTINI = (  # @houtini/lm: the answer, then its own notes after a rule
    "Invoices are kept for seven years.\n\n---\nModel: qwen | ~10 tokens (estimated) | "
    "TTFT: 1066ms, 1.4s\n💰 Claude quota saved — this session: 10 tokens / 1 call"
)


def server(**fields: Any) -> McpServerSettings:
    return McpServerSettings(name="peer", command="peer", models=["m"], **fields)


def result(text: str, structured: dict[str, Any] | None = None) -> CallToolResult:
    return CallToolResult(
        content=[TextContent(type="text", text=text)], structuredContent=structured
    )


@pytest.mark.parametrize(
    "returned",
    [result(json.dumps(COMPLETION), COMPLETION), result(json.dumps(COMPLETION))],
    ids=["structured", "json-text"],
)
def test_a_passed_through_chat_completion_yields_its_message(returned: CallToolResult) -> None:
    answer = read_result(returned, server())
    assert answer.text == "Invoices are kept for seven years."
    assert (answer.prompt_tokens, answer.completion_tokens) == (44, 8)
    assert answer.finish_reason == "length"


def test_docents_gateway_shape_is_read_as_before() -> None:
    gateway = {"text": "Seven years.", "usage": {"prompt_tokens": 3, "completion_tokens": 2}}
    answer = read_result(result("Seven years.", gateway), server())
    assert (answer.text, answer.prompt_tokens, answer.finish_reason) == ("Seven years.", 3, "stop")


def test_an_answer_that_is_json_stays_the_answer() -> None:
    text = '{"text": "not the answer field", "years": 7}'
    assert read_result(result(text), server()).text == text


def test_the_servers_footer_is_cut_at_its_last_rule_only_when_configured() -> None:
    assert read_result(result(HOUTINI), server(footer_line="---")).text == (
        "Invoices are kept for seven years."
    )
    assert read_result(result(HOUTINI), server()).text == HOUTINI
    ruled = "Part one\n---\nPart two\n\n---\nModel: m"
    assert read_result(result(ruled), server(footer_line="---")).text == ("Part one\n---\nPart two")


def test_a_tool_error_names_the_server_and_drops_the_sdks_wrapper() -> None:
    failed = CallToolResult(
        content=[TextContent(type="text", text="Error executing tool chat: fetch failed")],
        isError=True,
    )
    with pytest.raises(EngineError, match=r"^peer: fetch failed$"):
        read_result(failed, server())


@pytest.mark.parametrize(
    "usage",
    [
        {"prompt_tokens": -125_000_000, "completion_tokens": -1},  # gave the budget back
        {"prompt_tokens": "many", "completion_tokens": None},  # aborted the answer
        {"prompt_tokens": 1e12, "completion_tokens": True},
        {"prompt_tokens": 10**12, "completion_tokens": 2.5},
        "not a mapping",
    ],
)
def test_a_servers_token_counts_are_believed_only_when_they_are_counts(usage: object) -> None:
    """The counts decide the cost and the month's budget: the ones that cannot be counts are
    dropped (and estimated, as for a server that reports none), never trusted or fatal."""
    answer = read_result(result("Seven years.", {"text": "Seven years.", "usage": usage}), server())
    assert (answer.text, answer.prompt_tokens, answer.completion_tokens) == (
        "Seven years.",
        None,
        None,
    )
