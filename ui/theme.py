"""The window's one visual foundation, driven by the palette so that dark mode follows: colours
(each text colour checked against its background for WCAG AA), an 8 px spacing grid, a type
scale, fonts with a matching CJK face, and the style sheet that applies them (apply_theme).

Qt switches the palette itself when the system scheme changes; the style sheet is rebuilt then,
and widgets that draw their own colours listen for PaletteChange."""

from __future__ import annotations

import sys

from PySide6.QtCore import QObject
from PySide6.QtGui import QColor, QFont, QPalette
from PySide6.QtWidgets import QApplication

from app.cjk import CJK_RUN

SPACING = 8  # the grid: margins and gaps are multiples of it
RADIUS = 8  # cards' corners
# The type scale, against the application's font: three levels (title, body, meta).
ANSWER_SCALE = 1.05
META_SCALE = 0.9
SECTION_SCALE = 0.85
# Line heights (percent of the font's): answers read as text, not as a block; CJK wants more.
LINE_HEIGHT = 145
CJK_LINE_HEIGHT = 170
MIN_CONTRAST = 4.5  # WCAG AA for text of this size
# The dynamic property that gives a label one of the theme's text roles (see style_sheet).
ROLE = "role"


def is_dark(palette: QPalette) -> bool:
    return palette.color(QPalette.ColorRole.Window).lightness() < 128


def luminance(colour: QColor) -> float:
    """Relative luminance, as WCAG defines it."""
    channels = (colour.redF(), colour.greenF(), colour.blueF())
    red, green, blue = (
        c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4 for c in channels
    )
    return 0.2126 * red + 0.7152 * green + 0.0722 * blue


def contrast(one: QColor, other: QColor) -> float:
    darker, lighter = sorted((luminance(one), luminance(other)))
    return (lighter + 0.05) / (darker + 0.05)


def blend(colour: QColor, background: QColor, share: float) -> QColor:
    """`colour` at `share` opacity over `background`, as one opaque colour (8 bits a channel,
    as a style sheet names it)."""
    red, green, blue = (
        round(share * a + (1 - share) * b)
        for a, b in (
            (colour.red(), background.red()),
            (colour.green(), background.green()),
            (colour.blue(), background.blue()),
        )
    )
    return QColor(red, green, blue)


def readable(colour: QColor, background: QColor) -> QColor:
    """`colour`, darkened on a light background (lightened on a dark one) until it reaches
    MIN_CONTRAST: a palette's accent (a system's, the user's) stays its hue and still reads."""
    towards = QColor("black") if background.lightness() >= 128 else QColor("white")
    shade = QColor(colour)
    share = 0.0
    while contrast(shade, background) < MIN_CONTRAST and share < 1:
        share = min(1.0, share + 0.05)
        shade = blend(towards, colour, share)
    return shade


def canvas_colour(palette: QPalette) -> QColor:
    """Where the conversation sits: the palette's reading surface."""
    return palette.color(QPalette.ColorRole.Base)


def card_colour(palette: QPalette) -> QColor:
    """A card: one step off the canvas (lighter in the dark, darker in the light), so it stands
    out in both; the palette's alternate base where it is that step."""
    canvas = canvas_colour(palette)
    alternate = palette.color(QPalette.ColorRole.AlternateBase)
    if abs(alternate.lightness() - canvas.lightness()) >= 6:
        return alternate
    return canvas.lighter(125) if is_dark(palette) else canvas.darker(104)


def hairline_colour(palette: QPalette) -> QColor:
    return blend(palette.color(QPalette.ColorRole.Text), card_colour(palette), 0.14)


def muted_colour(palette: QPalette, background: QColor | None = None) -> QColor:
    """Secondary text (metadata, details): the text colour faded, still AA on its background
    (a palette's placeholder grey is not: 3.9:1 on Fusion's white)."""
    ground = card_colour(palette) if background is None else background
    return readable(blend(palette.color(QPalette.ColorRole.Text), ground, 0.62), ground)


def warning_colour(palette: QPalette) -> QColor:
    # Amber that keeps 4.5:1: a dark brown-orange on light backgrounds, orange 300 on dark.
    return QColor("#ffb74d") if is_dark(palette) else QColor("#8a4b00")


def error_colour(palette: QPalette) -> QColor:
    # Material red 800 on light backgrounds, red 200 on dark: both keep a 4.5:1 contrast.
    return QColor("#ef9a9a") if is_dark(palette) else QColor("#c62828")


def error_style(palette: QPalette) -> str:
    return f"color: {error_colour(palette).name()}"


def citation_chip_colours(palette: QPalette) -> tuple[QColor, QColor]:
    """A citation chip's text and background: the highlight colour, semibold, on a tint of
    it (selected text is solid highlight: a chip must not look like it)."""
    highlight = palette.color(QPalette.ColorRole.Highlight)
    background = blend(highlight, card_colour(palette), 0.2)
    return readable(highlight, background), background


