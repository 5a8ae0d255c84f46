"""The system under test in a configuration: the forms ``--sut`` takes, and the data a use
case's fitness needs it to return."""

from __future__ import annotations

import re
from typing import Any

from stellar.config_schema import RunConfig
from stellar.config_values import OFFLINE
from stellar.errors import ConfigError
from stellar.llm.models import is_model_name
from stellar.usecase import UseCase


def sut_setting(text: str) -> dict[str, Any] | str:
    """``--sut``: a model name, an http(s) URL, ``module:function`` or ``offline``."""
    if text == OFFLINE:
        return OFFLINE
    if is_model_name(text):
        return {"type": "chat", "model": text}
    if text.startswith(("http://", "https://")):
        return {"type": "http", "url": text}
    if re.match(r"[A-Za-z][A-Za-z0-9+.-]*://", text):  # ftp://, htp://: a URL, not a module
        raise ValueError(f"{text!r}: only http:// and https:// URLs can be tested")
    if ":" in text or "." in text:
        return {"type": "python", "target": text}
    raise ValueError(
        f"{text!r} is not a system under test: give a model (openai:gpt-4o-mini), "
        "an http(s) URL, module:function, or offline"
    )


def check_sut_data(config: RunConfig, use_case: UseCase, source: object) -> None:
    """Refuse a system under test that returns no data when the use case's own fitness needs
    it (``response.needs_data``): every test would be scored without it."""
    own = use_case.settings.get("fitness")
    own_target = own.get("target") if isinstance(own, dict) else None
    if not use_case.needs_data or config.fitness.target != own_target:
        return
    needs = f"use case {use_case.name!r} scores the data every answer returns"
    if config.sut.type == "chat":
        raise ConfigError(
            source,
            "sut",
            f"{needs}, and a chat model returns text only: test a system that returns it "
            "(an http(s) URL with sut.data, or module:function returning {text, data}), "
            "or a use case that scores the text alone",
        )
    if config.sut.type == "http" and not config.sut.options.get("data"):
        default = use_case.response.get("data")
        example = f" (the use case's default: {default})" if default else ""
        raise ConfigError(
            source,
            "sut.data",
            f"{needs}, and none is mapped: set sut.data to the JSONPath of that data in "
            f"the reply{example}",
        )
