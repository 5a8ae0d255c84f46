"""An HTTP endpoint as the system under test.

The request body is a JSON template in which the string ``{{input}}`` stands for the test
input; the answer text and structured data are picked out of the JSON reply with JSONPath
(``$.answer``, ``$.choices[0].message.content``). Header values may name environment
variables as ``${NAME}``, so secrets never sit in configuration files.
"""

from __future__ import annotations

import json
import os
import re
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from stellar.config_values import url_problem
from stellar.errors import StellarError
from stellar.records import Response

PLACEHOLDER = "{{input}}"
MAX_BYTES = 64 * 2**20  # default cap on a reply's size
_ENV = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")


def fill_template(template: Any, text: str) -> Any:
    """Replace ``{{input}}`` everywhere in a JSON-like structure."""
    if isinstance(template, str):
        return text if template == PLACEHOLDER else template.replace(PLACEHOLDER, text)
    if isinstance(template, dict):
        return {k: fill_template(v, text) for k, v in template.items()}
    if isinstance(template, list):
        return [fill_template(v, text) for v in template]
    return template


def holds_placeholder(template: Any) -> bool:
    """Whether ``{{input}}`` stands in a value of a JSON-like structure (where
    :func:`fill_template` replaces it)."""
    if isinstance(template, str):
        return PLACEHOLDER in template
    if isinstance(template, dict):
        return any(holds_placeholder(v) for v in template.values())
    if isinstance(template, list):
        return any(holds_placeholder(v) for v in template)
    return False


def expand_env(value: str) -> str:
    """Substitute ``${NAME}`` with the environment variable; a missing one is an error."""

    def lookup(match: re.Match[str]) -> str:
        name = match.group(1)
        if name not in os.environ:
            raise StellarError(f"environment variable {name} is not set (used in an HTTP header)")
        return os.environ[name]

    return _ENV.sub(lookup, value)


def _compile(path: str, what: str):
    from jsonpath_ng.ext import parse as parse_jsonpath  # when an HTTP system is set up

    try:
        return parse_jsonpath(path)
    except Exception as exc:  # the parser raises several types (JsonPathParserError, ...)
        raise StellarError(f"HTTP {what} path {path!r} is not valid JSONPath ({exc})") from None


class HttpSUT:
    """An HTTP endpoint: a JSON body per test, the answer read from the JSON reply."""

    class Options(BaseModel):
        model_config = ConfigDict(extra="forbid")

        url: str = Field(description="http(s) URL of the endpoint")
        method: Literal["POST", "PUT"] = "POST"
        body: Any = Field(None, description='JSON body; "{{input}}" is replaced by the input')
        answer: str = Field("$.answer", description="JSONPath of the answer text")
        data: str | None = Field(None, description="JSONPath of structured data (optional)")
        headers: dict[str, str] = Field(
            default_factory=dict, description="${VAR} is read from the environment"
        )
        timeout: float = Field(30.0, gt=0, description="seconds per request")
        max_bytes: int = Field(
            MAX_BYTES, ge=1, description="a longer reply is an error, and is not read on"
        )

        @field_validator("url")
        @classmethod
        def usable_url(cls, url: str) -> str:
            if problem := url_problem(url):
                raise ValueError(problem)
            return url

        @field_validator("body")
        @classmethod
        def carries_the_input(cls, body: Any) -> Any:
            if body is not None and not holds_placeholder(body):
                raise ValueError(
                    f"no {PLACEHOLDER} in it: the system would never see a test's input "
                    f'(e.g. {{text: "{PLACEHOLDER}"}})'
                )
            return body

    def __init__(
        self,
        url: str,
        body: Any = None,
        answer: str = "$.answer",
        data: str | None = None,
        headers: dict[str, str] | None = None,
        method: str = "POST",
        timeout: float = 30.0,
        max_bytes: int = MAX_BYTES,
    ) -> None:
        if problem := url_problem(url):
            raise StellarError(f"HTTP system under test: url {problem}")
        self.url, self.method = url, method.upper()
        self.body = {"text": PLACEHOLDER} if body is None else body
        self.answer_path = _compile(answer, "answer")
        self.data_path = _compile(data, "data") if data else None
        resolved = {k: expand_env(v) for k, v in (headers or {}).items()}
        import httpx  # ~0.1 s: when an HTTP system is tested, not when the plugins are listed

        self.client = httpx.AsyncClient(headers=resolved, timeout=timeout)
        self.max_bytes = max_bytes

    async def query(self, text: str) -> Response:
        body = fill_template(self.body, text)
        async with self.client.stream(self.method, self.url, json=body) as reply:
            raw = bytearray()
            async for chunk in reply.aiter_bytes():
                raw += chunk
                if len(raw) > self.max_bytes:  # read no further: memory stays bounded
                    return Response(text="", error=f"reply longer than {self.max_bytes:,} bytes")
        shown = bytes(raw[:300]).decode(reply.encoding or "utf-8", errors="replace")
        if reply.status_code >= 400:
            return Response(text="", error=f"HTTP {reply.status_code}: {shown}")
        try:
            payload = json.loads(bytes(raw))
        except ValueError:
            return Response(text="", error=f"reply is not JSON: {shown!r}")
        found = self.answer_path.find(payload)
        if not found:
            return Response(text="", data=payload, error=f"no answer at {self.answer_path}")
        data = None
        if self.data_path is not None:
            matches = self.data_path.find(payload)
            if not matches:  # a mapping mistake would otherwise be scored as "no data"
                return Response(
                    text="",
                    data=payload,
                    error=f"no data at {self.data_path} in the reply: map it with sut.data "
                    "(the JSONPath of the data in the reply)",
                )
            data = matches[0].value if len(matches) == 1 else [m.value for m in matches]
        answer = found[0].value
        return Response(text=answer if isinstance(answer, str) else str(answer), data=data)

    async def aclose(self) -> None:
        await self.client.aclose()
