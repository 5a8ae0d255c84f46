"""Reading a run configuration: use cases, components, algorithm sections, use-case options."""

import subprocess
import sys

import pytest
from conftest import TOY

from stellar.config import load_config
from stellar.errors import ConfigError, StellarError


def test_flat_algorithm_options_belong_to_the_algorithm_named_in_their_file():
    config = load_config(TOY / "run.yaml")  # toy: {population: 20, mutation: 0.12}
    assert config.algorithm.options() == {"population": 20, "mutation": 0.12}
    random = load_config(TOY / "run.yaml", {"algorithm.name": "random"})
    assert random.algorithm.options() == {"population": 20}  # stellar's section is not random's
    assert random.algorithm.options("stellar")["mutation"] == 0.12


def test_set_options_go_to_the_final_algorithm_and_are_checked():
    config = load_config(TOY / "run.yaml", {"algorithm.name": "twise"}, {"algorithm.strength": 2})
    assert config.algorithm.options() == {"population": 20, "strength": 2}
    with pytest.raises(StellarError, match="algorithm 'random' has no option 'strength'"):
        load_config(TOY / "run.yaml", {"algorithm.name": "random"}, {"algorithm.strength": 2})


def test_components_are_written_inline_or_by_target():
    inline = load_config(TOY / "run.yaml", settings={"sut": {"type": "http", "url": "http://x"}})
    assert inline.sut.type == "http" and inline.sut.plugin == "http"
    assert inline.sut.options["url"] == "http://x" and inline.sut.options["timeout"] == 30.0
    python = load_config(TOY / "run.yaml")
    assert python.sut.type == "python" and python.sut.plugin == "toy:answer"
    with pytest.raises(ConfigError, match=r"sut: .*give 'type: NAME' or 'target:"):
        load_config(TOY / "run.yaml", settings={"sut": {"options": {}}})


def test_a_components_option_has_one_name_written_inline_or_saved_nested(tmp_path):
    http = {"sut": {"type": "http", "url": "http://a"}}
    for key in ("sut.url", "sut.options.url"):  # the hand-written (inline) form
        config = load_config(TOY / "run.yaml", settings={**http, key: "http://b"})
        assert config.sut.options["url"] == "http://b", key
    saved = tmp_path / "config.yaml"  # a run's saved configuration nests the options
    saved.write_text(load_config(TOY / "run.yaml", settings=http).model_dump_json())
    for key in ("sut.url", "sut.options.url"):
        assert load_config(saved, settings={key: "http://c"}).sut.options["url"] == "http://c"
    with pytest.raises(StellarError, match="sut 'toy:answer' has no option 'delay'"):
        load_config(TOY / "run.yaml", settings={"sut.delay": 0.0})  # `target:` form: nested


def test_use_case_options_have_defaults_and_reach_the_components_that_take_them():
    default = load_config(None)
    assert default.usecase == {"pois": "generated"}
    chosen = load_config(None, settings={"usecase.pois": "multiwoz"})
    assert chosen.sut.options["pois"] == "multiwoz"
    assert chosen.fitness.options["pois"] == "multiwoz"
    assert "pois" not in chosen.generator.options  # the realiser takes no venues
    own = load_config(None, settings={"usecase.pois": "multiwoz", "sut.pois": "generated"})
    assert own.sut.options["pois"] == "generated"  # a component's own setting wins
    with pytest.raises(ConfigError, match="usecase: expected a mapping"):
        load_config(None, settings={"usecase": "multiwoz"})


def test_a_use_case_folder_declares_options(tmp_path):
    folder = tmp_path / "shop"
    folder.mkdir()
    (folder / "features.yaml").write_text((TOY / "features.yaml").read_text())
    (folder / "usecase.yaml").write_text(
        "features: features.yaml\n"
        "options: {shout: {default: false, description: answer in capitals}}\n"
        "generator: {type: template, templates: ['a {size} {shape}']}\n"
        "sut: {target: 'toy:answer'}\n"
        "fitness: {target: 'toy:quality'}\n"
        "oracle: {below: {quality: 0.1}}\n"
    )
    run = tmp_path / "run.yaml"
    run.write_text("use_case: shop\nusecase: {shout: true}\n")
    config = load_config(run)
    assert config.name == "shop" and config.usecase == {"shout": True}
    run.write_text("use_case: shop\nusecase: {shuot: true}\n")
    with pytest.raises(ConfigError, match=r"usecase\.shuot: use case 'shop' has no such option"):
        load_config(run)


