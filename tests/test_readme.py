"""The README's configuration example runs as written (against the served assistant)."""

import re
import threading
from pathlib import Path

from conftest import cli

from stellar.usecases.navi.server import build_server

README = Path(__file__).parents[1] / "README.md"


def test_the_configuration_example_runs_100_tests_with_few_discards(tmp_path, monkeypatch):
    section = README.read_text(encoding="utf-8").split("## Configuration", 1)[1]
    example = re.search(r"```yaml\n(.*?)```", section, re.DOTALL).group(1)
    server = build_server("127.0.0.1", 0)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        port = server.server_address[1]
        run = tmp_path / "run.yaml"
        run.write_text(example.replace("127.0.0.1:8000", f"127.0.0.1:{port}"))
        monkeypatch.setenv("MY_API_KEY", "anything")
        result = cli("run", run, "--quiet", "--show", "0", "--out", tmp_path)
    finally:
        server.shutdown()
    assert result.returncode == 0, result.stderr
    tests, duplicates, invalid = (
        int(re.search(rf"{word} (\d+)", result.stdout).group(1))
        for word in ("tests", "duplicates", "invalid")
    )
    # NSGA-II's offspring are close to their parents, and the realiser's wording is natural,
    # not noisy: about a quarter of the inputs are near-duplicates (MiniLM similarity >= 0.8)
    assert tests == 100 and (duplicates + invalid) / (tests + duplicates + invalid) < 0.3
    assert "errors 0 sut / 0 judge" in result.stdout
