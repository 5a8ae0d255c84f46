"""The built-in navigation use case through the command line."""

import json
import threading

import pytest
from conftest import cli

from stellar.archive import open_run
from stellar.usecases.navi.assistant import NavigationAssistant
from stellar.usecases.navi.server import make_server


def test_default_run_needs_no_arguments(tmp_path):
    result = cli("run", "--tests", "40", "--population", "10", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    [run_dir] = (tmp_path / "runs").iterdir()
    assert run_dir.name.startswith("navi-mode-balanced-s0-")  # navi's default search
    assert "tests 40" in result.stdout and str(run_dir.name) in result.stdout
    with open_run(run_dir) as archive:
        records = list(archive.records())
    executed = [r for r in records if r.executed]
    assert len(executed) == 40
    assert all(set(r.scores) == {"response", "content"} for r in executed)
    for record in records:
        if record.is_failure:
            assert min(record.scores.values()) < 0.75 and not record.excluded
    if any(r.is_failure for r in records):
        assert "Failure modes (largest first" in result.stdout


def test_run_on_real_multiwoz_venues(tmp_path):
    result = cli(
        "run",
        "--option",
        "pois=multiwoz",
        "--tests",
        "20",
        "--population",
        "10",
        "--seed",
        "2",
        cwd=tmp_path,
    )
    assert result.returncode == 0, result.stderr
    [run_dir] = (tmp_path / "runs").iterdir()
    with open_run(run_dir) as archive:
        addresses = [p["address"] for r in archive.records() for p in (r.response_data or [])]
    assert addresses and all("Cambridge" in a for a in addresses)


@pytest.fixture
def navi_server():
    server = make_server(0, "127.0.0.1", NavigationAssistant(max_pois=2))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield server
    server.shutdown()
    server.server_close()


def test_http_adapter_against_serve_navi(tmp_path, navi_server):
    port = navi_server.server_address[1]
    config = tmp_path / "http.yaml"
    config.write_text(
        "use_case: navi\n"
        "sut:\n  type: http\n"
        f"  url: http://127.0.0.1:{port}/query\n"
        "  body: {text: '{{input}}'}\n  answer: $.answer\n  data: $.pois\n"
    )
    result = cli("run", config, "--tests", "15", "--population", "5", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    [run_dir] = (tmp_path / "runs").iterdir()
    with open_run(run_dir) as archive:
        records = [r for r in archive.records() if r.executed]
    assert len(records) == 15
    assert all(r.status == "ok" for r in records)
    assert any(len(r.response_data) == 2 for r in records)
    saved = (run_dir / "config.yaml").read_text()
    assert f"127.0.0.1:{port}" in saved
    assert json.loads((run_dir / "summary.json").read_text())["tests"] == 15
