"""The cloud route end to end, as a user runs it: `docent ask` routes to an OpenAI-compatible
provider (llama.cpp's server on 127.0.0.1) through Docent's gateway over MCP stdio."""

from __future__ import annotations

import json
from pathlib import Path

from app.paths import Paths
from tests.documents import write_pdf
from tests.integration.test_cli import docent


def configure(paths: Paths, base_url: str) -> None:
    settings = {
        "cloud": {"providers": [{"name": "llama", "base_url": base_url, "models": ["qwen-mini"]}]}
    }
    paths.settings_file.write_text(json.dumps(settings))
    (paths.config_dir / "prices.toml").write_text(
        '[models."llama/qwen-mini"]\ninput = 100.0\noutput = 200.0\n'
    )


def ask(*arguments: str) -> dict:
    asked = docent("ask", "--json", *arguments)
    assert asked.returncode == 0, asked.stderr
    return json.loads(asked.stdout)


def test_the_router_sends_hard_questions_to_the_cloud_and_prices_them(
    isolated_paths: Paths, llama_server: str, tmp_path: Path
) -> None:
    configure(isolated_paths, llama_server)
    assert docent("index", str(write_pdf(tmp_path / "report.pdf"))).returncode == 0

    hard = ask("Compare how long invoices and contracts are kept, and why do they differ?")
    assert hard["route"]["route"] == "cloud"
    assert hard["route"]["model"] == "llama/qwen-mini"
    assert "asks for a comparison" in hard["route"]["reason"]
    assert hard["answer"]
    metrics = hard["metrics"]
    assert metrics["ttft_s"] > 0
    assert (
        metrics["cost_usd"]
        == (metrics["prompt_tokens"] * 100.0 + metrics["completion_tokens"] * 200.0) / 1e6
    )
    sent = hard["sent"][1]["content"]
    assert "Question: Compare how long invoices" in sent
    assert "report.pdf" not in sent  # privacy "excerpts", the default: no file names

    simple = ask("How long are invoices kept?")
    assert simple["route"]["route"] == "local"
    assert simple["sent"] is None

    forced = ask("--route", "cloud", "How long are invoices kept?")
    assert (forced["route"]["route"], forced["route"]["reason"]) == (
        "cloud",
        "you asked for the cloud",
    )


def test_an_unreachable_provider_falls_back_to_local_and_says_so(
    isolated_paths: Paths, tmp_path: Path
) -> None:
    configure(isolated_paths, "http://127.0.0.1:9/v1")
    assert docent("index", str(write_pdf(tmp_path / "report.pdf"))).returncode == 0
    result = ask("--route", "cloud", "How long are invoices kept?")
    assert [route["route"] for route in result["routes"]] == ["cloud", "fallback"]
    assert result["routes"][1]["reason"] == (
        "cloud failed before its first token (docent-gateway: cannot reach llama at "
        "http://127.0.0.1:9/v1); answered locally"
    )
    assert "seven" in result["answer"].lower() or "7" in result["answer"]
    assert result["metrics"]["cost_usd"] == 0


def test_a_model_missing_from_the_price_table_costs_unknown_not_zero(
    isolated_paths: Paths, llama_server: str, tmp_path: Path
) -> None:
    configure(isolated_paths, llama_server)
    (isolated_paths.config_dir / "prices.toml").write_text("[models]\n")  # nothing is priced
    assert docent("index", str(write_pdf(tmp_path / "report.pdf"))).returncode == 0

    result = ask("--route", "cloud", "How long are invoices kept?")
    assert result["route"]["route"] == "cloud"
    assert result["metrics"]["cost_usd"] is None

    history = docent("history", "-n", "1")
    assert history.returncode == 0, history.stderr
    assert "  cost unknown  [finished]" in history.stdout
    assert history.stdout.splitlines()[-1] == (
        "budget: $0.0000 of $5.00 this month + 1 answer of unknown cost"
    )
