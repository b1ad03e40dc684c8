"""The router's policy: each rule, with the reason the user will read."""

from __future__ import annotations

import json

import pytest

from app.index import Passage
from app.index.store import StoredChunk
from app.routing import (
    ENGLISH,
    NO_CLOUD,
    AutoPolicy,
    CloudModel,
    QuestionFeatures,
    Reason,
    RetrievalConfidence,
    RouteUnavailable,
    Thresholds,
)
from app.settings import RoutingSettings

UP = CloudModel("gw/gpt-mini", "gateway", True)
MATH = CloudModel("gw/o4-math", "gateway", True)
DOWN = CloudModel("gw/gpt-mini", "gateway", False, "cannot reach http://127.0.0.1:9/mcp")


def passage(document: int, similarity: float | None, both_lists: bool = True) -> Passage:
    chunk = StoredChunk(1, document, f"/d/{document}.pdf", "t", 0, 1, "1", None, "text")
    return Passage(chunk, 0.03, 1 if both_lists else None, 1, similarity)


STRONG = [passage(1, 0.90), passage(1, 0.84)]


def policy(
    cloud: list[CloudModel] | None = None,
    budget_left: float = 5.0,
    thresholds: Thresholds | None = None,
    **settings: object,
) -> AutoPolicy:
    return AutoPolicy(
        RoutingSettings.model_validate(settings),
        "qwen-local",
        lambda: [UP] if cloud is None else cloud,
        lambda: budget_left,
        thresholds or Thresholds(),
    )


def test_a_simple_question_with_strong_evidence_stays_local() -> None:
    decision = policy().decide("How long are invoices kept?", STRONG)
    assert (decision.route, decision.model) == ("local", "qwen-local")
    assert decision.reason == "simple question (strong evidence)"


def test_a_hard_question_goes_to_the_cloud_with_its_reasons() -> None:
    decision = policy().decide(
        "Compare the retention of invoices and contracts, and why do they differ?", STRONG
    )
    assert (decision.route, decision.model) == ("cloud", "gw/gpt-mini")
    assert (
        decision.reason == "2-part question; asks for a comparison; asks why / for an explanation"
    )


def test_one_reason_escalates_with_the_thresholds_fitted_on_the_manuals_set() -> None:
    decision = policy().decide("How many years are invoices and contracts kept in all?", STRONG)
    assert (decision.route, decision.reason) == ("cloud", "needs a computation")


def test_weak_or_scattered_evidence_counts_towards_escalation() -> None:
    scattered = [passage(1, 0.79), passage(2, 0.78), passage(3, 0.77)]
    weak_counts = Thresholds(weak_similarity=0.82, escalate_at=2)
    decision = policy(thresholds=weak_counts).decide("What is the policy on archives?", scattered)
    assert decision.route == "cloud"
    assert decision.reason == "weak evidence (best match 0.79); evidence spans 3 documents"


def test_privacy_never_keeps_everything_local_and_refuses_a_cloud_request() -> None:
    strict = policy(privacy="never")
    hard = "Compare A and B, and why?"
    assert strict.decide(hard, STRONG).reason == "privacy: nothing leaves this machine"
    with pytest.raises(RouteUnavailable, match="never send anything"):
        strict.decide(hard, STRONG, requested="cloud")


def test_with_the_local_route_on_a_model_server_no_reason_says_nothing_leaves_here() -> None:
    """The question goes to the user's server: privacy "never", mode local and an asked-for
    local answer say it stays on that server (no cloud), not on this computer; the reasons
    that name no place are the same as without a server."""
    hard = "Compare A and B, and why?"

    def on_server(**settings: object) -> AutoPolicy:
        chosen = policy(**settings)  # type: ignore[arg-type]
        chosen.local_on_server = True
        return chosen

    assert on_server(privacy="never").decide(hard, STRONG).reason == (
        "privacy: kept on your model server (no cloud)"
    )
    assert on_server(mode="local").decide(hard, STRONG).why.code == "mode_server"
    asked = on_server().decide(hard, STRONG, requested="local")
    assert (asked.route, asked.model, asked.reason) == (
        "local",
        "qwen-local",
        "you asked for your model server",
    )
    assert on_server().decide("How long are invoices kept?", STRONG).why.code == "simple"
    assert on_server(cloud=[]).decide("How long?", STRONG).why.code == "no_cloud"
    assert on_server(budget_left=0.0).decide(hard, STRONG).why.code == "budget_spent"


