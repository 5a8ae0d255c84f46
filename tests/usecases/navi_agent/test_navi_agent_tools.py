"""The tools: valid schemas, calls checked against them, refusals as results, writes seen in
the diff; a test's perturbation scoped to what its first goal is about."""

from __future__ import annotations

import jsonschema
import pytest

from stellar.agent.environment import check_tools
from stellar.usecases.navi_agent.tools import WRITES, make_tools
from stellar.usecases.navi_agent.world import world

TOOLS = make_tools()


def open_venue(env):
    return next(v for v in env.state["venues"] if not v["closed"])


def test_every_tool_has_a_valid_schema_of_an_object_and_the_writes_are_marked():
    check_tools(TOOLS)
    for tool in TOOLS:
        jsonschema.Draft202012Validator.check_schema(tool.parameters)
        assert tool.spec()["function"]["parameters"]["type"] == "object"
    assert sorted(t.name for t in TOOLS if t.writes) == sorted(WRITES)


def test_a_booking_is_written_and_seen_in_the_diff_and_the_initial_database_is_untouched():
    env = world().environment(None)
    place = open_venue(env)
    args = {"user": "user-1", "venue_id": place["id"], "party_size": 4, "time": "19:00"}
    call = env.call("book_table", args)
    assert call.error is None and call.result["venue_name"] == place["name"]
    added = env.diff()["bookings"]["added"]
    assert [(b["venue_id"], b["party_size"], b["time"]) for b in added] == [
        (place["id"], 4, "19:00")
    ]
    assert world().environment(None).diff() == {}  # each test gets its own copy
    assert all(b["id"] != call.result["id"] for b in world().base["bookings"])


@pytest.mark.parametrize(
    ("tool", "args", "error"),
    [
        ("book_table", {"user": "user-1", "venue_id": "V-1", "party_size": 2}, "bad arguments"),
        ("book_table", {"user": "user-1", "venue_id": "V-1", "party_size": 2, "time": "7pm"},
         "bad arguments"),
        ("book_table", {"user": "user-1", "venue_id": "V-0", "party_size": 2, "time": "19:00"},
         "no venue"),
        ("cancel_booking", {"booking_id": "B-9999"}, "no booking"),
        ("change_booking", {"booking_id": "B-1001"}, "nothing to change"),
        ("venue_details", '{"venue_id": ', "not JSON"),
        ("teleport", {}, "unknown tool"),
    ],
)  # fmt: skip
def test_a_bad_or_refused_call_is_an_error_result_never_a_raise(tool, args, error):
    env = world().environment(None)
    call = env.call(tool, args)
    assert error in call.error
    assert env.diff() == {}


def test_a_cancelled_booking_cannot_be_cancelled_again_nor_changed():
    env = world().environment(None)
    assert env.call("cancel_booking", {"booking_id": "B-1001"}).error is None
    assert "is cancelled" in env.call("cancel_booking", {"booking_id": "b-1001"}).error
    assert (
        "is cancelled"
        in env.call("change_booking", {"booking_id": "B-1001", "time": "20:00"}).error
    )
    assert env.diff()["bookings"]["changed"][0]["after"]["status"] == "cancelled"


def test_navigation_is_a_write_the_diff_shows():
    env = world().environment(None)
    place = open_venue(env)
    call = env.call("start_navigation", {"venue_id": place["id"]})
    assert call.result["destination"] == place["name"]
    assert env.diff()["routes"]["added"] == [{"id": "R-1", "venue_id": place["id"]}]


def test_a_perturbation_hits_only_the_calls_its_scope_names():
    env = world().environment(None)
    first, second = [v for v in env.state["venues"] if not v["closed"]][:2]
    plan = {
        "environment": {
            "bookings": [],
            "background": [],
            "perturbation": {"tool": "start_navigation", "kind": "timeout",
                             "scope": {"venue_id": [first["id"]]}},
        }
    }  # fmt: skip
    env = world().environment(plan)
    assert env.call("start_navigation", {"venue_id": first["id"]}).error == "the call timed out"
    assert env.call("start_navigation", {"venue_id": second["id"]}).error is None


def test_stale_listings_show_the_database_from_before_the_change_behind_the_agents_back():
    place = next(v for v in world().base["venues"] if not v["closed"])
    plan = {
        "environment": {
            "bookings": [],
            "background": [{"table": "venues", "id": place["id"], "set": {"closed": True}}],
            "perturbation": {"tool": "search_venues", "kind": "stale"},
        }
    }
    env = world().environment(plan)
    listed = env.call("search_venues", {"query": place["name"]}).result
    assert [v["closed"] for v in listed] == [False]
    assert env.call("venue_details", {"venue_id": place["id"]}).result["closed"] is True
