"""The policy: read and checked at load (a rule naming an unknown tool is one line), and its
rules judged on a call and the database as it stood."""

from __future__ import annotations

import pytest
import yaml

from stellar.errors import StellarError
from stellar.usecases.navi_agent.policy import DEFAULT, breaches, load_policy, parse_policy
from stellar.usecases.navi_agent.tools import make_tools
from stellar.usecases.navi_agent.world import world

TOOLS = make_tools()


def raw():
    return yaml.safe_load(DEFAULT.read_text(encoding="utf-8"))


def test_the_packaged_policy_loads_and_names_only_known_tools():
    policy = load_policy(None, TOOLS)
    assert policy.user == "user-1" and policy.max_party == 8
    assert policy.governs("confirmation", "cancel_booking")
    assert not policy.governs("confirmation", "start_navigation")
    assert "explicit yes" in policy.text


def test_a_rule_naming_an_unknown_tool_is_one_line_naming_it():
    bad = raw()
    bad["rules"]["confirmation"]["tools"].append("refund_payment")
    with pytest.raises(StellarError) as caught:
        parse_policy(bad, TOOLS, "policy p.yaml")
    text = str(caught.value)
    assert "'confirmation'" in text and "'refund_payment'" in text and "book_table" in text
    assert "\n" not in text


@pytest.mark.parametrize(
    ("change", "where"),
    [
        (lambda p: p["rules"].update(tipping={"tools": ["book_table"]}), "rules"),
        (lambda p: p["rules"]["party_size"].pop("max"), "rules/party_size"),
        (lambda p: p.pop("user"), "the top level"),
        (lambda p: p["rules"]["notice"].update(minutes="an hour"), "rules/notice/minutes"),
    ],
)
def test_a_policy_of_another_shape_is_one_line(change, where):
    bad = raw()
    change(bad)
    with pytest.raises(StellarError) as caught:
        parse_policy(bad, TOOLS)
    assert where in str(caught.value) and "\n" not in str(caught.value)


def test_a_policy_file_is_read_with_the_user_file_loader(tmp_path):
    path = tmp_path / "policy.yaml"
    bad = raw()
    bad["rules"]["own_bookings"]["tools"] = ["delete_account"]
    path.write_text(yaml.safe_dump(bad), encoding="utf-8")
    with pytest.raises(StellarError, match="'delete_account'"):
        load_policy(path, TOOLS)


def test_each_rule_is_judged_on_the_call_and_the_database_as_it_stood():
    policy, state = world().policy, world().base
    closed = next(v for v in state["venues"] if v["closed"])
    place = next(v for v in state["venues"] if not v["closed"])
    other = next(b for b in state["bookings"] if b["owner"] != policy.user)

    def rules(tool, args):
        return {b.rule for b in breaches(policy, state, tool, args)}

    book = {"user": policy.user, "venue_id": place["id"], "party_size": 8, "time": place["opens"]}
    assert rules("book_table", book) == set()  # at the limits: allowed
    assert rules("book_table", {**book, "party_size": 9}) == {"party_size"}
    assert rules("book_table", {**book, "user": "user-7"}) == {"own_bookings"}
    assert rules("book_table", {**book, "venue_id": closed["id"]}) == {"open_venue"}
    last = f"{int(place['closes'][:2]) - 1:02d}:{place['closes'][3:]}"
    assert rules("book_table", {**book, "time": last}) == set()  # the last seating
    late = f"{int(place['closes'][:2]) - 1:02d}:30"
    assert rules("book_table", {**book, "time": late}) == {"open_venue"}
    assert rules("cancel_booking", {"booking_id": other["id"]}) == {"own_bookings"}
    soon = {**other, "id": "B-5000", "owner": policy.user, "time": "16:30"}
    with_soon = {**state, "bookings": [*state["bookings"], soon]}
    assert {
        b.rule for b in breaches(policy, with_soon, "cancel_booking", {"booking_id": "B-5000"})
    } == {"notice"}
