import numpy as np
import pytest

from stellar.analysis.metrics import CurvePoint, FeatureRate
from stellar.analysis.plots import (
    common_grid,
    curve_on_grid,
    plot_distribution,
    plot_failure_curves,
    plot_failure_ratios,
    plot_feature_rates,
)

CURVE = [CurvePoint(1, 0.5, 0), CurvePoint(2, 1.0, 1), CurvePoint(3, 2.0, 1), CurvePoint(4, 3.0, 2)]
CURVES = {
    "stellar": [CURVE, [CurvePoint(1, 0.2, 1), CurvePoint(2, 0.4, 2)]],
    "random": [CURVE[:2], CURVE],
    "nothing": [],
}


def assert_written(paths, stem):
    assert [p.name for p in paths] == [f"{stem}.png", f"{stem}.svg"]
    png, svg = (p.read_bytes() for p in paths)
    assert png.startswith(b"\x89PNG") and len(png) > 1000
    assert b"<svg" in svg


def test_curve_on_grid_is_a_step_function_held_after_the_end():
    assert curve_on_grid(CURVE, np.arange(0, 7.0), "tests").tolist() == [0, 0, 1, 1, 2, 2, 2]
    grid = np.array([0.0, 0.6, 1.0, 2.9, 10.0])
    assert curve_on_grid(CURVE, grid, "seconds").tolist() == [0, 0, 1, 1, 2]
    assert curve_on_grid([], grid, "seconds").tolist() == [0] * 5


def test_common_grid_spans_the_longest_run():
    assert common_grid(CURVES, "tests").tolist() == [0, 1, 2, 3, 4]
    grid = common_grid(CURVES, "seconds")
    assert grid[0] == 0 and grid[-1] == pytest.approx(3.0)
    assert common_grid({}, "tests").tolist() == [0]


@pytest.mark.parametrize(("axis", "band"), [("tests", "minmax"), ("seconds", "iqr")])
def test_failure_curves_write_png_and_svg(tmp_path, axis, band):
    paths = plot_failure_curves(CURVES, tmp_path, axis=axis, band=band)
    assert_written(paths, "failures_over_tests" if axis == "tests" else "failures_over_time")


def test_failure_ratio_box_plot(tmp_path):
    paths = plot_failure_ratios({"stellar": [0.1, 0.2, 0.15], "random": [0.02]}, tmp_path)
    assert_written(paths, "failure_ratio")
    assert_written(plot_distribution({}, tmp_path, "empty", "nothing"), "empty")


def test_feature_rate_heat_map(tmp_path):
    rates = {
        "stellar": [
            FeatureRate("size", "small", 10, 1, 0.1),
            FeatureRate("size", "large", 10, 5, 0.5),
            FeatureRate("color", "red", 8, 4, 0.5),
            FeatureRate("color", "blue", 7, 0, 0.0),
            FeatureRate("color", "green", 5, 2, 0.4),
        ],
        "random": [FeatureRate("size", "small", 3, 0, 0.0)],
    }
    assert_written(plot_feature_rates(rates, tmp_path), "feature_rates")
    assert_written(plot_feature_rates({}, tmp_path, stem="no_rates"), "no_rates")
