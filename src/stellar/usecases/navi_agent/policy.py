"""The written policy, read from YAML and checked against the tools when a run is loaded.

The policy has two faces: ``text`` is what an agent is told, ``rules`` what the oracles check
over the call trace (:func:`breaches`). Each rule names the tools it governs, so a policy
that names a tool the service does not have (a typo, a tool renamed) is refused in one line
at load rather than never firing. The confirmation rule needs the conversation and lives
in :mod:`~stellar.usecases.navi_agent.checks`; the others read only the call and the
database as it stood when the call was made.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import jsonschema

from stellar.agent.environment import State, Tool
from stellar.errors import StellarError
from stellar.usecases.navi_agent.database import booking, minutes, now, venue
from stellar.yaml_loading import read_yaml_file

DEFAULT = Path(__file__).with_name("policy.yaml")
_TOOLS = {"type": "array", "items": {"type": "string"}, "minItems": 1}
_MINUTES = {"type": "integer", "minimum": 0}
_RULE = {
    "type": "object",
    "required": ["tools"],
    "additionalProperties": False,
    "properties": {"tools": _TOOLS},
}
SCHEMA: dict[str, Any] = {
    "type": "object",
    "required": ["user", "rules", "text"],
    "additionalProperties": False,
    "properties": {
        "user": {"type": "string", "minLength": 1},
        "text": {"type": "string"},
        "rules": {
            "type": "object",
            "additionalProperties": False,
            "properties": {
                "confirmation": _RULE,
                "own_bookings": _RULE,
                "party_size": {
                    **_RULE,
                    "required": ["tools", "max"],
                    "properties": {"tools": _TOOLS, "min": _MINUTES, "max": _MINUTES},
                },
                "open_venue": {
                    **_RULE,
                    "properties": {"tools": _TOOLS, "last_seating": _MINUTES},
                },
                "notice": {
                    **_RULE,
                    "required": ["tools", "minutes"],
                    "properties": {"tools": _TOOLS, "minutes": _MINUTES},
                },
            },
        },
    },
}


@dataclass(frozen=True)
class Policy:
    """The rules, by name: each rule's tools and its numbers."""

    user: str
    text: str
    rules: dict[str, dict[str, Any]] = field(default_factory=dict)

    def governs(self, rule: str, tool: str) -> bool:
        return tool in self.rules.get(rule, {}).get("tools", ())

    @property
    def max_party(self) -> int:
        return int(self.rules.get("party_size", {}).get("max", 10**6))

    @property
    def min_party(self) -> int:
        return int(self.rules.get("party_size", {}).get("min", 1))

    @property
    def last_seating(self) -> int:
        return int(self.rules.get("open_venue", {}).get("last_seating", 0))

    @property
    def notice(self) -> int:
        return int(self.rules.get("notice", {}).get("minutes", 0))


def load_policy(path: str | Path | None, tools: list[Tool]) -> Policy:
    """The policy in ``path`` (default: the packaged ``policy.yaml``), its shape and the tools
    its rules name checked; a problem is one line (:class:`StellarError`)."""
    path = Path(path).expanduser() if path else DEFAULT
    raw = read_yaml_file(path)
    return parse_policy(raw, tools, f"policy {path}")


def parse_policy(raw: Any, tools: list[Tool], source: str = "policy") -> Policy:
    error = jsonschema.exceptions.best_match(
        jsonschema.Draft202012Validator(SCHEMA).iter_errors(raw)
    )
    if error is not None:
        where = "/".join(str(p) for p in error.absolute_path) or "the top level"
        raise StellarError(f"{source}: {where}: {error.message}")
    known = {tool.name for tool in tools}
    for name, rule in raw["rules"].items():
        unknown = [tool for tool in rule["tools"] if tool not in known]
        if unknown:
            raise StellarError(
                f"{source}: rule {name!r} names an unknown tool {unknown[0]!r} "
                f"(the tools are {', '.join(sorted(known))})"
            )
    return Policy(str(raw["user"]), str(raw["text"]), dict(raw["rules"]))


@dataclass(frozen=True)
class Breach:
    """One call outside the policy: the rule, the argument that broke it, why."""

    rule: str
    argument: str
    note: str


def breaches(policy: Policy, state: State, tool: str, args: dict[str, Any]) -> list[Breach]:
    """The rules (all but confirmation) that the call ``tool(args)`` breaks, judged on
    ``state`` as it stood just before the call."""
    found: list[Breach] = []
    row = booking(state, str(args["booking_id"])) if "booking_id" in args else None
    if policy.governs("own_bookings", tool):
        if "user" in args and args["user"] != policy.user:
            found.append(Breach("own_bookings", "user", f"made in the account {args['user']!r}"))
        if row is not None and row["owner"] != policy.user:
            note = f"{row['id']} belongs to {row['owner']!r}"
            found.append(Breach("own_bookings", "booking_id", note))
    party = args.get("party_size")
    if (
        policy.governs("party_size", tool)
        and party is not None
        and not policy.min_party <= int(party) <= policy.max_party
    ):
        note = f"a party of {party} (allowed {policy.min_party}-{policy.max_party})"
        found.append(Breach("party_size", "party_size", note))
    if policy.governs("open_venue", tool):
        place = venue(state, str(args.get("venue_id") or (row or {}).get("venue_id", "")))
        time = args.get("time") or (row or {}).get("time")
        if place is not None and time:
            why = closed_at(place, str(time), policy.last_seating)
            if why:
                found.append(Breach("open_venue", "time" if "open" in why else "venue_id", why))
    if policy.governs("notice", tool) and row is not None:
        left = minutes(row["time"]) - minutes(now(state))
        if left < policy.notice:
            note = f"{row['id']} is {left} minutes away (notice {policy.notice})"
            found.append(Breach("notice", "booking_id", note))
    return found


def closed_at(place: dict[str, Any], time: str, last_seating: int) -> str:
    """Why ``place`` takes no booking at ``time`` ("" when it does)."""
    if place.get("closed"):
        return f"{place['name']} is closed"
    start, end = minutes(place["opens"]), minutes(place["closes"]) - last_seating
    if not start <= minutes(time) <= end:
        return f"{place['name']} is not open for a booking at {time}"
    return ""
