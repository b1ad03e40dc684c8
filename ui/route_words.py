"""A route as the window words it in lists and totals (the core names it by a code)."""

from __future__ import annotations

from PySide6.QtCore import QCoreApplication


def route_word(route: str) -> str:
    words = {
        "local": QCoreApplication.translate("routes", "local"),
        "cloud": QCoreApplication.translate("routes", "cloud"),
        "cache": QCoreApplication.translate("routes", "cached"),
        "fallback": QCoreApplication.translate("routes", "fallback"),
    }
    return words.get(route, route)
