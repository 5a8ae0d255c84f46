"""The simplest offline generator: format strings over the candidate's values."""

from __future__ import annotations

import random
import re
import string
from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from stellar.errors import StellarError
from stellar.features import Candidate, FeatureSpace
from stellar.records import TestInput


class TemplateGenerator:
    """Format strings: one of ``templates`` at random, ``{feature}`` fields filled in."""

    class Options(BaseModel):
        model_config = ConfigDict(extra="forbid")

        templates: list[str] = Field(min_length=1, description='e.g. "Find a {cuisine} place"')

    def __init__(self, templates: str | list[str]) -> None:
        self.templates = [templates] if isinstance(templates, str) else list(templates)
        if not self.templates:
            raise StellarError("template generator: 'templates' must not be empty")
        for template in self.templates:
            try:
                list(string.Formatter().parse(template))
            except ValueError as exc:
                raise StellarError(
                    f"template generator: bad template {template!r} ({exc})"
                ) from None

    @staticmethod
    def check_config(space: FeatureSpace, options: Mapping[str, Any]) -> None:
        """At load: every ``{field}`` of every template names a feature of the space."""
        names = [f.name for f in space.features]
        for number, template in enumerate(options.get("templates") or []):
            for field in _fields(template, f"templates[{number}]"):
                if field not in names:
                    raise ValueError(
                        f"templates[{number}] {template!r} names {{{field}}}, which is no "
                        f"feature (features: {', '.join(names)})"
                    )

    async def generate(self, candidate: Candidate, rng: random.Random) -> TestInput:
        template = rng.choice(self.templates)
        try:
            return TestInput(text=template.format(**candidate.values))
        except KeyError as exc:
            raise StellarError(f"template {template!r} names unknown feature {exc}") from None


def _fields(template: str, where: str) -> list[str]:
    """The feature each ``{field}`` of a format string names (``{a.b[0]}`` names ``a``)."""
    try:
        parsed = list(string.Formatter().parse(template))
    except ValueError as exc:
        raise ValueError(f"{where} {template!r}: {exc}") from None
    fields = [field for _, field, _, _ in parsed if field is not None]
    for field in fields:
        if re.search(r"[.\[]", field):  # a feature's value is text: it has no parts
            raise ValueError(
                f"{where} {template!r}: {{{field}}} reads a part of a feature's value, "
                "which is text: write {" + re.split(r"[.\[]", field, maxsplit=1)[0] + "}"
            )
    return fields