# One colour per route, everywhere a route is shown (badge, chart); a chip carries white text on
# it, at least 4.5:1 (cache was #787878, 4.4:1; fallback #E65100, 3.8:1).
ROUTE_COLOURS = {
    "local": QColor("#2e7d32"),
    "cloud": QColor("#1565c0"),
    "cache": QColor("#616161"),
    "fallback": QColor("#bf360c"),
}
ROUTE_CHIP_TEXT = QColor("white")


def route_colour(route: str) -> QColor:
    return ROUTE_COLOURS.get(route, QColor("#616161"))


def text_pairs(palette: QPalette) -> dict[str, tuple[QColor, QColor]]:
    """Every text colour the window draws with this palette, with the background it is drawn
    on: what the contrast test measures."""
    card = card_colour(palette)
    canvas = canvas_colour(palette)
    text = palette.color(QPalette.ColorRole.Text)
    pairs = {
        "answer text on a card": (text, card),
        "muted text on a card": (muted_colour(palette), card),
        "muted text on the canvas": (muted_colour(palette, canvas), canvas),
        "muted text on the window": (
            muted_colour(palette, palette.color(QPalette.ColorRole.Window)),
            palette.color(QPalette.ColorRole.Window),
        ),
        "error text on a card": (error_colour(palette), card),
        "error text on the window": (
            error_colour(palette),
            palette.color(QPalette.ColorRole.Window),
        ),
        "citation chip": citation_chip_colours(palette),
    }
    for route, colour in ROUTE_COLOURS.items():
        pairs[f"{route} route chip"] = (ROUTE_CHIP_TEXT, colour)
    return pairs


def scaled(font: QFont, scale: float) -> QFont:
    """`font` at a step of the type scale."""
    sized = QFont(font)
    if font.pointSizeF() > 0:
        sized.setPointSizeF(font.pointSizeF() * scale)
    else:
        sized.setPixelSize(max(1, round(font.pixelSize() * scale)))
    return sized


def line_height(text: str) -> int:
    """The line height for `text` (percent): more where it is mostly CJK."""
    letters = sum(1 for char in text if not char.isspace()) or 1
    cjk = sum(len(run) for run in CJK_RUN.findall(text))
    return CJK_LINE_HEIGHT if cjk / letters > 0.5 else LINE_HEIGHT


# Per platform: the UI face, then a CJK face of the same design weight, so Han text neither
# looks smaller nor lighter than the Latin around it (Qt's own fallback picks any face).
_CJK_FACES = {
    "darwin": ["PingFang SC", "Hiragino Sans GB"],
    "win32": ["Microsoft YaHei UI", "Microsoft YaHei"],
}
_LINUX_FACES = ["Noto Sans", "Noto Sans CJK SC", "Source Han Sans SC", "WenQuanYi Micro Hei"]


def ui_font(base: QFont) -> QFont:
    font = QFont(base)
    if sys.platform in _CJK_FACES:
        font.setFamilies([base.family(), *_CJK_FACES[sys.platform]])
    else:
        font.setFamilies([*_LINUX_FACES[:1], base.family(), *_LINUX_FACES[1:]])
    return font


def style_sheet(palette: QPalette, font: QFont) -> str:
    """The application's style sheet for `palette`: cards off the canvas, the text roles."""
    card, canvas = card_colour(palette).name(), canvas_colour(palette).name()
    hairline = hairline_colour(palette).name()
    focus = palette.color(QPalette.ColorRole.Highlight).name()
    muted = muted_colour(palette).name()
    muted_on_window = muted_colour(palette, palette.color(QPalette.ColorRole.Window)).name()
    size = font.pointSizeF() if font.pointSizeF() > 0 else 9.0
    return f"""
TurnsView > #qt_scrollarea_viewport, TurnsView > #qt_scrollarea_viewport > QWidget {{
    background: {canvas};
}}
#turnCard, #sourceCard {{
    background: {card};
    border: 1px solid {hairline};
    border-radius: {RADIUS}px;
}}
#sourceCard:focus, #sourceCard:hover {{ border: 1px solid {focus}; }}
#sourceCard QLabel, #turnCard QLabel {{ background: transparent; }}
#sourceMeta {{ color: {muted}; }}
#turnCard *[{ROLE}="meta"] {{ color: {muted}; font-size: {size * META_SCALE:.1f}pt; }}
*[{ROLE}="muted"] {{ color: {muted_on_window}; }}
*[{ROLE}="section"] {{
    color: {muted_on_window}; font-size: {size * SECTION_SCALE:.1f}pt; font-weight: 600;
}}
"""


class Theme(QObject):
    """Rebuilds the style sheet when the application's palette changes (a dark desktop)."""

    def __init__(self, app: QApplication) -> None:
        super().__init__(app)
        self.app = app
        self.font = ui_font(app.font())
        app.setFont(self.font)
        self.apply()
        # The signal, not an event filter: a filter on the application sees every event.
        app.paletteChanged.connect(self.apply)

    def apply(self) -> None:
        self.app.setStyleSheet(style_sheet(self.app.palette(), self.font))


def apply_theme(app: QApplication) -> Theme:
    """Give `app` the theme's fonts and style sheet, now and whenever its palette changes."""
    return Theme(app)


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
