"""The simplest offline generator: format strings over the candidate's values."""

from __future__ import annotations

import random
import string

from pydantic import BaseModel, ConfigDict, Field

from stellar.errors import StellarError
from stellar.features import Candidate
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

    async def generate(self, candidate: Candidate, rng: random.Random) -> TestInput:
        template = rng.choice(self.templates)
        try:
            return TestInput(text=template.format(**candidate.values))
        except KeyError as exc:
            raise StellarError(f"template {template!r} names unknown feature {exc}") from None
