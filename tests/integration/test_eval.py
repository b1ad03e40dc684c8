"""`docent eval` end to end: the shipped QA set's questions through local only, cloud only and
auto, with a larger bundled model behind llama.cpp's server as the priced "cloud"."""

from __future__ import annotations

import json
from importlib import resources
from pathlib import Path

from app.paths import Paths
from tests.integration.test_cli import docent

PRICE_IN, PRICE_OUT = 0.40, 1.60


def test_eval_prints_one_row_per_mode_from_real_answers(
    isolated_paths: Paths, larger_model_server: str, tmp_path: Path
) -> None:
    provider = {"name": "bigger", "base_url": larger_model_server, "models": ["qwen-1.5b"]}
    settings = {"cloud": {"providers": [provider]}, "local": {"max_tokens": 96}}
    isolated_paths.settings_file.write_text(json.dumps(settings))
    (isolated_paths.config_dir / "prices.toml").write_text(
        f'[models."bigger/qwen-1.5b"]\ninput = {PRICE_IN}\noutput = {PRICE_OUT}\n'
    )
    shipped = resources.files("resources").joinpath("eval/samples-qa.jsonl").read_text("utf-8")
    lines = shipped.splitlines()
    capital = next(i for i, line in enumerate(lines) if "capital of Australia" in line)
    qa = tmp_path / "qa.jsonl"  # a lookup, two that combine passages, one nothing answers
    qa.write_text("\n".join(lines[i] for i in (0, 5, 7, capital)), encoding="utf-8")
    sample = Path(str(resources.files("resources").joinpath("sample")))
    out = tmp_path / "rows.json"

    result = docent("eval", str(qa), "--documents", str(sample), "--json", str(out))
    assert result.returncode == 0, result.stderr
    summary, groups, router = result.stdout.split("\n\n")[1:4]  # after the question count
    header, _, *rows = summary.splitlines()
    assert header.startswith("| mode | accuracy | citation page hits | answered locally |")
    assert header.endswith(
        "| declined: unanswerable / answerable | wrong, not declined | right among answers |"
    )
    assert [row.split(" | ")[0] for row in rows] == ["| local only", "| cloud only", "| auto"]
    assert "| local only | kind combine | 2 | " in groups  # the breakdown by kind, lang, split
    assert router.startswith("| thresholds | split | kept local, right | kept local, wrong |")
    assert "| fitted on tune: " in router

    local, cloud, auto = json.loads(out.read_text())
    for row in (local, cloud, auto):
        assert row["questions"] == 4
        assert len(row["answers"]) == 4  # every question answered, none failed
        assert row["accuracy"] == sum(a["correct"] for a in row["answers"]) / 4
        answerable = row["answers"][:3]  # recall and citations: where there is a page to find
        assert row["retrieval_recall"] == sum(a["retrieved"] for a in answerable) / 3
        assert row["retrieval_recall"] >= row["citation_page_hits"]  # cited ⊆ given
        assert row["declined_answerable"] == sum(a["declined"] for a in answerable) / 3
        shown = [a for a in row["answers"] if not a["declined"]]
        wrong = sum(not a["correct"] for a in shown)
        assert row["wrong_not_declined"] == wrong / 4
        if shown:
            assert row["right_among_answers"] == (len(shown) - wrong) / len(shown)
    # The local model names a city from memory; no passage supports it, so it is declined.
    assert local["answers"][3]["declined"]
    assert local["declined_unanswerable"] == 1.0
    assert local["answered_locally"] == 1.0
    assert local["cost_usd"] == 0.0
    assert {a["route"] for a in cloud["answers"]} == {"cloud"}
    assert cloud["cost_usd"] > 0
    routes = [a["route"] for a in auto["answers"]]
    assert routes[0] == "local"  # a lookup stays local…
    assert routes[1:3] == ["cloud", "cloud"]  # …the questions that combine passages go out
    assert 0 < auto["cost_usd"] < cloud["cost_usd"]
