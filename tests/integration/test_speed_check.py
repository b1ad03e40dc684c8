"""The speed check on the real bundled model, and the switch it calls for (the real 1.5B model,
from the `larger-model` extra) — which a model the user chose always overrides."""

from __future__ import annotations

import dataclasses
import time

from app.bootstrap import Docent
from app.catalog import Catalog, ModelPart, Speed
from app.llm.speed import decide
from app.paths import Paths
from app.settings import RetrievalSettings, Settings
from tests.integration.conftest import opened, run

BUNDLED, LARGER = "qwen2.5-coder-0.5b", "qwen2.5-coder-1.5b"


def test_the_bundled_model_is_timed_in_seconds_and_the_choice_is_saved(
    isolated_paths: Paths,
) -> None:
    Settings(retrieval=RetrievalSettings(context_tokens=900)).save(isolated_paths.settings_file)

    async def scenario() -> tuple[Docent, float]:
        async with opened(embeddings=False) as docent:
            started = time.perf_counter()
            await docent.check_speed()
            return docent, time.perf_counter() - started

    docent, took = run(scenario())
    check = docent.settings.speed_check
    assert check is not None
    assert not docent.chat.loaded  # timed in an engine of its own, closed since
    # Prompt tokens are read in batches, answer tokens one by one: on any CPU the first is faster.
    assert 0 < check.decode_tok_s < check.prefill_tok_s
    assert took < 120, f"the check took {took:.0f} s"  # idle here: ~5 s; loaded 3x: ~30 s
    assert (check.model, check.candidate, check.prompt_tokens) == (BUNDLED, LARGER, 900)
    expected = decide(Catalog.load(), Speed(check.prefill_tok_s, check.decode_tok_s), 900, BUNDLED)
    assert check == expected.model_copy(update={"measured_on": check.measured_on})
    assert Settings.load(isolated_paths.settings_file).speed_check == check


def pending_switch(docent: Docent) -> Settings:
    """The settings after a speed check on a fast computer: the 1.5B chosen, not yet in use."""
    check = decide(docent.catalog, Speed(600, 60), 1200, BUNDLED)
    assert (check.chosen, check.pending) == (LARGER, True)
    return docent.settings.model_copy(update={"speed_check": check})


def test_the_chosen_model_is_switched_to_once_ready_and_a_later_choice_wins(
    isolated_paths: Paths,
) -> None:
    async def scenario() -> None:
        async with opened(embeddings=False) as docent:
            await docent.apply_settings(pending_switch(docent))
            assert await docent.follow_speed_check()
            assert docent.settings.local.chat_model == LARGER
            assert docent.chat.loaded
            saved = Settings.load(isolated_paths.settings_file)
            assert saved.local.chat_model == LARGER
            assert saved.speed_check is not None
            assert not saved.speed_check.pending
            assert not await docent.follow_speed_check()  # done: never again

            # The user goes back to the bundled model: the check does not switch again.
            await docent.use_chat_model(BUNDLED)
            assert not await docent.follow_speed_check()
            assert docent.settings.local.chat_model == BUNDLED

    run(scenario())


def test_a_model_chosen_while_the_switch_is_pending_wins(isolated_paths: Paths) -> None:
    async def scenario() -> None:
        async with opened(embeddings=False) as docent:
            settings = pending_switch(docent)
            await docent.apply_settings(settings)
            # Settings' OK with another chat model (a GGUF file of the user's, say).
            chosen = settings.local.model_copy(update={"chat_model": "qwen2.5-7b-instruct"})
            await docent.apply_settings(settings.model_copy(update={"local": chosen}))
            check = docent.settings.speed_check
            assert check is not None
            assert not check.pending
            assert not await docent.follow_speed_check()
            assert docent.settings.local.chat_model == "qwen2.5-7b-instruct"

    run(scenario())


def test_a_chosen_model_not_installed_leaves_the_bundled_one_answering(
    isolated_paths: Paths,
) -> None:
    catalog = Catalog.load()
    missing = (ModelPart("docent_no_such_package", "part01.bin"),)
    larger = dataclasses.replace(catalog.get(LARGER), parts=missing)
    catalog = Catalog(tuple(larger if m.name == LARGER else m for m in catalog.models))

    async def scenario() -> None:
        docent = Docent(isolated_paths, Settings(), catalog, embeddings=False)
        await docent.open()
        try:
            await docent.apply_settings(pending_switch(docent))
            assert not await docent.follow_speed_check()
            assert docent.settings.local.chat_model == BUNDLED
            check = docent.settings.speed_check
            assert check is not None
            assert check.pending
        finally:
            await docent.close()

    run(scenario())
