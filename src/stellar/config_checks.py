"""``checks:`` in a run configuration: pass/fail rules without an LLM or Python.

A team without an API key should not have to write Python to say "the answer must not
contain 'Sorry, I didn't understand'" or "it must name the FAQ entry asked about". Each entry
of ``checks:`` becomes one objective of the fitness :class:`stellar.fitness.checks.Checks`
(its score in [0, 1]), one threshold of the oracle (0.5, or the entry's ``threshold``), a
reason and a failure-mode label. This module reads and checks the entries when the
configuration loads, so a regex that does not compile, a JSONPath that does not parse or a
reference table missing a feature value is one line naming the entry, before anything runs.

A *reference* (what ``any``/``all``/``equals``/``in``/``reference`` compare with) is a
literal, or ``{feature: NAME}`` (the test's value of that feature), or
``{feature: NAME, table: {VALUE: REFERENCE, ...}}`` (e.g. the FAQ entry expected per topic).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

KINDS = (
    "contains", "not-contains", "regex", "not-regex", "length", "json-path", "json-schema",
    "similar", "refusal", "python", "rubric",
)  # fmt: skip
BINARY_THRESHOLD = 0.5  # a check scoring 0 or 1 fails below this


class Reference(BaseModel):
    """A value taken from the test's features: the value itself, or its row in ``table``."""

    model_config = ConfigDict(extra="forbid")

    feature: str
    table: dict[str, Any] | None = None


Ref = Reference | str | int | float | bool | None


