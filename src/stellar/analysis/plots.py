"""Plots of an experiment, saved as PNG and SVG (matplotlib's Agg canvas, no display).

Functions take plain data (the outputs of :mod:`stellar.analysis.metrics`), never run
directories. Figures are built without pyplot, so no global state or open windows remain.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Literal

import numpy as np
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from stellar.analysis.metrics import CurvePoint, FeatureRate

Axis = Literal["tests", "seconds"]
Band = Literal["minmax", "iqr"]
GRID_POINTS = 200  # time axis resolution
FORMATS = ("png", "svg")


def save(fig: Figure, out_dir: Path, stem: str) -> list[Path]:
    """Write ``stem.png`` and ``stem.svg`` into ``out_dir``."""
    out_dir.mkdir(parents=True, exist_ok=True)
    FigureCanvasAgg(fig)
    paths = [out_dir / f"{stem}.{fmt}" for fmt in FORMATS]
    for path in paths:
        fig.savefig(path, dpi=150, bbox_inches="tight")
    return paths


def curve_on_grid(points: Sequence[CurvePoint], grid: np.ndarray, axis: Axis) -> np.ndarray:
    """Unique failures found by each grid position (a step function; held after the end)."""
    if not points:
        return np.zeros(len(grid))
    xs = np.array([getattr(p, axis) for p in points], dtype=float)
    ys = np.array([p.unique_failures for p in points], dtype=float)
    at = np.searchsorted(xs, grid, side="right") - 1  # last point at or before the grid value
    return np.where(at >= 0, ys[np.clip(at, 0, None)], 0.0)


def common_grid(curves: dict[str, list[list[CurvePoint]]], axis: Axis) -> np.ndarray:
    """0..max tests in steps of one test, or 0..max seconds in ``GRID_POINTS`` steps."""
    end = max(
        (getattr(run[-1], axis) for runs in curves.values() for run in runs if run), default=0
    )
    if axis == "tests":
        return np.arange(0, int(end) + 1, dtype=float)
    return np.linspace(0.0, float(end), GRID_POINTS)


def plot_failure_curves(
    curves: dict[str, list[list[CurvePoint]]],
    out_dir: Path,
    axis: Axis = "tests",
    band: Band = "minmax",
    stem: str | None = None,
) -> list[Path]:
    """Mean unique failures per algorithm over tests or time, with a band across seeds."""
    grid = common_grid(curves, axis)
    fig = Figure(figsize=(7, 4.5))
    ax = fig.add_subplot()
    for name, runs in curves.items():
        if not runs:
            continue
        ys = np.array([curve_on_grid(run, grid, axis) for run in runs])
        low, high = (
            (ys.min(axis=0), ys.max(axis=0))
            if band == "minmax"
            else tuple(np.percentile(ys, [25, 75], axis=0))
        )
        (line,) = ax.plot(grid, ys.mean(axis=0), label=f"{name} (n={len(runs)})")
        ax.fill_between(grid, low, high, color=line.get_color(), alpha=0.2, linewidth=0)
    ax.set_xlabel("executed tests" if axis == "tests" else "seconds")
    ax.set_ylabel("unique failures")
    ax.set_title(f"Failures over {'tests' if axis == 'tests' else 'time'} (mean, {band} band)")
    ax.grid(alpha=0.3)
    if ax.lines:
        ax.legend(loc="upper left")
    return save(fig, out_dir, stem or f"failures_over_{'tests' if axis == 'tests' else 'time'}")


def plot_distribution(
    values: dict[str, list[float]],
    out_dir: Path,
    stem: str = "failure_ratio",
    ylabel: str = "failure ratio",
) -> list[Path]:
    """Box plot per algorithm with every run drawn as a point."""
    names = list(values)
    fig = Figure(figsize=(1.6 * max(len(names), 2) + 1.5, 4.5))
    ax = fig.add_subplot()
    ax.boxplot([values[n] for n in names], showfliers=False)
    ax.set_xticks(range(1, len(names) + 1), names)
    jitter = np.random.default_rng(0)
    for i, name in enumerate(names, start=1):
        xs = i + jitter.uniform(-0.12, 0.12, len(values[name]))
        ax.scatter(xs, values[name], s=18, alpha=0.7, zorder=3)
    ax.set_ylabel(ylabel)
    ax.set_title(f"{ylabel.capitalize()} per algorithm")
    ax.grid(axis="y", alpha=0.3)
    return save(fig, out_dir, stem)


def plot_failure_ratios(ratios: dict[str, list[float]], out_dir: Path) -> list[Path]:
    """Failure ratio (unique failures / executed tests) per algorithm."""
    return plot_distribution(ratios, out_dir, "failure_ratio", "failure ratio")


def plot_feature_rates(
    rates: dict[str, list[FeatureRate]], out_dir: Path, stem: str = "feature_rates"
) -> list[Path]:
    """Heat map per algorithm: features as rows, their values as cells, colour = failure rate."""
    values: dict[str, dict[str, None]] = {}  # feature -> its values, in first-seen order
    for rows in rates.values():
        for r in rows:
            values.setdefault(r.feature, {})[r.value] = None
    features = list(values)
    width = max((len(v) for v in values.values()), default=1)
    panels = max(len(rates), 1)
    fig = Figure(figsize=(1.1 * width + 2.5, (0.45 * max(len(features), 1) + 1.0) * panels))
    axes = fig.subplots(panels, 1, squeeze=False)[:, 0]
    top = max((r.rate for rows in rates.values() for r in rows), default=0.0) or 1.0
    image = None
    for ax, (name, rows) in zip(axes, rates.items(), strict=False):
        grid = np.full((len(features), width), np.nan)
        cells = {(r.feature, r.value): r for r in rows}
        for i, feature in enumerate(features):
            for j, value in enumerate(values[feature]):  # same columns in every panel
                cell = cells.get((feature, value))
                if cell is not None:
                    grid[i, j] = cell.rate
                    colour = "white" if cell.rate > 0.6 * top else "black"
                    text = f"{value}\n{cell.rate:.0%}"
                    ax.text(j, i, text, ha="center", va="center", fontsize=6, color=colour)
        image = ax.imshow(
            np.ma.masked_invalid(grid), cmap="viridis", vmin=0, vmax=top, aspect="auto"
        )
        ax.set_facecolor("#eeeeee")
        ax.set_yticks(range(len(features)), features, fontsize=8)
        ax.set_xticks([])
        ax.set_title(f"{name}: failure rate per feature value", fontsize=10)
    if image is not None:
        fig.colorbar(image, ax=list(axes), shrink=0.8, label="failure rate")
    return save(fig, out_dir, stem)
