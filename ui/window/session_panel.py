"""The session at a glance: answers per route, what they cost against the month's cloud budget,
and how long each one took. Collapsible, so the documents can have the room."""

from __future__ import annotations

from collections import Counter

from PySide6.QtCharts import QChart, QChartView, QScatterSeries, QValueAxis
from PySide6.QtCore import QEvent, Qt
from PySide6.QtGui import QPainter
from PySide6.QtWidgets import QLabel, QProgressBar, QToolButton, QVBoxLayout, QWidget

from app.answering.budget import Budget
from app.answering.metrics import AnswerMetrics
from ui.theme import route_colour


class SessionPanel(QWidget):
    """Totals, the month's cloud spending as a bar against the budget, and a latency chart
    (TTFT: small dots, total: large), coloured by route.

    No signals: the window hands it each finished answer's metrics, and the month's spending.
    """

    def __init__(self) -> None:
        super().__init__()
        self.routes: Counter[str] = Counter()
        self.cost_usd = 0.0
        self.unpriced = 0  # answers of unknown cost
        self.answers = 0
        self.toggle = QToolButton()
        self.toggle.setText("Session")
        self.toggle.setCheckable(True)
        self.toggle.setChecked(True)
        self.toggle.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextBesideIcon)
        self.toggle.setArrowType(Qt.ArrowType.DownArrow)
        self.toggle.setAutoRaise(True)
        self.toggle.setAccessibleName("Show or hide the session panel")
        self.toggle.toggled.connect(self._expand)
        self.summary = QLabel()
        self.summary.setWordWrap(True)
        self.spending = QLabel()
        self.spending.setWordWrap(True)
        self.budget = QProgressBar()
        self.budget.setRange(0, 1000)  # per mille of the monthly budget
        self.budget.setTextVisible(False)  # the label above says it in words
        self.budget.setMaximumHeight(8)
        self.budget.setAccessibleName("Cloud budget used this month")
        self.chart = QChart()
        self.chart.setTitle("Latency per answer (s)")
        self.chart.legend().setAlignment(Qt.AlignmentFlag.AlignBottom)
        self.x_axis = QValueAxis()
        self.x_axis.setLabelFormat("%d")
        self.x_axis.setTitleText("answer")
        self.y_axis = QValueAxis()  # untitled: the chart's title gives the unit, and a sidebar
        # this narrow cut "seconds" short
        self.chart.addAxis(self.x_axis, Qt.AlignmentFlag.AlignBottom)
        self.chart.addAxis(self.y_axis, Qt.AlignmentFlag.AlignLeft)
        self.series: dict[tuple[str, str], QScatterSeries] = {}
        view = QChartView(self.chart)
        view.setRenderHint(QPainter.RenderHint.Antialiasing)
        view.setMinimumHeight(220)
        view.setAccessibleName("Latency per answer")
        view.setFocusPolicy(Qt.FocusPolicy.NoFocus)  # nothing to do in it by keyboard: no Tab stop
        self.body = QWidget()
        body = QVBoxLayout(self.body)
        body.setContentsMargins(0, 0, 0, 0)
        body.addWidget(self.summary)
        body.addWidget(self.spending)
        body.addWidget(self.budget)
        body.addWidget(view, 1)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
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
        for measure, value in (("TTFT", metrics.ttft_s), ("total", metrics.total_s)):
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
        return not self.toggle.isChecked()

    def set_collapsed(self, collapsed: bool) -> None:
        self.toggle.setChecked(not collapsed)

    def _expand(self, expanded: bool) -> None:
        self.body.setVisible(expanded)
        self.toggle.setArrowType(Qt.ArrowType.DownArrow if expanded else Qt.ArrowType.RightArrow)

    def show_spending(self, budget: Budget) -> None:
        self.spending.setText(f"Cloud budget: {budget.describe()}")
        spent = budget.spent.known_usd
        share = spent / budget.monthly_usd if budget.monthly_usd > 0 else float(spent > 0)
        self.budget.setValue(round(min(share, 1.0) * 1000))
        self.budget.setToolTip(f"{share:.0%} of this month's cloud budget spent")

    def _series(self, route: str, measure: str) -> QScatterSeries:
        key = (route, measure)
        if key not in self.series:
            series = QScatterSeries()
            series.setName(f"{route} {measure}")
            series.setColor(route_colour(route))
            series.setMarkerSize(7 if measure == "TTFT" else 12)
            self.chart.addSeries(series)
            series.attachAxis(self.x_axis)
            series.attachAxis(self.y_axis)
            self.series[key] = series
        return self.series[key]

    def _show_summary(self) -> None:
        per_route = " · ".join(f"{route} {count}" for route, count in sorted(self.routes.items()))
        unknown = f" + {self.unpriced} of unknown cost" if self.unpriced else ""
        self.summary.setText(
            f"Session: {self.answers} answers"
            + (f" ({per_route})" if per_route else "")
            + f" · cost ${self.cost_usd:.4f}{unknown}"
        )
