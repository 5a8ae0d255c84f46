"""Hypothesis strategies shared by the tests."""

from hypothesis import assume
from hypothesis import strategies as st

from stellar.errors import ConfigError
from stellar.features import parse_feature_space

names = st.text("abcdefgh", min_size=1, max_size=6)
scalars = st.one_of(st.text("xyz", min_size=1, max_size=3), st.integers(0, 9))


@st.composite
def spaces(draw, with_constraints=True):
    n = draw(st.integers(1, 6))
    feature_names = draw(st.lists(names, min_size=n, max_size=n, unique=True))
    raw = []
    for name in feature_names:
        values = draw(st.lists(scalars, min_size=1, max_size=6, unique_by=lambda v: (type(v), v)))
        raw.append(
            {
                "name": name,
                "kind": draw(st.sampled_from(["style", "content", "perturbation"])),
                "ordinal": draw(st.booleans()),
                "values": values,
            }
        )
    rules = []
    if with_constraints and n > 1:
        for _ in range(draw(st.integers(0, 4))):
            a, b = draw(st.lists(st.sampled_from(raw), min_size=2, max_size=2, unique_by=id))
            rules.append(
                {
                    "when": {a["name"]: draw(st.lists(st.sampled_from(a["values"]), min_size=1))},
                    "set": {b["name"]: draw(st.sampled_from(b["values"]))},
                }
            )
    try:
        return parse_feature_space({"features": raw, "constraints": rules})
    except ConfigError:
        assume(False)  # cyclic or conflicting rule sets are rejected at load time