def data_use_case(tmp_path, needs_data: str) -> None:
    """A use case ``shop`` whose fitness reads the answer's data."""
    folder = tmp_path / "shop"
    folder.mkdir()
    (folder / "features.yaml").write_text((TOY / "features.yaml").read_text())
    (folder / "usecase.yaml").write_text(
        "features: features.yaml\n"
        f"response: {{data: $.quality, needs_data: {needs_data}}}\n"
        "generator: {type: template, templates: ['a {size} {shape}']}\n"
        "sut: {target: 'toy:answer'}\n"
        "fitness: {target: 'toy:quality'}\n"
        "oracle: {below: {quality: 0.1}}\n"
    )


def test_a_use_case_whose_fitness_needs_data_refuses_a_system_that_returns_none(tmp_path):
    data_use_case(tmp_path, "true")
    shop = tmp_path / "shop"
    assert load_config(shop).sut.plugin == "toy:answer"  # a Python system may return data
    http = {"type": "http", "url": "http://127.0.0.1:9/q"}
    assert load_config(shop, {"sut": http}).sut.options["data"] == "$.quality"
    with pytest.raises(ConfigError, match=r": sut\.data: use case 'shop' scores the data"):
        load_config(shop, {"sut": http}, {"sut.data": None})
    chat = {"type": "chat", "model": "openai-compatible:m@http://127.0.0.1:9/v1"}
    with pytest.raises(ConfigError, match=r": sut: use case 'shop' .* a chat model returns text"):
        load_config(shop, {"sut": chat})


def test_needs_data_is_true_or_false(tmp_path):
    data_use_case(tmp_path, "'yes'")
    with pytest.raises(ConfigError, match=r"response\.needs_data: expected true or false"):
        load_config(tmp_path / "shop")


def test_config_does_not_load_the_model_client():
    code = "import sys, stellar.config; print('stellar.llm.client' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_changing_a_component_type_starts_it_afresh():
    config = load_config(
        TOY / "run.yaml", settings={"sut.type": "http", "sut.url": "http://localhost:8000/q"}
    )
    assert config.sut.type == "http" and config.sut.target is None
    assert config.sut.options["url"] == "http://localhost:8000/q"


def test_a_folder_that_is_no_use_case_is_one_line(tmp_path):
    with pytest.raises(ConfigError, match="a folder, not a YAML file"):
        load_config(tmp_path)


def test_sections_of_other_algorithms_are_checked_and_must_be_mappings():
    with pytest.raises(StellarError, match=r"algorithm\.twise\.strengh: algorithm 'twise'"):
        load_config(TOY / "run.yaml", settings={"algorithm.twise.strengh": 3})
    with pytest.raises(ConfigError, match="'twise' must be a mapping"):
        load_config(TOY / "run.yaml", settings={"algorithm.twise": 3})
    with pytest.raises(
        StellarError, match=r"it is an option of other algorithms: .*algorithm\.stellar\.mutation"
    ):
        load_config(TOY / "run.yaml", {"algorithm.name": "random"}, {"algorithm.mutation": 0.2})


def test_yaml_takes_the_durations_the_command_line_takes(tmp_path):
    run = tmp_path / "run.yaml"
    run.write_text(f"use_case: {TOY}\nbudget: {{time: 15m}}\n")
    assert load_config(run).budget.time == 900
    run.write_text(f"use_case: {TOY}\nbudget: {{time: soon}}\n")
    with pytest.raises(ConfigError, match=r"budget\.time: not a duration: 'soon'"):
        load_config(run)


def test_features_can_be_written_inline(tmp_path):
    run = tmp_path / "run.yaml"
    run.write_text(
        f"use_case: {TOY}\n"
        "features:\n"
        "  - {name: size, kind: content, values: [small, large]}\n"
        "  - {name: mood, kind: style, values: [calm, angry]}\n"
        "generator: {type: template, templates: ['a {size} thing, {mood}']}\n"
    )
    space = load_config(run).feature_space()
    assert [f.name for f in space.features] == ["size", "mood"]
    run.write_text(f"use_case: {TOY}\nfeatures: {{features: [{{name: x}}]}}\n")
    with pytest.raises(ConfigError, match=r"^features: features\[0\]"):
        load_config(run).feature_space()
