"""stellar calibrate: judges against labelled answers, with numbers worked out by hand."""

import asyncio
import json
import shutil
from pathlib import Path

import pytest
from conftest import TOY, cli
from scipy.stats import spearmanr

from stellar.analysis.calibration import calibrate, fit_weights, read_labels, spec_of
from stellar.config import load_config
from stellar.errors import ConfigError
from stellar.usecase import load_use_case

# (toy quality the judge sees, the two raters' verdicts); the oracle fails quality < 0.1
ROWS = [
    (0.05, "fail", "fail"),  # TP
    (0.05, "fail", "fail"),  # TP
    (0.05, "pass", "pass"),  # FP
    (0.50, "fail", "fail"),  # FN
    (0.50, "pass", "pass"),  # TN
    (0.90, "pass", "pass"),  # TN
    (0.90, "pass", "fail"),  # a tie: no majority, left out of P/R/F1
]


def labelled_toy(tmp_path: Path, rows=ROWS, extra: str = "") -> Path:
    folder = tmp_path / "toy"
    shutil.copytree(TOY, folder)
    lines = [
        {
            "id": f"row-{n}",
            "input": "I politely want a small circle",
            "answer": "here you go",
            "response_data": {"quality": quality},
            "labels": [{"rater": "a", "overall": a}, {"rater": "b", "overall": b}],
        }
        for n, (quality, a, b) in enumerate(rows)
    ]
    (folder / "labels.jsonl").write_text("\n".join(json.dumps(x) for x in lines) + "\n")
    with open(folder / "usecase.yaml", "a") as fh:
        fh.write("calibration:\n  labels: labels.jsonl\n  failure: {label: overall, value: fail}\n")
        fh.write(extra)
    return folder


def run_calibration(folder: Path):
    use_case = load_use_case(str(folder))
    spec = spec_of(use_case.calibration, folder)
    rows = read_labels(spec.labels)
    return asyncio.run(calibrate(load_config(str(folder)), spec, rows, "labels.jsonl"))


def test_binary_metrics_and_agreement_are_worked_out_right(tmp_path):
    report = run_calibration(labelled_toy(tmp_path))
    (judge,) = report.judges
    assert judge.confusion == [[2, 1], [1, 2]]  # [[TN, FP], [FN, TP]]
    assert judge.precision == pytest.approx(2 / 3) and judge.recall == pytest.approx(2 / 3)
    assert judge.f1 == pytest.approx(2 / 3)
    assert report.failures == 3 and report.raters == 2
    # quality against the share of raters who saw no failure, row by row
    expected = spearmanr([q for q, _, _ in ROWS], [0, 0, 1, 0, 1, 1, 0.5]).statistic
    assert judge.spearman["quality"] == pytest.approx(expected) and expected > 0
    # 6 of 7 rows agree, each value given 7 times: (6/7 - 1/2) / (1 - 1/2)
    assert report.kappa["overall"] == pytest.approx(5 / 7)


def test_a_post_search_judge_is_measured_too(tmp_path):
    folder = labelled_toy(tmp_path)
    path = folder / "usecase.yaml"
    oracle = "oracle:\n  below: {quality: 0.1}\n"
    assert oracle in path.read_text()
    strict = "  post_search: {target: toy:strict, below: {strict: 0.8}}\n"
    path.write_text(path.read_text().replace(oracle, oracle + strict))
    report = run_calibration(folder)
    names = [judge.name for judge in report.judges]
    assert names == ["search: toy:quality", "post-search: toy:strict"]
    strict = report.judges[1]
    assert strict.confusion == [[1, 2], [0, 3]]  # fails everything below 0.8
    assert strict.recall == 1.0 and strict.precision == pytest.approx(3 / 5)


