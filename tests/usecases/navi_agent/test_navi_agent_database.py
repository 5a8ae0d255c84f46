"""The database: built the same from a seed, and a user's state file checked for its shape."""

from __future__ import annotations

import json

import pytest

from stellar.errors import StellarError
from stellar.usecases.navi_agent.database import USER, build_state, check_state, load_state


def test_the_default_database_is_the_same_for_a_seed_and_has_the_shape_it_checks():
    state = build_state(0)
    assert state == build_state(0)
    assert state != build_state(1)
    assert check_state(state) is state
    owners = {row["owner"] for row in state["bookings"]}
    assert USER in owners and len(owners) > 2  # the user's bookings and other users'
    assert any(v["closed"] for v in state["venues"]) and not all(
        v["closed"] for v in state["venues"]
    )
    names = [v["name"].lower() for v in state["venues"]]
    assert not any(a != b and a in b for a in names for b in names)  # no name inside another


def test_a_state_file_round_trips(tmp_path):
    path = tmp_path / "state.json"
    path.write_text(json.dumps(build_state(3)), encoding="utf-8")
    assert load_state(path) == build_state(3)


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda s: s.pop("bookings"), "'bookings' is a required property"),
        (lambda s: s["venues"][0].update(closes="25:00"), "venues/0/closes"),
        (lambda s: s["bookings"][0].update(party_size="four"), "bookings/0/party_size"),
        (lambda s: s["bookings"].append(dict(s["bookings"][0])), "is used twice"),
        (lambda s: s["bookings"][0].update(venue_id="V-0"), "not in venues"),
        (lambda s: s.update(extra=[]), "Additional properties"),
    ],
)
def test_a_state_file_of_another_shape_is_one_line_naming_the_problem(tmp_path, change, message):
    state = build_state(0)
    change(state)
    path = tmp_path / "state.json"
    path.write_text(json.dumps(state), encoding="utf-8")
    with pytest.raises(StellarError) as caught:
        load_state(path)
    text = str(caught.value)
    assert message in text and str(path) in text
    assert "\n" not in text


def test_a_state_file_that_is_missing_or_not_json_is_one_line(tmp_path):
    with pytest.raises(StellarError, match="not found"):
        load_state(tmp_path / "nothing.json")
    bad = tmp_path / "bad.json"
    bad.write_text("{venues: [", encoding="utf-8")
    with pytest.raises(StellarError, match="not JSON"):
        load_state(bad)
