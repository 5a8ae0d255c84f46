"""Fuzz the command line: generated YAML as the configuration file and generated arguments,
through the real entry point. Whatever comes in, the command ends with a documented exit code
(0 done, 1 failures with --fail-on-failures, 2 a user's error in one line, 3 not healthy),
never with an exception escaping ``main`` and never after a long time."""

from __future__ import annotations

import contextlib
import copy
import io
import os
import time
from pathlib import Path

import yaml
from conftest import TOY
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from stellar.cli.main import main

SECONDS = 30  # one command, at most

odd_text = st.text(
    st.characters(codec=None, exclude_categories=()),  # NUL, controls, lone surrogates
    max_size=12,
)
numbers = st.one_of(
    st.integers(-3, 30),
    st.sampled_from([0, -1, 2**32, 2**63, 10**30, -(10**30)]),
    st.floats(allow_nan=True, allow_infinity=True),
)
scalars = st.one_of(st.none(), st.booleans(), numbers, odd_text, st.sampled_from(["", "~", "*"]))
values = st.recursive(
    scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4),
        st.dictionaries(st.one_of(odd_text, numbers), inner, max_size=4),
    ),
    max_leaves=12,
)
FEATURES = yaml.safe_load((TOY / "features.yaml").read_text())
# settings and values near the valid ones, so that many generated runs really run
PLAUSIBLE: dict[str, st.SearchStrategy] = {
    "name": st.sampled_from(["toy", "../x", "a/b", "a b", "..", "x" * 300, "ü"]),
    "seed": st.integers(-1, 2**33),
    "out": st.sampled_from(["runs", "sub/runs", "", os.devnull, "config.yaml"]),
    "features": st.sampled_from(
        ["features.yaml", "features.yaml", "missing.yaml", ".", FEATURES["features"][:2], []]
    ),
    "concurrency": st.integers(-1, 2000),
    "sut_timeout": st.sampled_from([0.001, 1, -1, float("inf")]),
    "import_paths": st.sampled_from([[], ["."], "x", [1]]),
    "usecase": st.sampled_from([{}, {"nope": 1}, []]),
    "use_case": st.sampled_from([str(TOY), "nowhere", "navi", ""]),
    "sut": st.sampled_from(
        [
            {"target": "toy:answer"},
            {"target": "toy:nothing"},
            {"target": "os:system"},
            {"type": "http", "url": "ftp://x"},
            {"type": "http", "url": "http://127.0.0.1:9/", "headers": {"Authorization": "x"}},
            {"type": "chat", "model": "openai:gpt-4o-mini"},
            {"type": "nope"},
        ]
    ),
    "generator": st.sampled_from(
        [
            {"target": "toy:describe"},
            {"type": "template"},
            {"type": "llm", "model": "bad"},
            *(
                {"type": "llm", "model": "openai:m", "template": t, "examples": t}
                for t in ("features.yaml", "missing.j2", ".", "config.yaml")
            ),
        ]
    ),
    "response_schema": st.sampled_from(["missing.json", "features.yaml", ".", os.devnull]),
    "algorithm.name": st.sampled_from(
        ["random", "twise", "stellar", "diverse", "astral", "map-elites", "x:y", "os:path"]
    ),
    "algorithm.population": st.one_of(st.integers(-1, 40), st.just(10**12)),
    "algorithm.twise.strength": st.integers(-1, 10),
    "algorithm.stellar.mutation": st.floats(-1, 2),
    "algorithm.random.population": st.sampled_from([1, 0, 10**9]),
    "budget.tests": st.integers(-1, 5),
    "budget.time": st.sampled_from(["1s", "2h", 0.5, -1, "soon", float("nan")]),
    "budget.cost": st.sampled_from([0, 1, -1]),
    "budget.max_discarded": st.integers(-1, 3),
    "duplicates.embedder": st.sampled_from(["none", "hashing", "bogus", "x.y:z", ""]),
    "duplicates.threshold": st.floats(allow_nan=True),
    "judge.votes": st.sampled_from([1, 2, 3, 101]),
    "oracle.below": st.sampled_from([{"quality": 0.5}, {"quality": 2}, {}, {"nope": 0.5}]),
    "fitness.objectives": st.sampled_from([["quality"], [], ["nope"], "quality"]),
    "llm.endpoints": st.sampled_from(
        [{"openai": {"api_key_env": "sk-abc123"}}, {"openai": {"rpm": 0}}, {"x": 1}]
    ),
    "llm.prices": st.sampled_from([{"m": [1, 2]}, {"m": [1]}, {"m": "x"}]),
}
SOURCES = ["offline", "openai:gpt-4o-mini", "bad", "openai-compatible:m@ftp://x"]
RAW = [
    "a: &a [1, 2]\nb: [*a, *a]\n",
    "x: &x [1, *x]\n",
    "x: *nowhere\n",
    "seed: 1\nseed: 2\n",
    '"\\ud800": "\\udfff\\0"\n',
    "[" * 150 + "]" * 150,
    "!!python/object/apply:os.system [echo]\n",
    "a: !!binary aGVsbG8=\n",
    "<<: {seed: 1}\n",
    "\t- bad indent\n",
    "%YAML 1.1\n---\n--- second document\n",
]


