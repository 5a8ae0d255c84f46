import csv
import json

import pytest
from conftest import TOY, cli, stellar

from stellar.analysis.failure_modes import run_diversity
from stellar.cli import main


def test_run_prints_progress_summary_and_exports(tmp_path):
    result = cli("run", TOY / "run.yaml", "--tests", "60", "--out", tmp_path, "--seed", "3")
    assert result.returncode == 0, result.stderr
    out = result.stdout
    for word in (
        "tests 60",
        "failures",
        "ratio",
        "duplicates",
        "invalid",
        "errors",
        "time",
        "results:",
    ):
        assert word in out
    [run_dir] = list(tmp_path.iterdir())
    assert str(run_dir) in out.replace("\n", "")
    exported = cli("export", run_dir)
    assert exported.returncode == 0, exported.stderr
    rows = [json.loads(line) for line in (run_dir / "export" / "tests.jsonl").open()]
    assert len(rows) == 60
    with (run_dir / "export" / "tests.csv").open() as fh:
        table = list(csv.DictReader(fh))
    assert len(table) == 60 and "feature.color" in table[0] and "score.quality" in table[0]
    failures = [json.loads(line) for line in (run_dir / "export" / "failures.jsonl").open()]
    assert all(row["failed"] for row in failures)
    assert len(failures) == sum(row["failed"] for row in rows)
    with (run_dir / "export" / "failure_modes.csv").open() as fh:
        modes = list(csv.DictReader(fh))
    sizes = {row["mode"]: int(row["size"]) for row in modes}  # a row per example
    assert sum(sizes.values()) == len({row["input_text"] for row in failures})
    by_mode = {}  # failures.jsonl numbers modes as failure_modes.csv and the table do
    for row in failures:
        by_mode.setdefault(str(row["mode"]), set()).add(row["input_text"])
    assert {mode: len(inputs) for mode, inputs in by_mode.items()} == sizes
    assert {row["answer"] for row in modes} <= {row["response_text"] for row in failures}


def test_options_override_configuration(tmp_path):
    result = cli(
        "run",
        TOY / "run.yaml",
        "--tests",
        "25",
        "--out",
        tmp_path,
        "--algorithm",
        "random",
        "--population",
        "5",
        "--concurrency",
        "2",
    )
    assert result.returncode == 0, result.stderr
    [run_dir] = list(tmp_path.iterdir())
    assert "-random-" in run_dir.name
    saved = (run_dir / "config.yaml").read_text()
    assert "name: random" in saved and "population: 5" in saved and "concurrency: 2" in saved


@pytest.mark.parametrize(
    ("config", "expected"),
    [
        ("use_case: {toy}\nbudget: {{tests: -3}}\n", "budget.tests: Input should be greater"),
        ("use_case: {toy}\nalgoritm: {{name: random}}\n", "algoritm: unknown setting"),
        (
            "use_case: {toy}\noracle: {{target: 'toy:failing'}}\n",
            "oracle: set either 'below' or 'target', not both",
        ),
        ("use_case: {toy}\nfeatures: missing.yaml\n", "missing.yaml: file not found"),
        ("use_case: nowhere\n", "nowhere: no such use case"),
        ("use_case: {toy}\nsut: {{type: python, target: 'toy:nothing'}}\n", "has no 'nothing'"),
        ("use_case: [unclosed\n", "not valid YAML at line"),
        (
            "use_case: {toy}\nalgorithm: {{population: 1}}\n",
            "algorithm.population: Input should be greater than or equal to 2",
        ),
        ("use_case: {toy}\nbudget: 5\n", "budget: expected a mapping"),
        ("use_case: {toy}\nimport_paths: 3\n", "import_paths: expected a list"),
    ],
)
def test_malformed_configuration_exits_2_with_one_line(tmp_path, config, expected):
    path = tmp_path / "bad.yaml"
    path.write_text(config.format(toy=TOY))
    result = cli("run", path, "--out", tmp_path / "runs")
    assert result.returncode == 2
    assert "Traceback" not in result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("stellar: error: ") and expected in lines[0], lines[0]


def test_malformed_feature_file_exits_2(tmp_path):
    """Through `python -m stellar.cli` in a fresh interpreter: the entry point's exit code, and
    nothing else (no warning of an import) on standard error."""
    features = tmp_path / "f.yaml"
    features.write_text(
        "features:\n  - {name: a, kind: content, values: [x]}\n"
        "constraints:\n  - {when: {b: x}, set: {a: x}}\n"
    )
    config = tmp_path / "c.yaml"
    config.write_text(f"use_case: {TOY}\nfeatures: f.yaml\n")
    result = stellar("run", config, "--out", tmp_path / "runs")
    assert result.returncode == 2
    assert result.stderr.strip() == (
        f"stellar: error: {features}: constraints[0].when.b: unknown feature 'b' (known: a)"
    )


def test_bad_option_values_exit_2(capsys):
    with pytest.raises(SystemExit) as info:
        main(["run", "--time", "soon"])
    assert info.value.code == 2
    assert "not a duration" in capsys.readouterr().err


def test_export_of_a_folder_that_is_no_run_exits_2(tmp_path, capsys):
    assert main(["export", str(tmp_path)]) == 2
    assert "not a run directory" in capsys.readouterr().err


def test_help_explains_every_option():
    result = cli("run", "--help")
    assert result.returncode == 0
    for option in (
        "--algorithm",
        "--seed",
        "--tests",
        "--time",
        "--out",
        "--concurrency",
        "--population",
        "--fail-on-failures",
    ):
        assert option in result.stdout


def test_fail_on_failures_exit_code(tmp_path):
    result = cli(
        "run",
        TOY / "run.yaml",
        "--tests",
        "200",
        "--out",
        tmp_path,
        "--fail-on-failures",
        "--quiet",
    )
    assert result.returncode == 1
    run_dir = next(tmp_path.iterdir())
    modes, pairs, valid = run_diversity(run_dir)
    assert f"Failure modes (largest first, {min(10, modes)} of {modes};" in result.stdout
    assert modes >= 1 and 0 < pairs <= valid
    lead = result.stdout.split("Stopped:", 1)[1].splitlines()[1]  # modes come first
    assert lead.startswith(f"found: {modes} failure mode")
    assert lead.endswith(f"{pairs} of {valid} 2-way feature pairs among the failures")


def test_override_into_a_non_mapping_setting_exits_2(tmp_path, capsys):
    path = tmp_path / "bad.yaml"
    path.write_text(f"use_case: {TOY}\nalgorithm: random\n")
    assert main(["run", str(path), "--population", "5", "--out", str(tmp_path)]) == 2
    assert (
        capsys.readouterr().err.strip() == f"stellar: error: {path}: algorithm: expected a mapping"
    )
