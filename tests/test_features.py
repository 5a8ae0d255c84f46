import random

import numpy as np
import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st
from strategies import spaces

from stellar.errors import ConfigError
from stellar.features import Feature, FeatureSpace, load_feature_space, parse_feature_space
from stellar.search.points import constrain_points, point_values


def test_paper_encoding_examples():
    rating = Feature("rating", "content", (3.5, 4, 4.5, 5), ordinal=True)
    category = Feature("category", "content", ("hospital", "bar", "restaurant"))
    assert rating.encode(4) == 0.25
    assert rating.encode(3.5) == 0.0
    assert category.encode("hospital") == 0
    assert category.encode("restaurant") == 2
    assert rating.decode(0.25) == 4
    assert rating.decode(0.6) == 4.5  # nearest grid point (0.5)
    assert rating.decode(0.74) == 5  # nearest grid point (0.75)
    assert rating.decode(7.0) == 5  # clipped
    assert category.decode(1.4) == "bar"


def test_values_of_different_types_are_not_confused():
    f = Feature("f", "content", ("1", 1, True), ordinal=False)
    assert [f.index(v) for v in ("1", 1, True)] == [0, 1, 2]


# --------------------------------------------------------------------- property tests


@given(spaces(), st.randoms(use_true_random=False))
def test_encode_decode_round_trip(space, rnd):
    values = space.random_values(rnd)
    assert space.decode(space.encode(values)) == values


@given(spaces(), st.data())
def test_any_real_vector_decodes_to_valid_values(space, data):
    vector = [data.draw(st.floats(-1, f.upper + 1, allow_nan=False)) for f in space.features]
    values = space.decode(vector)
    for f in space.features:
        f.index(values[f.name])  # raises if not a valid value


@given(spaces(), st.data())
def test_decoding_many_vectors_at_once_is_decoding_each(space, data):
    # grid points, the midpoints between them (rounded half to even) and values off the bounds
    floats = lambda f: st.one_of(  # noqa: E731
        st.floats(-1, f.upper + 1, allow_nan=False),
        st.integers(-1, 2 * len(f.values)).map(
            lambda k: k / 2 / (len(f.values) if f.ordinal else 1)
        ),
    )
    rows = data.draw(st.lists(st.tuples(*(floats(f) for f in space.features)), min_size=1))
    X = np.array(rows, dtype=float)
    assert space.candidates_from_vectors(X) == [space.candidate_from_vector(x) for x in X]
    assert space.candidates_from_vectors(X) == space.candidates_from_vectors(X[::-1])[::-1]


@settings(max_examples=200)
@given(spaces(), st.randoms(use_true_random=False))
def test_constraints_always_yield_valid_candidates(space, rnd):
    candidate = space.candidate(space.random_values(rnd))
    assert space.satisfies(candidate.values)
    # the vector is written back: it encodes exactly the constrained values
    assert space.decode(candidate.vector) == candidate.values
    # applying the constraints again changes nothing
    assert space.apply_constraints(candidate.values) == candidate.values


@settings(max_examples=100)
@given(spaces(), st.randoms(use_true_random=False))
def test_constraining_many_points_at_once_is_constraining_each(space, rnd):
    points = np.array([[rnd.randrange(len(f.values)) for f in space.features] for _ in range(30)])
    constrained = [space.apply_constraints(point_values(space, p)) for p in points.tolist()]
    expected = [[f.index(c[f.name]) for f in space.features] for c in constrained]
    assert constrain_points(space, points).tolist() == expected


def test_constraint_fixes_values_and_vector(tmp_path):
    space = parse_feature_space(
        {
            "features": [
                {
                    "name": "category",
                    "kind": "content",
                    "values": ["hospital", "restaurant", "cafe"],
                },
                {"name": "cuisine", "kind": "content", "values": ["none", "thai", "greek"]},
                {"name": "rating", "kind": "content", "ordinal": True, "values": ["none", 4, 5]},
            ],
            "constraints": [
                {"when": {"category": "hospital"}, "set": {"cuisine": "none", "rating": "none"}},
                {"when": {"category": {"not": ["restaurant", "cafe"]}}, "set": {"cuisine": "none"}},
            ],
        }
    )
    c = space.candidate({"category": "hospital", "cuisine": "thai", "rating": 5})
    assert c.values == {"category": "hospital", "cuisine": "none", "rating": "none"}
    assert c.vector == (0.0, 0.0, 0.0)
    kept = space.candidate({"category": "cafe", "cuisine": "greek", "rating": 4})
    assert kept.values["cuisine"] == "greek"
    assert kept.vector == (2.0, 2.0, 1 / 3)