class _Check(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: str | None = Field(None, description="the objective's name (default: KIND_INDEX)")
    mode: str | None = Field(
        None,
        description="the failure mode's label; {FEATURE} and {data[KEY]} are filled in "
        "(default: the check's name and reason)",
    )


class ContainsCheck(_Check):
    kind: Literal["contains", "not-contains"]
    any: list[Ref] | None = None
    all: list[Ref] | None = None
    case: bool = Field(False, description="compare with case (default: ignore it)")

    @model_validator(mode="after")
    def one_list(self) -> ContainsCheck:
        if (self.any is None) == (self.all is None):
            raise ValueError("give either any: [...] or all: [...]")
        return self


class RegexCheck(_Check):
    kind: Literal["regex", "not-regex"]
    pattern: str
    case: bool = False

    @model_validator(mode="after")
    def compiles(self) -> RegexCheck:
        try:
            re.compile(self.pattern)
        except re.error as exc:
            raise ValueError(f"pattern {self.pattern!r} does not compile ({exc})") from None
        return self


class LengthCheck(_Check):
    kind: Literal["length"]
    min: int | None = Field(None, ge=0, description="characters at least")
    max: int | None = Field(None, ge=0, description="characters at most")


class JsonPathCheck(_Check):
    kind: Literal["json-path"]
    path: str = Field(description="a JSONPath, e.g. $.entry or $.sources[*].id")
    of: Literal["data", "answer"] = Field("data", description="the response's data, or its text")
    equals: Ref = None
    in_: list[Ref] | None = Field(None, alias="in")
    exists: bool = Field(True, description="without equals/in: the path must (not) match")

    @model_validator(mode="after")
    def parses(self) -> JsonPathCheck:
        from jsonpath_ng.exceptions import JsonPathLexerError, JsonPathParserError
        from jsonpath_ng.ext import parse

        try:
            parse(self.path)
        except (JsonPathLexerError, JsonPathParserError, Exception) as exc:
            raise ValueError(f"path {self.path!r} does not parse ({exc})") from None
        return self


class JsonSchemaCheck(_Check):
    kind: Literal["json-schema"]
    schema_: dict[str, Any] = Field(alias="schema")
    of: Literal["data", "answer"] = "data"

    @model_validator(mode="after")
    def valid_schema(self) -> JsonSchemaCheck:
        from jsonschema import Draft202012Validator, SchemaError

        try:
            Draft202012Validator.check_schema(self.schema_)
        except SchemaError as exc:
            raise ValueError(f"schema is not a JSON schema ({exc.message})") from None
        return self


class SimilarCheck(_Check):
    kind: Literal["similar"]
    reference: Ref = Field(description="the answer it should mean")
    threshold: float = Field(0.5, ge=0, le=1, description="cosine of MiniLM embeddings")


class RefusalCheck(_Check):
    kind: Literal["refusal"]
    present: bool = Field(False, description="true: the answer must refuse; false: must not")


class PythonCheck(_Check):
    kind: Literal["python"]
    function: str = Field(
        description="module:function(answer, data, features) -> bool or a score in [0, 1]"
    )
    threshold: float = Field(0.5, ge=0, le=1)


class RubricCheck(_Check):
    kind: Literal["rubric"]
    rubric: str = Field(min_length=1, description="the rule a judge model checks the answer by")


CheckSpec = Annotated[
    ContainsCheck
    | RegexCheck
    | LengthCheck
    | JsonPathCheck
    | JsonSchemaCheck
    | SimilarCheck
    | RefusalCheck
    | PythonCheck
    | RubricCheck,
    Field(discriminator="kind"),
]


class ChecksSpec(BaseModel):
    checks: list[CheckSpec]


def parse_checks(
    entries: Any, feature_values: Mapping[str, Sequence[Any]] | None = None
) -> list[CheckSpec]:
    """The entries, checked; a problem raises ValueError("checks[I].KEY: message")."""
    if not isinstance(entries, list) or not entries:
        raise ValueError("checks: expected a list of checks, each with a kind")
    for i, entry in enumerate(entries):
        if isinstance(entry, dict) and entry.get("kind") not in KINDS:
            raise ValueError(
                f"checks[{i}].kind: {entry.get('kind')!r} is not a kind of check "
                f"({', '.join(KINDS)})"
            )
    try:
        checks = ChecksSpec.model_validate({"checks": entries}).checks
    except ValidationError as exc:
        error = exc.errors()[0]
        loc = [str(p) for p in error["loc"][1:] if str(p) not in KINDS]
        where = f"checks[{loc[0]}]" + "".join(f".{p}" for p in loc[1:])
        raise ValueError(f"{where}: {error['msg'].removeprefix('Value error, ')}") from None
    names = [check_name(c, i) for i, c in enumerate(checks)]
    if len(set(names)) < len(names):
        raise ValueError(f"checks: two checks share the name {_first_repeat(names)!r}")
    for i, check in enumerate(checks):
        for ref in _references(check):
            _check_reference(ref, feature_values, f"checks[{i}]")
    return checks


def check_name(check: CheckSpec, index: int) -> str:
    return check.name or f"{check.kind.replace('-', '_')}_{index + 1}"


def threshold_of(check: CheckSpec) -> float:
    return getattr(check, "threshold", BINARY_THRESHOLD)


def checks_section(data: dict[str, Any], features: Path | None) -> None:
    """Turn ``checks:`` into the fitness and the oracle of ``data`` (in place)."""
    from stellar.features import load_feature_space

    values = None
    if features is not None and Path(features).is_file():
        space = load_feature_space(features)
        values = {f.name: f.values for f in space.features}
    checks = parse_checks(data.pop("checks"), values)
    names = [check_name(c, i) for i, c in enumerate(checks)]
    raw = [c.model_dump(by_alias=True, exclude_none=True) for c in checks]
    data["fitness"] = {"target": "checks", "options": {"checks": raw}, "objectives": names}
    data["oracle"] = {"below": {n: threshold_of(c) for n, c in zip(names, checks, strict=True)}}


def _references(check: CheckSpec) -> list[Ref]:
    found: list[Ref] = []
    for key in ("any", "all", "in_"):
        found += getattr(check, key, None) or []
    for key in ("equals", "reference"):
        found.append(getattr(check, key, None))
    return found


def _check_reference(ref: Ref, values: Mapping[str, Sequence[Any]] | None, where: str) -> None:
    if not isinstance(ref, Reference) or values is None:
        return
    if ref.feature not in values:
        raise ValueError(f"{where}: no feature {ref.feature!r} (features: {', '.join(values)})")
    if ref.table is not None:
        missing = [str(v) for v in values[ref.feature] if str(v) not in ref.table]
        if missing:
            raise ValueError(
                f"{where}: the table of feature {ref.feature!r} has no row for {missing[0]!r}"
            )


def _first_repeat(names: list[str]) -> str:
    return next(n for i, n in enumerate(names) if n in names[:i])
