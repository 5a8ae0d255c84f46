"""Bad input ends in one line ``stellar: error: ...`` and exit code 2: never a traceback, a
hang or silent acceptance; a secret is never echoed or written into a run directory."""

from __future__ import annotations

import contextlib
import io
import os
import re
import sys
from pathlib import Path

import pytest
import yaml
from conftest import TOY

from stellar.cli.main import main
from stellar.config import load_config
from stellar.llm.models import hide
from stellar.yaml_loading import MAX_BYTES

BASE = f"use_case: {TOY}\nduplicates: {{embedder: none}}\nbudget: {{tests: 3}}\n"
BOMB = "\n".join(
    [
        'a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]',
        *(
            f"{c}: &{c} [{','.join([f'*{p}'] * 9)}]"
            for p, c in zip("abcdefgh", "bcdefghi", strict=True)
        ),
    ]
)


LEFT_BEHIND = re.compile(r"-{40}\nException occurred during processing.*?-{40}\n", re.S)


def fails(capsys, *args: object) -> str:
    """Run the command line in process; it must end with exit 2 and one error line.

    stderr is taken only while the command runs (not a thread another test left behind)."""
    capsys.readouterr()
    stderr = io.StringIO()
    with contextlib.redirect_stderr(stderr):
        try:
            code = main([str(a) for a in args])
        except SystemExit as exc:  # argparse's usage errors
            code = exc.code
    # a test server another test left behind may report a dropped client meanwhile
    err = LEFT_BEHIND.sub("", stderr.getvalue())
    assert code == 2, err
    assert "Traceback" not in err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("stellar: error: "), err
    return lines[0]


@pytest.fixture
def config(tmp_path):
    """Write a run configuration: the toy use case plus ``extra`` YAML."""

    def write(extra: str = "", name: str = "run.yaml") -> Path:
        path = tmp_path / name
        path.write_text(BASE + extra, encoding="utf-8")
        return path

    return write


def test_a_folder_that_is_no_use_case(tmp_path, capsys):
    (tmp_path / "somedir").mkdir()
    line = fails(capsys, "run", tmp_path / "somedir", "--dry-run")
    assert "a folder, not a YAML file" in line


@pytest.mark.parametrize(
    "content", [b"\x00\xff\xfe binary", "use_case: caf\xe9\n".encode("latin-1")]
)
def test_a_binary_or_latin1_configuration(tmp_path, capsys, content):
    path = tmp_path / "bad.yaml"
    path.write_bytes(content)
    assert "not UTF-8 text" in fails(capsys, "run", path, "--dry-run")


def test_a_binary_feature_file(tmp_path, capsys, config):
    (tmp_path / "f.yaml").write_bytes(b"\x00\xff\xfe")
    line = fails(capsys, "run", config("features: f.yaml\n"), "--dry-run")
    assert "f.yaml: not UTF-8 text" in line


def test_features_naming_a_folder(tmp_path, capsys, config):
    (tmp_path / "folder").mkdir()
    line = fails(capsys, "run", config("features: folder\n"), "--dry-run")
    assert "folder: a folder, not a YAML file" in line


def test_yaml_nested_5000_levels(capsys, config):
    line = fails(capsys, "run", config("x: " + "[" * 5000 + "]" * 5000 + "\n"), "--dry-run")
    assert "nested deeper than 100 levels at line 4" in line


def test_an_alias_bomb_is_refused(capsys, config):
    extra = "sut:\n  target: toy:answer\n  options:\n    junk:\n"
    extra += "".join(f"      {line}\n" for line in BOMB.splitlines())
    line = fails(capsys, "run", config(extra), "--dry-run")
    assert "values once aliases are expanded" in line


def test_a_file_over_the_size_limit(tmp_path, capsys):
    path = tmp_path / "big.yaml"
    path.write_text("# " + "x" * MAX_BYTES + "\n")
    assert "larger than 10 MB" in fails(capsys, "run", path, "--dry-run")


def test_duplicate_keys_name_the_key_and_the_line(capsys, config):
    line = fails(capsys, "run", config("seed: 1\nseed: 2\n"), "--dry-run")
    assert "duplicate key 'seed' at line 5 (first at line 4)" in line


def test_a_set_value_goes_through_the_same_loader(capsys):
    line = fails(capsys, "run", "--set", "sut={a: 1, a: 2}", "--dry-run")
    assert "duplicate key 'a'" in line


@pytest.mark.parametrize("flag", ["--seed", "--set"])
def test_a_seed_beyond_what_numpy_takes(capsys, config, flag):
    seed = "99999999999999999999999"
    value = [flag, seed] if flag == "--seed" else [flag, f"seed={seed}"]
    line = fails(capsys, "run", config(), *value, "--dry-run")
    assert "4,294,967,295" in line or "less than or equal to 4294967295" in line


def test_out_naming_a_file(tmp_path, capsys, config):
    (tmp_path / "taken").write_text("")
    assert "exists and is not a folder" in fails(capsys, "run", config(), "--out", os.devnull)
    line = fails(capsys, "run", config(f"out: {tmp_path / 'taken'}\n"), "--tests", "2")
    assert "out: " in line and "exists and is not a folder" in line


@pytest.mark.skipif(not Path("/proc/self").exists(), reason="needs /proc")
def test_out_under_proc(capsys, config):
    assert "/proc" in fails(capsys, "run", config(), "--out", "/proc/stellar-runs", "--quiet")


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ("raise RuntimeError('boom at import')\n", "failed: RuntimeError: boom at import"),
        ("def answer(:\n", "has a syntax error"),
    ],
)
def test_a_target_module_that_fails_to_import(tmp_path, capsys, config, source, expected):
    module = f"broken_{tmp_path.name.replace('-', '_')}"
    (tmp_path / f"{module}.py").write_text(source)
    line = fails(capsys, "run", config(f"sut: {{target: '{module}:answer'}}\n"), "--dry-run")
    assert expected in line
    sys.modules.pop(module, None)