def _write(tmp_path, data) -> str:
    path = tmp_path / "features.yaml"
    path.write_text(yaml.safe_dump(data) if not isinstance(data, str) else data)
    return path


GOOD = [
    {"name": "a", "kind": "content", "values": ["x", "y"]},
    {"name": "b", "kind": "style", "ordinal": True, "values": [1, 2, 3]},
]


@pytest.mark.parametrize(
    ("data", "where", "problem"),
    [
        (
            {"features": GOOD, "constraints": [{"when": {"zz": "x"}, "set": {"b": 1}}]},
            "constraints[0].when.zz",
            "unknown feature 'zz'",
        ),
        (
            {"features": [*GOOD, {"name": "c", "kind": "content", "values": []}]},
            "features[2].values",
            "non-empty list",
        ),
        (
            {"features": [*GOOD, {"name": "a", "kind": "content", "values": ["q"]}]},
            "features[2].name",
            "duplicate feature name 'a'",
        ),
        (
            {"features": GOOD, "constraints": [{"when": {"a": "x"}, "set": {"b": 7}}]},
            "constraints[0].set.b",
            "7 is not a value of 'b'",
        ),
        (
            {"features": GOOD, "constraints": [{"when": {"a": "q"}, "set": {"b": 1}}]},
            "constraints[0].when.a",
            "'q' is not a value of 'a'",
        ),
        (
            {"features": [{"name": "a", "kind": "colour", "values": ["x"]}]},
            "features[0].kind",
            "expected one of style, content, perturbation",
        ),
        (
            {
                "features": GOOD,
                "constraints": [
                    {"when": {"a": "x"}, "set": {"b": 1}},
                    {"when": {"b": 1}, "set": {"a": "y"}},
                ],
            },
            "constraints",
            "cycle",
        ),
        (
            {
                "features": GOOD,
                "constraints": [
                    {"when": {"a": "x"}, "set": {"b": 1}},
                    {"when": {"a": ["x", "y"]}, "set": {"b": 2}},
                ],
            },
            "constraints[1]",
            "conflicts with constraints[0]",
        ),
    ],
)
def test_malformed_feature_files_name_file_path_and_problem(tmp_path, data, where, problem):
    path = _write(tmp_path, data)
    with pytest.raises(ConfigError) as info:
        load_feature_space(path)
    message = str(info.value)
    assert message.startswith(f"{path}: {where}: ")
    assert problem in message
    assert "\n" not in message


def test_invalid_yaml_and_missing_file(tmp_path):
    with pytest.raises(ConfigError, match="not valid YAML"):
        load_feature_space(_write(tmp_path, "features: [a, b\n"))
    with pytest.raises(ConfigError, match="file not found"):
        load_feature_space(tmp_path / "missing.yaml")


def test_space_bounds_match_encoding():
    space = FeatureSpace(
        [
            Feature("o", "style", ("a", "b", "c", "d"), ordinal=True),
            Feature("c", "content", ("a", "b", "c")),
        ]
    )
    assert np.allclose(space.upper_bounds, [0.75, 2.0])
    assert space.size == 12
    rng = random.Random(0)
    for _ in range(50):
        v = np.array(space.encode(space.random_values(rng)))
        assert (v >= space.lower_bounds).all() and (v <= space.upper_bounds).all()


def test_unknown_keys_of_mixed_types_are_one_error():
    raw = {"features": [{"name": "a", "kind": "style", "values": [1, 2], "": None, 0: None}]}
    with pytest.raises(ConfigError, match="unknown key"):
        parse_feature_space(raw)
