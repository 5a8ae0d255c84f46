"""The command line's model options: choices, dry runs, and model errors as exit code 2."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import TOY, cli

from stellar.config import load_config
from stellar.config_sut import sut_setting
from stellar.errors import ConfigError
from stellar.llm.stub_server import StubLLMServer

FIXTURE = Path(__file__).parents[1] / "fixtures" / "llm"


def no_keys() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if not k.endswith("API_KEY")}


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("openai:gpt-4o-mini", {"type": "chat", "model": "openai:gpt-4o-mini"}),
        ("http://localhost:8000/query", {"type": "http", "url": "http://localhost:8000/query"}),
        ("my_app.bot:answer", {"type": "python", "target": "my_app.bot:answer"}),
        ("offline", "offline"),
    ],
)
def test_sut_choices(text, expected):
    assert sut_setting(text) == expected


def test_sut_choice_rejects_nonsense():
    with pytest.raises(ValueError, match="not a system under test"):
        sut_setting("chatbot")


def test_generator_and_judge_from_the_command_line_use_the_use_case_prompt():
    config = load_config(
        None, {"generator": {"type": "llm", "model": "ollama:llama3.1"}, "judge.model": "ollama:x"}
    )
    generator = config.generator.options
    assert config.generator.type == "llm" and generator["temperature"] == 0.2
    assert generator["template"].name == "generator.j2" and generator["template"].exists()
    assert generator["examples"].exists()
    assert config.judge.model == "ollama:x"
    offline = load_config(None, {"generator": "offline", "sut": "offline"})
    assert offline.generator.type == "navi" and offline.sut.type == "navi"


def test_bad_model_in_configuration_is_a_config_error():
    with pytest.raises(ConfigError, match=r"judge\.model.*not a model name"):
        load_config(None, {"judge.model": "gpt-4o"})
    with pytest.raises(ConfigError, match="votes must be odd"):
        load_config(None, {"judge.votes": 2})


def test_dry_run_estimates_without_keys_or_requests(tmp_path):
    result = cli(
        "run",
        "--generator",
        "openai:gpt-4o-mini",
        "--judge",
        "openai:gpt-4o-mini",
        "--set",
        "sut.llm=ollama:llama3.1",  # the built-in assistant answers with the model
        "--tests",
        "500",
        "--out",
        tmp_path / "runs",
        "--dry-run",
        env=no_keys(),
    )
    assert result.returncode == 0, result.stderr
    out = result.stdout
    assert "estimated model use for 500 tests" in out
    for role in ("generator", "sut", "judge"):
        assert role in out
    assert "total cost: about $" in out
    assert not (tmp_path / "runs").exists()  # nothing was run


def test_offline_dry_run_says_it_costs_nothing():
    result = cli("run", "--dry-run")
    assert result.returncode == 0 and "no model is configured" in result.stdout


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--sut", "chatbot"], "not a system under test"),
        (["--generator", "gpt-4o"], "give a model such as openai:gpt-4o-mini"),
        (["--judge", "openai:gpt-4o-mini"], "takes no LLM judge"),
        (["--set", "judge"], "write KEY=VALUE"),
        (["--sut", "openai:gpt-4o-mini"], "OPENAI_API_KEY, which is not set"),
        (
            [
                "--max-cost",
                "1",
                "--sut",
                "azure:dep",
                "--set",
                "llm.endpoints.azure.base_url=http://x",
            ],
            "no price for azure:dep",
        ),
    ],
)
def test_mistakes_are_one_line_with_exit_code_2(args, message, tmp_path):
    env = {**no_keys(), "AZURE_OPENAI_API_KEY": "k"}
    result = cli("run", TOY / "run.yaml", "--out", tmp_path, *args, env=env)
    assert result.returncode == 2, result.stderr
    assert message in result.stderr and "Traceback" not in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1


def test_refused_key_ends_the_run_with_exit_code_2(tmp_path):
    with StubLLMServer() as server:
        result = cli(
            "run",
            FIXTURE / "run.yaml",
            "--out",
            tmp_path / "runs",
            "--quiet",
            "--no-cache",
            "--generator",
            f"openai-compatible:gen@{server.url}",
            env={**os.environ, "STELLAR_TEST_KEY": "wrong"},
        )
    assert result.returncode == 2
    assert "refused the API key (HTTP 401)" in result.stderr
    assert "Traceback" not in result.stderr
    assert "Stopped: model error" in result.stdout
    assert list((tmp_path / "runs").glob("*/archive.sqlite"))  # what finished is kept


def test_set_null_clears_a_budget_and_a_new_python_sut_drops_old_options():
    config = load_config(
        None, {"sut": sut_setting("toy:answer")}, {"budget.tests": None, "budget.time": 60}
    )
    assert config.budget.tests is None and config.budget.time == 60
    assert config.sut.target == "toy:answer" and config.sut.options == {}  # no 'pois'
    chat = load_config(TOY / "run.yaml", {"sut": {"type": "chat", "model": "ollama:a"}})
    again = load_config(
        TOY / "run.yaml",
        {"sut": {"type": "chat", "model": "ollama:b"}},
        {"sut.system_prompt": "Be brief."},
    )
    assert chat.sut.options["model"] == "ollama:a"
    assert again.sut.options["system_prompt"] == "Be brief."


def test_the_stub_from_the_readme_takes_the_cli_requests_without_a_key(tmp_path):
    stub = subprocess.Popen(
        [sys.executable, "-m", "stellar.llm.stub_server", "--delay", "0.01"],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        url = stub.stdout.readline().strip()
        model = f"openai-compatible:stub@{url}"
        env = {k: v for k, v in os.environ.items() if not k.endswith("API_KEY")}
        result = cli(
            "run", "--set", f"sut.llm={model}", "--judge", model, "--tests", "5", "--quiet",
            "--out", tmp_path, "--no-cache", env=env,
        )  # fmt: skip
        assert result.returncode == 0, result.stderr
        assert re.search(r"tests 5  verdicts \d", result.stdout), result.stdout
    finally:
        stub.terminate()
        stub.wait(timeout=10)
