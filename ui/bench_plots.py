"""PNG plots of `docent bench` results, drawn with QtCharts (already in the app: no plotting
library to add). Works without a display: the charts render offscreen."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from PySide6.QtCharts import QChart, QChartView, QLineSeries, QValueAxis
from PySide6.QtCore import QPointF, Qt
from PySide6.QtGui import QPainter
from PySide6.QtWidgets import QApplication

from ui.theme import route_colour

Series = tuple[str, str, Sequence[tuple[float, float]]]  # name, route, points


def line_chart(
    title: str, x_title: str, y_title: str, series: Sequence[Series], path: Path
) -> Path:
    chart = QChart()
    chart.setTitle(title)
    chart.legend().setAlignment(Qt.AlignmentFlag.AlignBottom)
    x_axis, y_axis = QValueAxis(), QValueAxis()
    x_axis.setTitleText(x_title)
    y_axis.setTitleText(y_title)
    chart.addAxis(x_axis, Qt.AlignmentFlag.AlignBottom)
    chart.addAxis(y_axis, Qt.AlignmentFlag.AlignLeft)
    xs: list[float] = []
    ys: list[float] = []
    for index, (name, route, points) in enumerate(series):
        line = QLineSeries()
        line.setName(name)
        line.setPointsVisible(True)
        pen = line.pen()
        pen.setColor(route_colour(route).lighter(100 + 25 * index))
        pen.setWidth(3)
        line.setPen(pen)
        for x, y in points:
            line.append(QPointF(x, y))
            xs.append(x)
            ys.append(y)
        chart.addSeries(line)
        line.attachAxis(x_axis)
        line.attachAxis(y_axis)
    x_axis.setRange(0, max(xs, default=1) * 1.08)
    y_axis.setRange(0, max(ys, default=1) * 1.15)
    for axis in (x_axis, y_axis):
        axis.applyNiceNumbers()
    x_axis.setLabelFormat("%d")
    view = QChartView(chart)
    view.setRenderHint(QPainter.RenderHint.Antialiasing)
    view.resize(820, 480)
    if not view.grab().save(str(path)):
        raise OSError(f"could not write {path}")
    return path


def _curves(routes: Sequence[dict[str, Any]], table: str, x: str, y: str) -> list[Series]:
    """One curve per measured route: `table`'s rows as (x, y) points."""
    return [
        (f"{r['route']}: {r['model']}", r["route"], [(row[x], row[y]) for row in r[table]])
        for r in routes
    ]


def inference_plots(results: dict[str, Any], out: Path) -> list[Path]:
    routes = results["routes"]
    return [
        line_chart(
            "Time to first token by prompt length",
            "prompt tokens",
            "TTFT (s)",
            _curves(routes, "lengths", "prompt_tokens", "ttft_median_s"),
            out / "inference-ttft-by-length.png",
        ),
        line_chart(
            "Time to first token with concurrent requests (median per request)",
            "concurrent requests",
            "TTFT (s)",
            _curves(routes, "concurrency", "requests", "ttft_median_s"),
            out / "inference-ttft-by-concurrency.png",
        ),
        line_chart(
            "Aggregate throughput with concurrent requests",
            "concurrent requests",
            "tokens/s (all requests)",
            _curves(routes, "concurrency", "requests", "aggregate_tok_s"),
            out / "inference-throughput-by-concurrency.png",
        ),
    ]


PLOTTERS = {"inference": inference_plots}


def draw(results_file: Path) -> list[Path]:
    """The plots of one suite's results, next to its JSON file."""
    results = json.loads(results_file.read_text(encoding="utf-8"))
    plotter = PLOTTERS.get(results["suite"])
    if plotter is None:
        return []
    if QApplication.instance() is None:
        if sys.platform.startswith("linux") and not (
            os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY")
        ):
            os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
        app = QApplication(sys.argv[:1])
        try:
            return plotter(results, results_file.parent)
        finally:
            del app
    return plotter(results, results_file.parent)
