"""Third-party LLM MCP servers, their real packages, configured as a Docent user would configure
them (Settings → Cloud → MCP servers) and pointed at an OpenAI-compatible server on 127.0.0.1.

`make peers` installs them: @houtini/lm from npm (tests/peers/node), mcp-llm-gateway from PyPI
in its own venv (tests/peers/python: its fastmcp is no Docent dependency). What each one does on
the wire is recorded in tests/peers/llm/README.md.
"""

from __future__ import annotations

from pathlib import Path

from app.settings import McpServerSettings, ToolArguments

PEERS = Path(__file__).resolve().parent
NODE = PEERS / "node/node_modules/node/bin/node"


def _root(base_url: str) -> str:
    """…/v1 → the server's root: both peers append /v1/chat/completions themselves."""
    return base_url.removesuffix("/").removesuffix("/v1")


def houtini(base_url: str, model: str, home: Path) -> McpServerSettings:
    """@houtini/lm: its progress messages are status ("Waiting for model... (10s, still in
    prefill)", "Streaming... 39 chars"); the answer is the result, followed by its own notes
    after a "---" line."""
    return McpServerSettings(
        name="houtini",
        command=str(NODE),
        args=[str(PEERS / "node/node_modules/@houtini/lm/dist/index.js")],
        env={
            "HOUTINI_LM_ENDPOINT_URL": _root(base_url),
            "HOUTINI_LM_MODEL": model,
            "HOUTINI_LM_MIN_TOKENS": "0",  # else a max_tokens under 4,096 is ignored
            "HOME": str(home),  # it keeps a model cache and a lock in ~/.houtini-lm
        },
        key_env="HOUTINI_LM_API_KEY",
        chat_tool="chat",
        arguments=ToolArguments(messages="", prompt="message"),
        footer_line="---",
        models=[model],
    )


def llm_gateway(base_url: str, model: str, home: Path) -> McpServerSettings:
    """mcp-llm-gateway: no progress at all; the result is llama.cpp's chat.completion as JSON."""
    return McpServerSettings(
        name="llm-gateway",
        command=str(PEERS / "python/.venv/bin/mcp-llm-gateway"),
        env={
            "DOWNSTREAM_URL": _root(base_url),
            "DEFAULT_MODEL": model,
            "LOG_DIR": str(home),
            "MODEL_LIST_URL": "http://127.0.0.1:9/none",  # its default is a public URL
        },
        key_env="API_KEY",
        chat_tool="complete",
        arguments=ToolArguments(messages="", prompt="prompt"),
        first_token_timeout_s=0,  # nothing streams: the whole answer is the first text
        models=[model],
    )
