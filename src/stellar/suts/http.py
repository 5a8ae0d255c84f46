"""An HTTP endpoint as the system under test.

The request body is a JSON template in which the string ``{{input}}`` stands for the test
input; the answer text and structured data are picked out of the JSON reply with JSONPath
(``$.answer``, ``$.choices[0].message.content``). Header values may name environment
variables as ``${NAME}``, so secrets never sit in configuration files. Cookies a reply sets
are never sent back by themselves: tests do not share the server's state. With a
``conversation:`` block the system holds conversations (``open()``, ``http_conversation.py``).
"""

from __future__ import annotations

import contextlib
import json
import os
import re
from http.cookiejar import CookieJar, DefaultCookiePolicy
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, ValidationInfo, field_validator

from stellar.config_values import url_problem
from stellar.errors import StellarError
from stellar.records import Response
from stellar.suts.http_conversation import (
    MESSAGES,
    Conversation,
    HttpSession,
    conversation_problem,
    fill,
    holds,
)

PLACEHOLDER = "{{input}}"
MAX_BYTES = 64 * 2**20  # default cap on a reply's size
_ENV = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")


def fill_template(template: Any, text: str) -> Any:
    """Replace ``{{input}}`` everywhere in a JSON-like structure."""
    return fill(template, {PLACEHOLDER: text})


def holds_placeholder(template: Any) -> bool:
    """Whether ``{{input}}`` stands in a value of a JSON-like structure (where
    :func:`fill_template` replaces it)."""
    return holds(template, PLACEHOLDER)


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


class _NoCookies(DefaultCookiePolicy):
    """Keep no cookie a reply sets: a session cookie is sent only as ``conversation`` says."""

    def set_ok(self, cookie: Any, request: Any) -> bool:
        return False


_NO_COOKIES = _NoCookies()


def _conversation(
    given: Conversation | dict[str, Any] | None, body: Any, url: str
) -> Conversation | None:
    """The conversation settings checked against the body and URL (one-line errors)."""
    try:
        conversation = given if not isinstance(given, dict) else Conversation.model_validate(given)
    except ValidationError as exc:
        err = exc.errors()[0]
        where = ".".join(["conversation", *(str(p) for p in err["loc"])])
        raise StellarError(f"HTTP system under test: {where}: {err['msg']}") from None
    if problem := conversation_problem(conversation, body, url):
        raise StellarError(f"HTTP system under test: conversation: {problem}")
    return conversation


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

        conversation: Conversation | None = Field(
            None,
            validate_default=True,
            description="keep conversations: state session, history or squash (docs: README)",
        )

        @field_validator("body")
        @classmethod
        def carries_the_input(cls, body: Any) -> Any:
            if body is not None and not (holds_placeholder(body) or holds(body, MESSAGES)):
                raise ValueError(
                    f"no {PLACEHOLDER} in it: the system would never see a test's input "
                    f'(e.g. {{text: "{PLACEHOLDER}"}}; {MESSAGES} with conversation state: '
                    "history)"
                )
            return body

        @field_validator("conversation")
        @classmethod
        def body_carries_the_conversation(
            cls, conversation: Conversation | None, info: ValidationInfo
        ) -> Conversation | None:
            if "body" in info.data and "url" in info.data:  # both valid themselves
                body = {"text": PLACEHOLDER} if info.data["body"] is None else info.data["body"]
                if problem := conversation_problem(conversation, body, info.data["url"]):
                    raise ValueError(problem)
            return conversation

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
        conversation: Conversation | dict[str, Any] | None = None,
    ) -> None:
        if problem := url_problem(url):
            raise StellarError(f"HTTP system under test: url {problem}")
        self.url, self.method = url, method.upper()
        self.body = {"text": PLACEHOLDER} if body is None else body
        self.answer_path = _compile(answer, "answer")
        self.data_path = _compile(data, "data") if data else None
        self.conversation = _conversation(conversation, self.body, url)
        if self.conversation is not None:
            self.open = self._open  # only a system that keeps conversations has open()
        resolved = {k: expand_env(v) for k, v in (headers or {}).items()}
        import httpx  # ~0.1 s: when an HTTP system is tested, not when the plugins are listed

        self.client = httpx.AsyncClient(
            headers=resolved, timeout=timeout, cookies=CookieJar(_NO_COOKIES)
        )
        self.max_bytes = max_bytes

    @property
    def conversation_state(self) -> str | None:
        """``session``, ``history`` or ``squash``; None: single turns only."""
        return self.conversation.state if self.conversation is not None else None

    @property
    def approximate(self) -> str | None:
        """Why a conversation is only approximated (``squash``: the history in one text), or
        None when it is held as the server holds one."""
        if self.conversation_state != "squash":
            return None
        return (
            "the system was sent each conversation's history flattened into one text "
            "(state: squash), not held in a conversation: results approximate its behaviour"
        )

    async def _open(self) -> HttpSession:
        assert self.conversation is not None
        return HttpSession(self, self.conversation)

    async def query(self, text: str) -> Response:
        """The answer to one input; with ``conversation`` set, a conversation of one turn."""
        if self.conversation is not None:
            session = HttpSession(self, self.conversation)
            try:
                return await session.send(text)
            finally:
                with contextlib.suppress(Exception):  # the answer counts, not the reset
                    await session.close()
        response, _, _ = await self.exchange(self.method, self.url, fill_template(self.body, text))
        return response

    async def exchange(
        self,
        method: str,
        url: str,
        body: Any,
        headers: dict[str, str] | None = None,
        parse: bool = True,
    ) -> tuple[Response, Any, Any]:
        """One request: the Response read from the reply (only its status without ``parse``),
        the httpx reply (for its headers and cookies) and the JSON payload."""
        async with self.client.stream(method, url, json=body, headers=headers) as reply:
            raw = bytearray()
            async for chunk in reply.aiter_bytes():
                raw += chunk
                if len(raw) > self.max_bytes:  # read no further: memory stays bounded
                    error = f"reply longer than {self.max_bytes:,} bytes"
                    return Response(text="", error=error), reply, None
        shown = bytes(raw[:300]).decode(reply.encoding or "utf-8", errors="replace")
        if reply.status_code >= 400:
            return Response(text="", error=f"HTTP {reply.status_code}: {shown}"), reply, None
        if not parse:
            return Response(text=""), reply, None
        try:
            payload = json.loads(bytes(raw))
        except ValueError:
            return Response(text="", error=f"reply is not JSON: {shown!r}"), reply, None
        return self._read(payload), reply, payload

    def _read(self, payload: Any) -> Response:
        """The answer and data picked out of a JSON reply."""
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