def test_with_no_cloud_a_hard_question_stays_local_and_says_it_looked_hard() -> None:
    """The hardness is read all the same: the window suggests a cloud model for such questions
    (the user chose to keep everything local, or the cloud is down or spent: no suggestion)."""
    alone = policy(cloud=[])
    hard = alone.decide("Compare the retention of invoices and contracts, and why?", STRONG)
    assert (hard.route, hard.model) == ("local", "qwen-local")
    assert hard.why == Reason(
        "no_cloud_hard",
        parts=(Reason("parts", {"count": 2}), Reason("comparison"), Reason("explanation")),
    )
    assert hard.reason == (
        "local only: no cloud route is configured, though it looked hard (2-part question; "
        "asks for a comparison; asks why / for an explanation)"
    )
    simple = alone.decide("How long are invoices kept?", STRONG)
    assert simple.why == Reason("no_cloud")
    assert simple.reason == "local only: no cloud route is configured"
    compare = "Compare A and B, and why?"
    for chosen in (policy(cloud=[], mode="local"), policy(cloud=[], privacy="never")):
        assert chosen.decide(compare, STRONG).why.code in ("mode_local", "privacy")


def test_an_exhausted_budget_answers_locally_and_says_so() -> None:
    decision = policy(budget_left=0.0).decide("Compare A and B, and why?", STRONG)
    assert (decision.route, decision.reason) == (
        "local",
        "this month's cloud budget ($5.00) is spent",
    )


def test_cloud_health_is_read_at_every_decision() -> None:
    down = policy(cloud=[DOWN]).decide("Compare A and B, and why?", STRONG)
    assert down.route == "local"
    assert down.reason == "cloud unavailable (gateway: cannot reach http://127.0.0.1:9/mcp)"
    with pytest.raises(RouteUnavailable, match="every cloud route is down"):
        policy(cloud=[DOWN]).decide("x", STRONG, requested="cloud")
    with pytest.raises(RouteUnavailable, match=NO_CLOUD):
        policy(cloud=[]).decide("x", STRONG, requested="cloud")


def test_why_the_cloud_is_unavailable_is_what_a_cloud_request_is_refused_with() -> None:
    assert policy().cloud_unavailable() is None
    for blocked, why in (
        (policy(cloud=[]), NO_CLOUD),
        (policy(privacy="never"), "privacy is set to never send anything to the cloud"),
        (policy(cloud=[DOWN]), "every cloud route is down (gateway: cannot reach "),
        (policy(budget_left=0.0), "this month's cloud budget ($5.00) is spent"),
    ):
        reason = blocked.cloud_unavailable()
        assert reason is not None
        assert reason.startswith(why)
        with pytest.raises(RouteUnavailable) as refused:
            blocked.decide("x", STRONG, requested="cloud")
        assert str(refused.value) == reason


def test_modes_and_explicit_requests_override_the_question() -> None:
    assert policy(mode="local").decide("Compare A and B, and why?", STRONG).route == "local"
    forced = policy(mode="cloud").decide("How long?", STRONG)
    assert (forced.route, forced.reason) == ("cloud", "routing mode: cloud only")
    asked = policy().decide("How long?", STRONG, requested="cloud")
    assert asked.reason == "you asked for the cloud"


def test_the_topic_map_picks_the_cloud_model() -> None:
    decision = policy(cloud=[UP, MATH], topic_models={"math": "gw/o4-math"}).decide(
        "Calculate the average of 120 and 80, and why does it matter?", STRONG
    )
    assert (decision.route, decision.model) == ("cloud", "gw/o4-math")


def test_question_features_read_chinese_and_parts() -> None:
    features = QuestionFeatures.read("乌龙茶和红茶有什么区别？为什么？")
    assert features.language == "zh"
    assert "comparison" in features.cues
    assert "explanation" in features.cues
    assert features.parts == 2
    assert QuestionFeatures.read("How long?").parts == 1


def test_retrieval_confidence_without_embeddings() -> None:
    confidence = RetrievalConfidence.read([passage(1, None, both_lists=False)])
    assert confidence.top_similarity is None
    assert confidence.margin is None
    assert not confidence.agreement


CRASH = "the local model crashed (segmentation fault) while answering"


def test_a_local_crash_is_retried_in_the_cloud_as_a_fallback_that_says_why() -> None:
    rescue = policy([DOWN, UP]).rescue("How long are invoices kept?", CRASH)
    assert rescue is not None
    assert (rescue.route, rescue.model) == ("fallback", "gw/gpt-mini")
    assert rescue.reason == f"{CRASH}; the cloud answered instead"