def test_weights_are_refitted_from_the_raters_dimensions(tmp_path):
    rows = []
    for r in range(3):
        for d in range(3):
            fail = r < 2 or d == 0  # relevance decides most, directness a little
            rows.append({"R": r, "D": d, "overall": "fail" if fail else "pass"})
    folder = tmp_path / "weights"
    folder.mkdir()
    labels = [
        {"input": "x", "answer": "y", "labels": [{"rater": "a", **row}, {"rater": "b", **row}]}
        for row in rows * 3
    ]
    (folder / "labels.jsonl").write_text("\n".join(json.dumps(x) for x in labels))
    spec = spec_of(
        {
            "failure": {"label": "overall", "value": "fail"},
            "dimensions": ["R", "D"],
            "weights": {"score": "s", "current": {"R": 0.5, "D": 0.5}},
        },
        folder,
    )
    parsed = read_labels(folder / "labels.jsonl")
    truth = [row["overall"] == "fail" for row in rows * 3]
    weights = fit_weights(parsed, spec, truth)
    assert weights["current"] == {"R": 0.5, "D": 0.5}
    assert sum(weights["fitted"].values()) == pytest.approx(1.0)
    assert weights["fitted"]["R"] > 0 and weights["fitted"]["D"] > 0


def test_navi_calibration_on_the_shipped_labels():
    result = cli("calibrate", "navi")
    assert result.returncode == 0, result.stderr
    out = result.stdout
    assert "100 labelled answers" in out and "2 rater(s)" in out
    assert "Fleiss' kappa" in out and "search: navi" in out
    assert "weights fitted by logistic regression" in out and "(now 0.55)" in out


def test_bad_label_files_get_one_clear_message(tmp_path):
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"input": "x", "answer": "y"}\n')
    with pytest.raises(ConfigError, match=r"line 1.*labels"):
        read_labels(bad)
    result = cli("calibrate", "navi", "--labels", bad)
    assert result.returncode == 2 and "Traceback" not in result.stderr
    none = cli("calibrate", str(TOY))
    assert none.returncode == 2 and "declares no calibration" in none.stderr


def test_safety_calibration_measures_both_judges_on_the_shipped_labels(tmp_path):
    out = tmp_path / "calibration.json"
    result = cli("calibrate", "safety", "--json", out)
    assert result.returncode == 0, result.stderr
    report = json.loads(out.read_text())
    assert report["rows"] >= 100 and report["raters"] >= 2 and "verdict" in report["kappa"]
    names = [judge["name"] for judge in report["judges"]]
    assert names[:2] == ["search: safety-score", "post-search: safety-verdict"]
    assert any("detector" in name for name in names) and any("refusal" in name for name in names)
    for judge in report["judges"]:
        (tn, fp), (fn, tp) = judge["confusion"]
        assert tp + fn <= report["failures"] and tp + fp + fn + tn <= report["rows"]
        assert 0 < judge["f1"] <= 1 and "safety" in judge["spearman"]
        for name in ("precision", "recall", "f1"):  # a bootstrap interval around each
            low, high = judge["intervals"][name]
            assert 0 <= low <= judge[name] <= high <= 1


def test_binary_scores_count_failures_as_the_positive_class():
    from stellar.analysis.verdict_scores import binary_scores

    truth = [True, True, True, False, False]
    flagged = [True, True, False, True, False]
    assert binary_scores(truth, flagged) == pytest.approx((2 / 3, 2 / 3, 2 / 3))
    assert binary_scores([False, False], [False, False]) == (0.0, 0.0, 0.0)


def test_bootstrap_intervals_hold_the_estimate_and_narrow_with_more_answers():
    import numpy as np

    from stellar.analysis.verdict_scores import binary_scores, bootstrap_intervals

    rng = np.random.default_rng(3)
    widths = []
    for n in (60, 600):
        truth = rng.random(n) < 0.4
        flagged = truth ^ (rng.random(n) < 0.2)
        f1 = binary_scores(truth, flagged)[2]
        low, high = bootstrap_intervals(truth, flagged)["f1"]
        assert low < f1 < high
        widths.append(high - low)
    assert widths[1] < widths[0] / 2