@pytest.mark.parametrize("name", ["bogus", "nowhere_module:Embedder"])
def test_a_bogus_duplicates_embedder(capsys, config, name):
    line = fails(capsys, "run", config(), "--set", f"duplicates.embedder={name}", "--dry-run")
    assert "duplicates.embedder" in line


def test_export_of_a_file(capsys, config):
    assert "not a run directory" in fails(capsys, "export", config())


def test_export_of_a_corrupt_archive(tmp_path, capsys):
    (tmp_path / "archive.sqlite").write_text("garbage")
    assert "not an SQLite database" in fails(capsys, "export", tmp_path)
    assert not (tmp_path / "export").exists()


def test_compare_checks_the_embedder_before_any_run(tmp_path, capsys, config):
    out = tmp_path / "experiment"
    line = fails(capsys, "compare", config(), "--embedder", "bogus", "--out", out)
    assert "--embedder: unknown embedder 'bogus'" in line
    assert not out.exists()


@pytest.mark.parametrize("flags", [["--tests", "-5"], ["--repeats", "0"], ["--seeds", "0"]])
def test_compare_checks_its_flags_before_writing(tmp_path, capsys, config, flags):
    out = tmp_path / "experiment"
    fails(capsys, "compare", config(), *flags, "--algorithms", "random", "--out", out)
    assert not out.exists()


def test_compare_checks_budgets_in_the_configuration_before_writing(tmp_path, capsys, config):
    out = tmp_path / "experiment"
    line = fails(capsys, "compare", config(), "--time", "0", "--out", out)
    assert "budget.time" in line and not out.exists()


def test_a_huge_population_is_refused_not_run(capsys, config):
    line = fails(capsys, "run", config("algorithm: {population: 1000000000000}\n"), "--tests", "3")
    assert "algorithm.population" in line
    line = fails(capsys, "run", config("algorithm: {random: {population: 1000000000000}}\n"))
    assert "population: at most 100,000" in line


@pytest.mark.parametrize("name", ["../../x", "a/b", "..", "a\\\\b", " padded"])
def test_a_run_name_is_a_plain_name(tmp_path, capsys, config, name):
    line = fails(capsys, "run", config(f'name: "{name}"\n'), "--out", tmp_path / "runs")
    assert "name: a run name must be a plain name" in line
    assert not (tmp_path / "runs").exists()


def test_show_must_not_be_negative(capsys, config):
    assert "--show -1: must be at least 0" in fails(capsys, "run", config(), "--show", "-1")


def test_twise_strength_is_bounded(capsys, config):
    line = fails(capsys, "run", config("algorithm: {name: twise, strength: 100}\n"), "--dry-run")
    assert "algorithm.twise.strength" in line


def test_usage_errors_are_one_line(capsys):
    assert "invalid int value" in fails(capsys, "run", "--seed", "abc")
    assert "invalid choice" in fails(capsys, "bogus")


# ---------------------------------------------------------------------------------- secrets

KEY = "sk-proj-abcdefghijklmnopqrstuvwxyz0123456789"


def test_a_key_pasted_into_api_key_env_is_not_echoed(capsys, config):
    extra = (
        f"llm: {{endpoints: {{openai: {{api_key_env: {KEY}}}}}}}\n"
        "generator: {type: llm, model: 'openai:gpt-4o-mini'}\n"
    )
    line = fails(capsys, "run", config(extra), "--dry-run")
    assert "api_key_env" in line and "'sk-…'" in line and KEY[3:] not in line


@pytest.mark.parametrize(
    ("header", "value"),
    [
        ("Authorization", f"Bearer {KEY}"),
        ("x-api-key", KEY),
        ("X-Auth-Token", "abc123"),
        ("Authorization", "Bearer ${TOKEN} extra"),
    ],
)
def test_a_credential_in_headers_is_refused(capsys, config, header, value):
    extra = f"sut: {{type: http, url: 'http://localhost:9/x', headers: {{{header}: '{value}'}}}}\n"
    line = fails(capsys, "run", config(extra), "--dry-run")
    assert f"sut.headers.{header}: a credential" in line and "${" in line
    assert value not in line


def test_config_yaml_keeps_the_env_reference(monkeypatch, config):
    monkeypatch.setenv("STELLAR_TEST_TOKEN", KEY)
    extra = (
        "sut: {type: http, url: 'http://localhost:9/x', "
        "headers: {Authorization: 'Bearer ${STELLAR_TEST_TOKEN}', Accept: text/plain}}\n"
    )
    cfg = load_config(config(extra))
    written = yaml.safe_dump(cfg.model_dump(mode="json"))  # as run.py writes config.yaml
    assert "Bearer ${STELLAR_TEST_TOKEN}" in written and KEY not in written


def test_a_key_echoed_by_a_server_is_hidden():
    assert hide(f"Incorrect API key provided: {KEY}.", KEY) == "Incorrect API key provided: sk-…."


def test_export_data_to_a_file_that_cannot_be_written(tmp_path, capsys):
    (tmp_path / "folder").mkdir()
    for target in (f"{os.devnull}/x.json", tmp_path / "folder"):
        assert "cannot be written" in fails(capsys, "export-data", "navi", target)