@pytest.mark.parametrize(
    ("cloud", "budget_left", "requested", "settings"),
    [
        ([UP], 5.0, None, {"mode": "local"}),  # the user chose this computer only
        ([UP], 5.0, "local", {}),  # the user asked for the local model for this question
        ([UP], 5.0, None, {"privacy": "never"}),
        ([UP], 0.0, None, {}),  # the month's budget is spent
        ([DOWN], 5.0, None, {}),
        ([], 5.0, None, {}),
    ],
)
def test_a_local_crash_stays_local_where_the_cloud_is_not_allowed(
    cloud: list[CloudModel],
    budget_left: float,
    requested: str | None,
    settings: dict[str, object],
) -> None:
    chosen = policy(cloud, budget_left, **settings)
    assert chosen.rescue("How long are invoices kept?", CRASH, requested) is None  # type: ignore[arg-type]


HARD = (Reason("parts", {"count": 2}), Reason("comparison"))
# Every reason code, with the English the CLI, the history and MCP clients read (as before the
# codes); the window words the same examples in its own language (tests/gui).
REASONS = [
    (Reason("asked_local"), "you asked for the local model"),
    (Reason("asked_cloud"), "you asked for the cloud"),
    (Reason("mode_local"), "routing mode: local only"),
    (Reason("mode_cloud"), "routing mode: cloud only"),
    (Reason("no_cloud"), "local only: no cloud route is configured"),
    (
        Reason("no_cloud_hard", parts=HARD),
        "local only: no cloud route is configured, though it looked hard "
        "(2-part question; asks for a comparison)",
    ),
    (Reason("privacy"), "privacy: nothing leaves this machine"),
    (Reason("asked_server"), "you asked for your model server"),
    (Reason("mode_server"), "routing mode: local only (your model server)"),
    (Reason("privacy_server"), "privacy: kept on your model server (no cloud)"),
    (Reason("cloud_down", {"down": "gateway: down"}), "cloud unavailable (gateway: down)"),
    (Reason("budget_spent", {"budget_usd": 5}), "this month's cloud budget ($5.00) is spent"),
    (Reason("hard", parts=HARD), "2-part question; asks for a comparison"),
    (Reason("simple", parts=(Reason("strong_evidence"),)), "simple question (strong evidence)"),
    (Reason("strong_evidence"), "strong evidence"),
    (Reason("cascade", parts=(Reason("draft_empty"),)), "cascade: the local draft was empty"),
    (Reason("draft_empty"), "was empty"),
    (
        Reason("draft_ungrounded", {"grounded": 0.25, "floor": 0.5}),
        ("was 25% grounded in the sources (below 50%)"),
    ),
    (
        Reason("rescue", {"error": "the model crashed"}),
        ("the model crashed; the cloud answered instead"),
    ),
    (
        Reason("cloud_failed", {"error": "401"}),
        ("cloud failed before its first token (401); answered locally"),
    ),
    (
        Reason("server_failed", {"error": "cannot reach 192.168.1.5 at http://192.168.1.5/v1"}),
        "the model server failed before its first token (cannot reach 192.168.1.5 at "
        "http://192.168.1.5/v1); answered on this computer",
    ),
    (Reason("cached", {"age_s": 12.4, "ttl_s": 300}), "asked 12 s ago; cached for 300 s"),
    (Reason("summary_local"), "summaries are written locally unless you pick a cloud model"),
    (
        Reason("summary_server"),
        "summaries are written on your model server unless you pick a cloud model",
    ),
    (Reason("summary_stored"), "stored when it was made; made again if the document changes"),
    (Reason("privacy_refuses"), "privacy is set to never send anything to the cloud"),
    (Reason("no_cloud_set_up"), NO_CLOUD),
    (Reason("all_down", {"down": "gateway: down"}), "every cloud route is down (gateway: down)"),
    (Reason("parts", {"count": 3}), "3-part question"),
    (Reason("comparison"), "asks for a comparison"),
    (Reason("explanation"), "asks why / for an explanation"),
    (Reason("computation"), "needs a computation"),
    (Reason("code"), "is about code"),
    (Reason("long", {"tokens": 80}), "long question (80 tokens)"),
    (Reason("weak", {"similarity": 0.712}), "weak evidence (best match 0.71)"),
    (Reason("ambiguous"), "ambiguous evidence (top passages tie)"),
    (Reason("spread", {"documents": 3}), "evidence spans 3 documents"),
]


def test_every_reason_code_reads_in_english_as_it_did_before_the_codes() -> None:
    assert {reason.code for reason, _ in REASONS} == set(ENGLISH)
    assert [(reason, reason.text) for reason, _ in REASONS] == REASONS


@pytest.mark.parametrize("why", [reason for reason, _ in REASONS], ids=lambda why: why.code)
def test_every_reason_survives_the_history_s_json(why: Reason) -> None:
    kept = json.loads(json.dumps(why.as_dict()))
    assert Reason.from_dict(kept) == why
    assert Reason.from_dict(kept).text == why.text