@st.composite
def configurations(draw) -> str:
    """The toy configuration with up to three settings replaced, a random structure, or odd
    YAML text (aliases, duplicate keys, escapes, deep nesting, unsafe tags)."""
    kind = draw(st.sampled_from(["mutated"] * 4 + ["random", "raw"]))
    if kind == "raw":
        return draw(st.sampled_from(RAW)) + draw(st.sampled_from(["", f"use_case: {TOY}\n"]))
    if kind == "random":
        data = draw(values)
    else:
        data = {"use_case": str(TOY), "duplicates": {"embedder": "none"}}
        if draw(st.booleans()):
            data["features"] = "features.yaml"  # the generated feature file
        if draw(st.booleans()):
            data["use_case"] = "uc"  # the generated use case
        for _ in range(draw(st.integers(0, 3))):
            dotted = draw(st.sampled_from(sorted(PLAUSIBLE)))
            *parents, last = dotted.split(".")
            section = data
            for key in parents:
                section = section.setdefault(key, {})
            section[last] = draw(st.one_of(PLAUSIBLE[dotted], PLAUSIBLE[dotted], values))
    return yaml.safe_dump(data, allow_unicode=False)  # odd characters as escapes


flags = st.lists(
    st.one_of(
        st.tuples(
            st.sampled_from(["--seed", "--population", "--concurrency", "--show"]),
            st.one_of(st.integers(-3, 40), st.sampled_from([2**32, 10**25])).map(str),
        ).map(lambda pair: ("=".join(pair),)),
        st.tuples(st.sampled_from(["--algorithm"]), st.sampled_from(["random", "twise", "x:y"])),
        st.tuples(st.sampled_from(["--set", "--option"]), odd_text.map(lambda t: f"k{t}={t}")),
        st.tuples(st.just("--option"), st.sampled_from(["colour=blue", "colour=[1]", "x=1"])),
        st.tuples(st.sampled_from(["--set"]), st.sampled_from(["seed=-1", "name=a/b", "sut=~"])),
        st.tuples(st.sampled_from(["--max-error-rate", "--max-cost"]), numbers.map(str)).map(
            lambda pair: ("=".join(pair),)
        ),
        st.tuples(st.sampled_from(["--time"]), st.sampled_from(["0", "1s", "nan", "5x"])),
        st.tuples(st.just("--sut"), st.sampled_from(["toy:answer", "offline", "x", "a:b"])),
        st.tuples(st.just("--sut"), st.sampled_from(["http://127.0.0.1:9/", "openai:m"])),
        st.tuples(st.sampled_from(["--generator", "--judge"]), st.sampled_from(SOURCES)),
    ),
    max_size=3,
)


