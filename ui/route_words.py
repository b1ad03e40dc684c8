"""Routes and the router's reasons as the window words them (the core names both by codes, and
words the reasons in English for the CLI, the history and MCP clients: app.routing.ENGLISH)."""

from __future__ import annotations

from PySide6.QtCore import QT_TRANSLATE_NOOP, QCoreApplication

from app.routing import Reason


def route_word(route: str) -> str:
    words = {
        "local": QCoreApplication.translate("routes", "local"),
        "cloud": QCoreApplication.translate("routes", "cloud"),
        "cache": QCoreApplication.translate("routes", "cached"),
        "fallback": QCoreApplication.translate("routes", "fallback"),
    }
    return words.get(route, route)


# Each reason code in the badge's plain words ({parts}: the reasons it is made of, joined by
# " · "); the values' formats are the templates' own, so a translation may move them.
_REASONS: dict[str, object] = {
    "asked_local": QT_TRANSLATE_NOOP("RouteReason", "you asked for this computer"),
    "asked_cloud": QT_TRANSLATE_NOOP("RouteReason", "you asked for the cloud"),
    "mode_local": QT_TRANSLATE_NOOP("RouteReason", "route set to This computer only"),
    "mode_cloud": QT_TRANSLATE_NOOP("RouteReason", "route set to Cloud only"),
    "no_cloud": QT_TRANSLATE_NOOP("RouteReason", "no cloud set up"),
    "no_cloud_hard": QT_TRANSLATE_NOOP("RouteReason", "no cloud set up · looked hard: {parts}"),
    "privacy": QT_TRANSLATE_NOOP("RouteReason", "privacy: nothing leaves this computer"),
    # Where the local route runs on the user's model server: the question goes there.
    "asked_server": QT_TRANSLATE_NOOP("RouteReason", "you asked for your model server"),
    "mode_server": QT_TRANSLATE_NOOP("RouteReason", "route set to Your model server only"),
    "privacy_server": QT_TRANSLATE_NOOP(
        "RouteReason", "privacy: kept on your model server (no cloud)"
    ),
    "cloud_down": QT_TRANSLATE_NOOP("RouteReason", "cloud unavailable · {down}"),
    "budget_spent": QT_TRANSLATE_NOOP(
        "RouteReason", "this month's cloud budget (${budget_usd:.2f}) is spent"
    ),
    "hard": QT_TRANSLATE_NOOP("RouteReason", "{parts}"),
    "simple": QT_TRANSLATE_NOOP("RouteReason", "simple question · {parts}"),
    "strong_evidence": QT_TRANSLATE_NOOP("RouteReason", "strong evidence"),
    "cascade": QT_TRANSLATE_NOOP("RouteReason", "the local draft {parts}: the cloud answered"),
    "draft_empty": QT_TRANSLATE_NOOP("RouteReason", "was empty"),
    "draft_ungrounded": QT_TRANSLATE_NOOP(
        "RouteReason", "was {grounded:.0%} grounded in the sources (below {floor:.0%})"
    ),
    "rescue": QT_TRANSLATE_NOOP(
        "RouteReason", "the local model failed ({error}): the cloud answered"
    ),
    # The local model answers: this computer's, or the user's model server's.
    "cloud_failed": QT_TRANSLATE_NOOP(
        "RouteReason",
        "the cloud failed before its first word ({error}): the local model answered",
    ),
    "server_failed": QT_TRANSLATE_NOOP(
        "RouteReason",
        "the model server failed before its first word ({error}): answered on this computer",
    ),
    "cached": QT_TRANSLATE_NOOP("RouteReason", "asked {age_s:.0f} s ago · kept for {ttl_s:g} s"),
    "summary_local": QT_TRANSLATE_NOOP(
        "RouteReason", "summaries are written on this computer unless you pick a cloud model"
    ),
    "summary_server": QT_TRANSLATE_NOOP(
        "RouteReason", "summaries are written on your model server unless you pick a cloud model"
    ),
    "summary_stored": QT_TRANSLATE_NOOP(
        "RouteReason", "stored when it was made · made again if the document changes"
    ),
    "privacy_refuses": QT_TRANSLATE_NOOP(
        "RouteReason", "privacy is set to never send anything to the cloud"
    ),
    "no_cloud_set_up": QT_TRANSLATE_NOOP(
        "RouteReason", "no cloud set up: add a provider or an MCP server in Settings"
    ),
    "all_down": QT_TRANSLATE_NOOP("RouteReason", "every cloud route is down · {down}"),
    "parts": QT_TRANSLATE_NOOP("RouteReason", "{count}-part question"),
    "comparison": QT_TRANSLATE_NOOP("RouteReason", "asks for a comparison"),
    "explanation": QT_TRANSLATE_NOOP("RouteReason", "asks why"),
    "computation": QT_TRANSLATE_NOOP("RouteReason", "needs a computation"),
    "code": QT_TRANSLATE_NOOP("RouteReason", "is about code"),
    "long": QT_TRANSLATE_NOOP("RouteReason", "long question ({tokens} tokens)"),
    "weak": QT_TRANSLATE_NOOP("RouteReason", "weak evidence (best match {similarity:.2f})"),
    "ambiguous": QT_TRANSLATE_NOOP("RouteReason", "ambiguous evidence (top passages tie)"),
    "spread": QT_TRANSLATE_NOOP("RouteReason", "evidence spans {documents} documents"),
}


def reason_words(why: Reason) -> str:
    """The reason in the window's language (a failure's own error text as it came); a code
    this window does not know, in English."""
    template = _REASONS.get(why.code)
    if template is None:
        return why.text
    parts = " · ".join(reason_words(part) for part in why.parts)
    words = QCoreApplication.translate("RouteReason", str(template))
    return words.format(**why.values, parts=parts)


def looked_hard(why: Reason | None) -> str | None:
    """Where a question that looked hard was answered here because no cloud is set up, what
    made it look hard ("looked hard: 2-part question · asks why"); None for any other reason."""
    if why is None or why.code != "no_cloud_hard":
        return None
    parts = " · ".join(reason_words(part) for part in why.parts)
    return QCoreApplication.translate("RouteReason", "looked hard: {parts}").format(parts=parts)
