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


def dark_palette() -> QPalette:
    """What a dark desktop hands the app: for the screenshots and the tests (Xvfb and the
    offscreen platform have no platform theme to ask for one)."""
    palette = QPalette()
    for role, colour in (
        (QPalette.ColorRole.Window, "#202124"),
        (QPalette.ColorRole.WindowText, "#e8eaed"),
        (QPalette.ColorRole.Base, "#17181a"),
        (QPalette.ColorRole.AlternateBase, "#26272b"),
        (QPalette.ColorRole.Text, "#e8eaed"),
        (QPalette.ColorRole.PlaceholderText, "#9aa0a6"),
        (QPalette.ColorRole.Button, "#2d2e31"),
        (QPalette.ColorRole.ButtonText, "#e8eaed"),
        (QPalette.ColorRole.Highlight, "#8ab4f8"),
        (QPalette.ColorRole.HighlightedText, "#202124"),
        (QPalette.ColorRole.Link, "#8ab4f8"),
        (QPalette.ColorRole.ToolTipBase, "#303134"),
        (QPalette.ColorRole.ToolTipText, "#e8eaed"),
        (QPalette.ColorRole.Light, "#4a4b4f"),
        (QPalette.ColorRole.Midlight, "#3c4043"),
        (QPalette.ColorRole.Mid, "#72767b"),  # outlines (tick boxes): 3:1 on Base, AlternateBase
        (QPalette.ColorRole.Dark, "#151618"),
        (QPalette.ColorRole.Shadow, "#000000"),
    ):
        palette.setColor(role, QColor(colour))
    for role in (
        QPalette.ColorRole.WindowText,
        QPalette.ColorRole.Text,
        QPalette.ColorRole.ButtonText,
    ):
        palette.setColor(QPalette.ColorGroup.Disabled, role, QColor("#80868b"))
    return palette