@st.composite
def feature_files(draw) -> str:
    """The toy feature file with a feature's setting or the constraints replaced."""
    data = copy.deepcopy(FEATURES)
    for _ in range(draw(st.integers(0, 2))):
        if draw(st.booleans()):
            feature = draw(st.sampled_from(data["features"]))
            key = draw(st.sampled_from(["name", "kind", "values", "ordinal", "extra"]))
            feature[key] = draw(st.one_of(values, st.lists(scalars, max_size=3)))
        else:
            rule = {"when": {"shape": draw(values)}, "set": {draw(odd_text): draw(scalars)}}
            data["constraints"] = draw(st.sampled_from([[rule], draw(values)]))
    return yaml.safe_dump(data, allow_unicode=False)


USE_CASE = {
    **yaml.safe_load((TOY / "usecase.yaml").read_text()),
    "features": str(TOY / "features.yaml"),
    "options": {"colour": {"default": "red", "description": "an option"}},
}
USE_CASE_KEYS = {
    "name": st.sampled_from(["uc", "../up", ""]),
    "options": st.sampled_from([{}, {"o": {"default": 1}}, {"o": 1}, {"o": {"bad": 1}}, [1]]),
    "serve": st.sampled_from(["toy:answer", 3]),
    "export": st.sampled_from(["nowhere:f", ["x"]]),
    "response": st.sampled_from([{}, {"answer": "$.a"}, {"bogus": 1}, {"schema": "none.json"}]),
    "calibration": st.sampled_from([{}, {"labels": "l.jsonl"}, "x"]),
    "description": odd_text,
    "features": st.sampled_from(["features.yaml", "nope.yaml"]),
}


@st.composite
def use_cases(draw) -> str:
    """The toy use case with own keys (options, serve, response, ...) replaced."""
    data = copy.deepcopy(USE_CASE)
    for key in draw(st.lists(st.sampled_from(sorted(USE_CASE_KEYS)), max_size=2)):
        data[key] = draw(st.one_of(USE_CASE_KEYS[key], values))
    return yaml.safe_dump(data, allow_unicode=False)


@st.composite
def command_lines(draw, config: Path, out: Path) -> list[str]:
    """``stellar run CONFIG`` with generated flags, a tiny test budget, runs under ``out``."""
    args = ["run", str(config)]
    for pair in draw(flags):
        args.extend(pair)
    if draw(st.booleans()):
        args.append("--dry-run")
    if draw(st.booleans()):
        args.append("--fail-on-failures")
    tests = draw(st.sampled_from(["2"] * 6 + ["-1", "0", "1"]))
    return [*args, "--tests", tests, "--quiet", "--show", "1", "--out", str(out)]


def run(args: list[str]) -> tuple[int, str]:
    """The exit code and stderr of the command; an exception escaping main fails the test."""
    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        try:
            code = main(args)
        except SystemExit as exc:  # argparse's usage errors
            code = exc.code
    return code, err.getvalue()


def test_generated_configurations_and_flags_end_cleanly(tmp_path, monkeypatch):
    root = tmp_path
    for name in ("OPENAI_API_KEY", "AZURE_OPENAI_API_KEY", "OLLAMA_HOST"):
        monkeypatch.delenv(name, raising=False)  # nothing generated may reach a real model
    monkeypatch.chdir(root)  # a relative path anywhere in a configuration stays in the sandbox
    config, out = root / "config.yaml", root / "runs"
    (root / "uc").mkdir()

    @settings(
        max_examples=int(os.environ.get("FUZZ_EXAMPLES", "100")),
        deadline=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    )
    @given(configurations(), feature_files(), use_cases(), command_lines(config, out))
    def check(text: str, features: str, use_case: str, args: list[str]) -> None:
        config.write_text(text, encoding="utf-8")
        (root / "features.yaml").write_text(features, encoding="utf-8")
        (root / "uc" / "usecase.yaml").write_text(use_case, encoding="utf-8")
        began = time.monotonic()
        code, err = run(args)
        assert time.monotonic() - began < SECONDS, args
        assert "Traceback" not in err
        allowed = {0, 2, 3} | ({1} if "--fail-on-failures" in args else set())
        assert code in allowed, (code, err)
        if code == 2:
            lines = err.strip().splitlines()
            assert len(lines) == 1 and lines[0].startswith("stellar: error: "), err

    check()
