"""PNG plots of `docent bench` results, drawn with QtCharts (already in the app: no plotting
library to add). Works without a display: the charts render offscreen."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Sequence
from html import escape
from pathlib import Path
from typing import Any

from PySide6.QtCharts import (
    QBarCategoryAxis,
    QBarSet,
    QChart,
    QChartView,
    QHorizontalBarSeries,
    QLineSeries,
    QLogValueAxis,
    QValueAxis,
)
from PySide6.QtCore import QPointF, Qt
from PySide6.QtGui import QPainter
from PySide6.QtWidgets import QApplication

from ui.theme import route_colour

Series = tuple[str, str, Sequence[tuple[float, float]]]  # name, route, points


def _save(chart: QChart, path: Path, height: int = 480) -> Path:
    view = QChartView(chart)
    view.setRenderHint(QPainter.RenderHint.Antialiasing)
    view.resize(960, height)
    if not view.grab().save(str(path)):
        raise OSError(f"could not write {path}")
    return path


def line_chart(
    title: str, x_title: str, y_title: str, series: Sequence[Series], *, log_x: bool = False
) -> QChart:
    chart = QChart()
    chart.setTitle(title)
    chart.legend().setAlignment(Qt.AlignmentFlag.AlignBottom)
    x_axis: QValueAxis | QLogValueAxis = QLogValueAxis() if log_x else QValueAxis()
    y_axis = QValueAxis()
    x_axis.setTitleText(x_title)
    y_axis.setTitleText(y_title)
    chart.addAxis(x_axis, Qt.AlignmentFlag.AlignBottom)
    chart.addAxis(y_axis, Qt.AlignmentFlag.AlignLeft)
    xs: list[float] = []
    ys: list[float] = []
    for index, (name, route, points) in enumerate(series):
        line = QLineSeries()
        line.setName(escape(name))  # a legend renders HTML; model names are not HTML
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
    if isinstance(x_axis, QLogValueAxis):
        x_axis.setRange(min(xs, default=1) / 2, max(xs, default=10) * 2)
    else:
        x_axis.setRange(0, max(xs, default=1) * 1.08)
        x_axis.applyNiceNumbers()
    y_axis.setRange(0, max(ys, default=1) * 1.15)
    y_axis.applyNiceNumbers()
    x_axis.setLabelFormat("%d")
    return chart


def ratio_chart(title: str, measures: Sequence[dict[str, Any]], path: Path) -> Path | None:
    """Docent ÷ baseline for every ratio measure of a suite, one bar each (1.0 = as fast)."""
    compared = [
        m for m in measures if m["compare"] == "ratio" and isinstance(m["comparison"], float)
    ]
    if not compared:
        return None
    bars = QBarSet("Docent ÷ baseline")
    bars.setColor(route_colour("local"))
    names = []
    for m in reversed(compared):  # a horizontal chart lists its categories bottom-up
        bars.append(m["comparison"])
        names.append(f"{m['name'].strip()} ({m['unit']})")
    series = QHorizontalBarSeries()
    series.append(bars)
    series.setLabelsVisible(True)
    series.setLabelsFormat("@valuex")
    series.setLabelsPrecision(3)
    chart = QChart()
    chart.setTitle(title)
    chart.addSeries(series)
    categories = QBarCategoryAxis()
    categories.append(names)
    values = QValueAxis()
    values.setRange(0, max(m["comparison"] for m in compared) * 1.15)
    values.applyNiceNumbers()
    values.setTitleText("Docent ÷ baseline, same run (rates: higher is better; times: lower)")
    chart.addAxis(categories, Qt.AlignmentFlag.AlignLeft)
    chart.addAxis(values, Qt.AlignmentFlag.AlignBottom)
    series.attachAxis(categories)
    series.attachAxis(values)
    chart.legend().hide()
    return _save(chart, path, height=120 + 36 * len(compared))


def _curves(routes: Sequence[dict[str, Any]], table: str, x: str, y: str) -> list[Series]:
    """One curve per measured route: `table`'s rows as (x, y) points."""
    return [
        (f"{r['route']}: {r['model']}", r["route"], [(row[x], row[y]) for row in r[table]])
        for r in routes
    ]


def inference_charts(results: dict[str, Any]) -> list[tuple[str, QChart]]:
    """(file stem, chart) for each plot of the inference suite; the Benchmark window shows
    the same charts."""
    routes = results["routes"]
    return [
        (
            "ttft-by-length",
            line_chart(
                "Time to first token by prompt length",
                "prompt tokens",
                "TTFT (s)",
                _curves(routes, "lengths", "prompt_tokens", "ttft_median_s"),
            ),
        ),
        (
            "ttft-by-concurrency",
            line_chart(
                "Time to first token with concurrent requests (median per request)",
                "concurrent requests",
                "TTFT (s)",
                _curves(routes, "concurrency", "requests", "ttft_median_s"),
            ),
        ),
        (
            "throughput-by-concurrency",
            line_chart(
                "Aggregate throughput with concurrent requests",
                "concurrent requests",
                "tokens/s (all requests)",
                _curves(routes, "concurrency", "requests", "aggregate_tok_s"),
            ),
        ),
    ]


def inference_plots(results: dict[str, Any], out: Path) -> list[Path]:
    return [
        _save(chart, out / f"inference-{stem}.png") for stem, chart in inference_charts(results)
    ]


def retrieval_plots(results: dict[str, Any], out: Path) -> list[Path]:
    rows = results["sizes"]
    curves: list[Series] = [
        (label, route, [(row["chunks"], row[key]) for row in rows if key in row])
        for label, route, key in (
            ("Docent hybrid + query embedding", "local", "embedded_p95_ms"),
            ("Docent hybrid (FTS5 + vectors)", "local", "hybrid_p95_ms"),
            ("Docent vector k-NN", "cache", "vector_p95_ms"),
            ("plain FTS5 BM25", "fallback", "fts5_p95_ms"),
            ("sqlite-vec vec0 k-NN", "cloud", "sqlite_vec_p95_ms"),
        )
    ]
    chart = line_chart(
        "Search latency (p95) by library size",
        "chunks",
        "p95 latency (ms)",
        [curve for curve in curves if curve[2]],
        log_x=True,
    )
    return [_save(chart, out / "retrieval-latency-by-size.png"), *_ratios(results, out)]


def _ratios(results: dict[str, Any], out: Path) -> list[Path]:
    suite = results["suite"]
    plot = ratio_chart(
        f"docent bench {suite}: Docent against its baselines",
        results["measures"],
        out / f"{suite}-ratios.png",
    )
    return [plot] if plot else []


PLOTTERS = {
    "inference": inference_plots,
    "retrieval": retrieval_plots,
    "ingest": _ratios,
    "overhead": _ratios,
    "transport": _ratios,
    "gui": _ratios,
}


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
