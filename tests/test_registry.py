"""The plugin registry: built-ins and installed plugins listed, found and checked alike."""

import os
import re
import sys

import pytest
from conftest import TOY, cli, stellar

from stellar.cli import main
from stellar.errors import StellarError
from stellar.registry import KINDS, check_options, plugins, resolve

PLUGIN = '''
"""A third-party plugin package, as a user would install it."""
import random

from pydantic import BaseModel, ConfigDict, Field


class StrideSearch:
    """Random batches, skipping ``stride`` draws between candidates."""

    class Options(BaseModel):
        model_config = ConfigDict(extra="forbid")
        population: int = 5
        stride: int = Field(1, ge=1, description="draws skipped between candidates")

    def __init__(self, space, n_objectives=1, seed=0, population=5, stride=1):
        self.space, self.rng = space, random.Random(seed)
        self.population, self.stride = population, stride

    def ask(self):
        batch = []
        for _ in range(self.population):
            for _ in range(self.stride - 1):
                self.space.random_values(self.rng)
            batch.append(self.space.candidate(self.space.random_values(self.rng)))
        return batch

    def tell(self, candidates, scores):
        pass


def shout(candidate, rng, suffix="!"):
    """Every feature value in capitals."""
    return " ".join(str(v).upper() for v in candidate.values.values()) + suffix
'''


@pytest.fixture
def installed(tmp_path):
    """A package with entry points in a folder on PYTHONPATH (what pip install leaves)."""
    site = tmp_path / "site"
    (site / "stellar_extra").mkdir(parents=True)
    (site / "stellar_extra" / "__init__.py").write_text(PLUGIN)
    info = site / "stellar_extra-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: stellar-extra\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text(
        "[stellar.algorithm]\nstride = stellar_extra:StrideSearch\n\n"
        "[stellar.generator]\nshout = stellar_extra:shout\n\n"
        "[stellar.sut]\nbroken = stellar_extra_gone:Nothing\n"
    )
    return {**os.environ, "PYTHONPATH": os.pathsep.join([str(site), *sys.path])}


def test_list_shows_every_built_in_with_its_options():
    result = cli("list")
    assert result.returncode == 0, result.stderr
    for kind in KINDS:
        assert f"{kind} - " in result.stdout
        for name in plugins(kind):
            assert re.search(rf"^  {re.escape(name)}\b", result.stdout, re.MULTILINE), name
    assert "mutation: default 0.07 - per-feature mutation probability" in result.stdout
    assert "--option pois=...  default 'generated'" in result.stdout


def test_an_installed_plugin_is_listed_and_runs_with_its_own_options(installed, tmp_path):
    """In fresh interpreters: entry points are found on the path a process starts with."""
    listing = stellar("list", env=installed)
    assert listing.returncode == 0, listing.stderr
    assert "stride  Random batches, skipping" in listing.stdout
    assert "broken  cannot be loaded: sut 'broken': cannot import" in listing.stdout
    assert "  http  An HTTP endpoint" in listing.stdout  # one broken plugin hides nothing
    assert "stride: default 1 - draws skipped between candidates" in listing.stdout
    args = ["run", TOY / "run.yaml", "--algorithm", "stride", "--tests", "12", "--quiet"]
    ran = stellar(
        *args,
        "--set",
        "algorithm.stride.stride=3",
        "--set",
        "generator={type: shout, suffix: '?'}",
        "--out",
        tmp_path / "runs",
        env=installed,
    )
    assert ran.returncode == 0, ran.stderr
    assert "tests 12" in ran.stdout
    config = next((tmp_path / "runs").glob("*/config.yaml")).read_text()
    assert "stride:\n    stride: 3" in config and "suffix: '?'" in config
    typo = stellar(*args, "--set", "algorithm.stride.strid=3", env=installed)
    assert typo.returncode == 2
    assert typo.stderr.strip().splitlines() == [
        f"stellar: error: {TOY / 'run.yaml'}: algorithm.stride.strid: algorithm 'stride' has no "
        "option 'strid' (options: population, stride)"
    ]


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (["--set", "algorithm.stellar.mutaton=0.1"], "algorithm 'stellar' has no option 'mutaton'"),
        (["--set", "algorithm.twise.strength=2"], None),  # another algorithm's section is fine
        (["--set", "algorithm.nsga3.pop=2"], "algorithm.nsga3: no algorithm 'nsga3'"),
        (
            ["--set", "generator={type: template, templatez: [hi]}"],
            "generator.templatez: generator 'template' has no option 'templatez'",
        ),
        (
            ["--set", "sut={type: http, urll: 'http://x'}"],
            "sut.urll: sut 'http' has no option 'urll' (options: url, method,",
        ),
        (
            ["--set", "fitness.options.weight=2"],
            "fitness.options.weight: fitness 'toy:quality' has no option 'weight' (options: none)",
        ),
        (
            [
                "--set",
                "oracle={target: 'toy:below', options: {limt: 0.2}}",
                "--set",
                "fitness.objectives=[quality]",
            ],
            "oracle.options.limt: oracle 'toy:below' has no option 'limt' (options: limit)",
        ),
        (["--set", "duplicates.embedder=minilmm"], "unknown embedder 'minilmm'"),
        (
            ["--algorithm", "nsga2"],
            "unknown algorithm 'nsga2' (registered: astral, crescendo, diverse, map-elites,",
        ),
        (["--set", "generator={type: tempalte}"], "unknown generator 'tempalte' (registered:"),
        (["--option", "pois=multiwoz"], "usecase.pois: use case 'toy' has no such option"),
    ],
)
def test_a_misspelt_option_of_any_plugin_is_one_line_and_exit_2(capsys, args, expected):
    code = main(["run", str(TOY / "run.yaml"), "--dry-run", *args])
    err = capsys.readouterr().err
    if expected is None:
        assert code == 0, err
        return
    assert code == 2
    assert len(err.strip().splitlines()) == 1 and expected in err, err


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (["--option", "poiss=multiwoz"], "usecase.poiss: use case 'navi' has no such option"),
        (
            ["--set", "fitness.target=safety", "--set", "fitness.options.strict=1"],
            "judge 'safety' has no option 'strict'",
        ),
    ],
)
def test_use_case_options_and_judges_are_checked_too(capsys, args, expected):
    assert main(["run", "--dry-run", *args]) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and expected in err, err


def test_registered_names_win_and_dotted_paths_load():
    assert resolve("algorithm", "stellar").target == "stellar.search.nsga2:StellarSearch"
    plugin = resolve("fitness", "safety", "judge")
    assert plugin.kind == "judge" and plugin.load().__name__ == "SafetyJudge"
    assert resolve("sut", "toy:answer").load().__name__ == "answer"
    with pytest.raises(StellarError, match="unknown sut 'nope'"):
        resolve("sut", "nope")
    with pytest.raises(StellarError, match=r"cannot import 'no_such_module'"):
        resolve("sut", "no_such_module:answer").load()


def test_function_options_come_from_its_keyword_parameters():
    oracle = resolve("oracle", "toy:below")
    assert check_options(oracle, {"limit": 0.3}, "oracle.options") == {"limit": 0.3}
    with pytest.raises(StellarError, match=r"^oracle\.options\.scores: .*no option 'scores'"):
        check_options(oracle, {"scores": {}}, "oracle.options")  # the call's own argument
