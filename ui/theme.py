"""Colours that follow the system's light or dark palette (Qt switches the palette itself when
the system scheme changes; widgets that draw their own colours listen for PaletteChange)."""

from __future__ import annotations

from PySide6.QtGui import QColor, QPalette


def is_dark(palette: QPalette) -> bool:
    return palette.color(QPalette.ColorRole.Window).lightness() < 128


def error_colour(palette: QPalette) -> QColor:
    # Material red 800 on light backgrounds, red 200 on dark: both keep a 4.5:1 contrast.
    return QColor("#ef9a9a") if is_dark(palette) else QColor("#c62828")


def error_style(palette: QPalette) -> str:
    return f"color: {error_colour(palette).name()}"


# One colour per route, everywhere a route is shown (badge, chart): readable on light and dark.
ROUTE_COLOURS = {
    "local": QColor(46, 125, 50),
    "cloud": QColor(21, 101, 192),
    "cache": QColor(120, 120, 120),
    "fallback": QColor(230, 81, 0),
}


def route_colour(route: str) -> QColor:
    return ROUTE_COLOURS.get(route, QColor(128, 128, 128))
