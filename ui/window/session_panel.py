"""The session at a glance, folded into one line: "3 answers · $0.00 of $5 this month · 2 local,
1 cloud". Unfolded: the same in full, the month's cloud spending as a bar against the budget, and
how long each answer took. Money shows only once a cloud provider or MCP server is set up: an
answer on this computer is free, and a budget for a cloud that does not exist reads as a charge."""

from __future__ import annotations

from collections import Counter

from PySide6.QtCharts import QChart, QChartView, QScatterSeries, QValueAxis
from PySide6.QtCore import QEvent, QMargins, Qt
from PySide6.QtGui import QPainter, QPen
from PySide6.QtWidgets import QLabel, QProgressBar, QSizePolicy, QToolButton, QVBoxLayout, QWidget

from app.answering.budget import Budget
from app.answering.metrics import AnswerMetrics
from ui.looks import SIDEBAR_MARGIN, section_label
from ui.route_words import route_word
from ui.theme import route_colour

QWIDGETSIZE_MAX = (1 << 24) - 1  # Qt's "no maximum"


class SessionPanel(QWidget):
    """A one-line footer that unfolds: totals, the month's cloud spending as a bar against the
    budget (with a cloud only), and a latency chart once there is an answer (TTFT: hollow
    dots, total: filled), coloured by route.

    No signals: the window hands it each finished answer's metrics, the month's spending and
    whether a cloud is set up.
    """

    def __init__(self) -> None:
        super().__init__()
        self.routes: Counter[str] = Counter()
        self.cost_usd = 0.0
        self.unpriced = 0  # answers of unknown cost
        self.answers = 0
        self.cloud = False  # a cloud provider or MCP server is set up
        self._budget: Budget | None = None
        self._expanded = True
        self.toggle = QToolButton()  # not checkable: a pressed-in look would read as a switch
        self.toggle.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextBesideIcon)
        self.toggle.setArrowType(Qt.ArrowType.DownArrow)
        self.toggle.setAutoRaise(True)
        self.toggle.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Fixed)
        self.toggle.setAccessibleName(self.tr("Show or hide the session's details"))
        self.toggle.clicked.connect(lambda: self._expand(not self._expanded))
        self.summary = QLabel()
        self.summary.setTextFormat(Qt.TextFormat.PlainText)
        self.summary.setWordWrap(True)
        self.spending = QLabel()
        self.spending.setTextFormat(Qt.TextFormat.PlainText)
        self.spending.setWordWrap(True)
        self.budget = QProgressBar()
        self.budget.setRange(0, 1000)  # per mille of the monthly budget
        self.budget.setTextVisible(False)  # the label above says it in words
        self.budget.setMaximumHeight(8)
        self.budget.setAccessibleName(self.tr("Cloud budget used this month"))
        self.chart = QChart()
        self.chart.setTitle(self.tr("Seconds per answer"))
        self.chart.legend().setAlignment(Qt.AlignmentFlag.AlignBottom)
        # Qt's margins (the chart's and its layout's) left the plot 49 px of a 220 px view with
        # the theme's font, and the axes' labels turned to "…".
        self.chart.setMargins(QMargins(6, 6, 6, 6))
        self.chart.layout().setContentsMargins(0, 0, 0, 0)
        self.x_axis = QValueAxis()
        self.x_axis.setLabelFormat("%d")
        self.x_axis.setTitleText(self.tr("answer"))
        self.y_axis = QValueAxis()  # untitled: the chart's title gives the unit, and a sidebar
        # this narrow cut "seconds" short
        self.chart.addAxis(self.x_axis, Qt.AlignmentFlag.AlignBottom)
        self.chart.addAxis(self.y_axis, Qt.AlignmentFlag.AlignLeft)
        self.series: dict[tuple[str, str], QScatterSeries] = {}
        self.chart_view = QChartView(self.chart)
        self.chart_view.setRenderHint(QPainter.RenderHint.Antialiasing)
        self.chart_view.setMinimumHeight(220)  # less, and its axes' labels turn to dots
        self.chart_view.setAccessibleName(self.tr("Seconds per answer"))
        # Nothing to do in it by keyboard: no Tab stop.
        self.chart_view.setFocusPolicy(Qt.FocusPolicy.NoFocus)
        self.body = QWidget()
        body = QVBoxLayout(self.body)
        body.setContentsMargins(0, 0, 0, 0)
        body.addWidget(self.summary)
        body.addWidget(self.spending)
        body.addWidget(self.budget)
        body.addWidget(self.chart_view, 1)
        self.label = section_label(self.tr("Session"))
        self._layout = layout = QVBoxLayout(self)
        layout.setContentsMargins(SIDEBAR_MARGIN, SIDEBAR_MARGIN, SIDEBAR_MARGIN, 0)
        layout.setSpacing(2)
        layout.addWidget(self.label)
        layout.addWidget(self.toggle)
        layout.addWidget(self.body, 1)
        self._show_summary()
        self._follow_palette()

    def changeEvent(self, event: QEvent) -> None:
        if event.type() == QEvent.Type.PaletteChange:  # the system switched light/dark
            self._follow_palette()
        super().changeEvent(event)

    def _follow_palette(self) -> None:
        """QtCharts draws with its own light theme unless told otherwise."""
        palette = self.palette()
        self.chart.setBackgroundBrush(palette.base())
        self.chart.setTitleBrush(palette.text())
        self.chart.legend().setLabelColor(palette.text().color())
        for axis in (self.x_axis, self.y_axis):
            axis.setLabelsBrush(palette.text())
            axis.setTitleBrush(palette.text())
            axis.setGridLineColor(palette.mid().color())

    def add(self, metrics: AnswerMetrics) -> None:
        self.answers += 1
        self.routes[metrics.route] += 1
        if metrics.cost_usd is None:
            self.unpriced += 1
        else:
            self.cost_usd += metrics.cost_usd
        # The total's series first: a TTFT dot, made later, is drawn over it.
        for measure, value in (("total", metrics.total_s), ("TTFT", metrics.ttft_s)):
            if value is not None:
                self._series(metrics.route, measure).append(self.answers, value)
        top = max(
            (point.y() for series in self.series.values() for point in series.points()),
            default=1.0,
        )
        end = max(2, self.answers + 1)
        self.x_axis.setRange(0, end)
        self.x_axis.setTickCount(end + 1)  # a tick per answer: labels are whole numbers
        self.y_axis.setRange(0, top * 1.15)
        self._show_summary()

    @property
    def collapsed(self) -> bool:
        return not self._expanded

    def set_collapsed(self, collapsed: bool) -> None:
        self._expand(not collapsed)

    def _expand(self, expanded: bool) -> None:
        self._expanded = expanded
        self.body.setVisible(expanded)
        self.toggle.setAccessibleDescription(self.tr("unfolded") if expanded else self.tr("folded"))
        self.toggle.setArrowType(Qt.ArrowType.DownArrow if expanded else Qt.ArrowType.RightArrow)
        self._fit()

    def _fit(self) -> None:
        """Folded, or with nothing to show yet, the panel is its one line: the sidebar's
        splitter gives the rest of the height to the documents."""
        shows = any(w.isVisibleTo(self.body) for w in (self.spending, self.chart_view))
        if self._expanded and shows:
            self.setMaximumHeight(QWIDGETSIZE_MAX)
        else:
            line = (self.label, self.toggle)
            self.setMaximumHeight(
                SIDEBAR_MARGIN + sum(w.sizeHint().height() for w in line) + self._layout.spacing()
            )

    def show_cloud(self, configured: bool) -> None:
        """Whether a cloud provider or MCP server is set up: money shows only then."""
        self.cloud = configured
        self._show_summary()

    def show_spending(self, budget: Budget) -> None:
        self._budget = budget
        self._show_summary()

    def _series(self, route: str, measure: str) -> QScatterSeries:
        key = (route, measure)
        if key not in self.series:
            series = QScatterSeries()
            # "TTFT" means nothing to most: the legend says it in words.
            words = self.tr("first word") if measure == "TTFT" else self.tr("whole answer")
            series.setName(f"{route_word(route)}: {words}")
            colour = route_colour(route)
            if measure == "TTFT":  # hollow, drawn over the total's filled dot: both show
                series.setBrush(Qt.BrushStyle.NoBrush)
                series.setPen(QPen(colour, 2))
                series.setMarkerSize(8)
            else:
                series.setColor(colour)
                series.setMarkerSize(12)
            self.chart.addSeries(series)
            series.attachAxis(self.x_axis)
            series.attachAxis(self.y_axis)
            self.series[key] = series
        return self.series[key]

    def _show_summary(self) -> None:
        per_route = ", ".join(
            f"{count} {route_word(route)}" for route, count in sorted(self.routes.items())
        )
        answers = self.tr("1 answer") if self.answers == 1 else self.tr("{n} answers")
        answers = answers.format(n=self.answers)
        money = self.cloud and self._budget is not None
        month = ""
        if money and self._budget is not None:
            month = self.tr("{spent} of {budget} this month").format(
                spent=_dollars(self._budget.spent.known_usd),
                budget=f"${self._budget.monthly_usd:g}",
            )
        self.toggle.setText(
            " · ".join(p for p in (answers if self.answers else "", month, per_route) if p)
            or self.tr("No answers yet")
        )
        # Without money to add, the summary would repeat the line above it.
        self.summary.setVisible(self.answers > 0 and money)
        cost = ""
        if money:
            cost = self.tr(" · cost {cost}").format(cost=_dollars(self.cost_usd))
            if self.unpriced:
                cost += self.tr(" + {n} of unknown cost").format(n=self.unpriced)
        self.summary.setText(
            self.tr("This session: {answers}").format(answers=answers)
            + (f" ({per_route})" if per_route else "")
            + cost
        )
        self.spending.setVisible(money)
        self.budget.setVisible(money)
        if money and self._budget is not None:
            self._show_budget(self._budget)
        # An empty chart says nothing: it appears with the first answer's times.
        self.chart_view.setVisible(any(series.count() for series in self.series.values()))
        self._fit()

    def _show_budget(self, budget: Budget) -> None:
        text = self.tr("Cloud budget: {spent} of {budget} this month").format(
            spent=_dollars(budget.spent.known_usd), budget=f"${budget.monthly_usd:.2f}"
        )
        if unpriced := budget.spent.unpriced:
            text += (
                self.tr(" + 1 answer of unknown cost")
                if unpriced == 1
                else self.tr(" + {n} answers of unknown cost").format(n=unpriced)
            )
        self.spending.setText(text)
        spent = budget.spent.known_usd
        share = spent / budget.monthly_usd if budget.monthly_usd > 0 else float(spent > 0)
        self.budget.setValue(round(min(share, 1.0) * 1000))
        self.budget.setToolTip(
            self.tr("{share} of this month's cloud budget spent").format(share=f"{share:.0%}")
        )


def _dollars(amount: float) -> str:
    """Cents, as people count money; a fraction of a cent is not shown as free."""
    if 0 < amount < 0.01:
        return "<$0.01"
    return f"${amount:.2f}"
