"""Conversations with an HTTP system under test: the ``conversation:`` block of ``sut``.

Where the server keeps a conversation decides what each turn sends (``state``):

- ``session``: an id per conversation, a fresh uuid4 or read from the first reply
  (``session_id: {from: JSONPATH}``, ``{header: NAME}`` or ``{cookie: NAME}``), sent at
  ``{{session_id}}`` in the body or the URL, or in a header or cookie
  (``session_header``, ``session_cookie``);
- ``history``: the whole message list, ``[{role, content}, ...]`` with the current turn last,
  at ``{{messages}}`` in the body;
- ``squash``: the history flattened into one text (``User: ...`` / ``Assistant: ...`` lines,
  then the current turn) at ``{{input}}``; an approximation of a conversation.

``reset: {method, url, body}`` is requested when a conversation ends.
"""

from __future__ import annotations

import asyncio
import functools
import json
import re
import uuid
from typing import TYPE_CHECKING, Any, Literal
from urllib.parse import quote

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from stellar.config_values import url_problem
from stellar.records import Response

if TYPE_CHECKING:
    from stellar.suts.http import HttpSUT

INPUT, SESSION_ID, MESSAGES = "{{input}}", "{{session_id}}", "{{messages}}"
Message = dict[str, str]


def fill(template: Any, values: dict[str, Any]) -> Any:
    """Replace placeholders in a JSON-like structure: a value that is a placeholder alone
    becomes the value itself (a list, or null for an unknown id); inside a longer string it
    becomes text (a list as JSON, null as nothing)."""
    if isinstance(template, str):
        if template in values:
            return values[template]
        if not any(name in template for name in values):
            return template
        pattern = "|".join(re.escape(name) for name in values)  # one pass: no text refilled
        return re.sub(pattern, lambda m: _as_text(values[m.group()]), template)
    if isinstance(template, dict):
        return {k: fill(v, values) for k, v in template.items()}
    if isinstance(template, list):
        return [fill(v, values) for v in template]
    return template


def _as_text(value: Any) -> str:
    if value is None:
        return ""
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def holds(template: Any, placeholder: str) -> bool:
    """Whether ``placeholder`` stands in a value of a JSON-like structure."""
    if isinstance(template, str):
        return placeholder in template
    if isinstance(template, dict):
        return any(holds(v, placeholder) for v in template.values())
    if isinstance(template, list):
        return any(holds(v, placeholder) for v in template)
    return False


def squash(history: list[Message], text: str) -> str:
    """The earlier turns as ``User:`` / ``Assistant:`` lines, then the current turn (the
    first turn is sent as it is)."""
    if not history:
        return text
    who = {"user": "User", "assistant": "Assistant"}
    lines = [f"{who.get(m['role'], m['role'])}: {m['content']}" for m in history]
    return "\n".join([*lines, f"User: {text}"])


@functools.cache
def _jsonpath(path: str) -> Any:
    from jsonpath_ng.ext import parse as parse_jsonpath  # when an HTTP system is set up

    try:
        return parse_jsonpath(path)
    except Exception as exc:  # the parser raises several types (JsonPathParserError, ...)
        raise ValueError(f"{path!r} is not valid JSONPath ({exc})") from None


class SessionIdSource(BaseModel):
    """Where the first reply carries the session id: exactly one of the three."""

    model_config = ConfigDict(
        extra="forbid", validate_by_name=True, validate_by_alias=True, serialize_by_alias=True
    )

    from_: str | None = Field(None, alias="from", description="JSONPath in the reply's JSON")
    header: str | None = Field(None, description="a reply header")
    cookie: str | None = Field(None, description="a cookie the reply sets")

    @field_validator("from_")
    @classmethod
    def valid_path(cls, path: str | None) -> str | None:
        if path is not None:
            _jsonpath(path)
        return path

    @model_validator(mode="after")
    def exactly_one(self) -> SessionIdSource:
        if sum(v is not None for v in (self.from_, self.header, self.cookie)) != 1:
            raise ValueError('give one of {from: "$.session_id"}, {header: NAME} or {cookie: NAME}')
        return self


class Reset(BaseModel):
    """A request that frees the server's state when a conversation ends."""

    model_config = ConfigDict(extra="forbid")

    method: Literal["DELETE", "POST", "PUT", "GET"] = "DELETE"
    url: str = Field(description="may hold {{session_id}}")
    body: Any = Field(None, description="JSON body (optional); may hold {{session_id}}")

    @field_validator("url")
    @classmethod
    def usable_url(cls, url: str) -> str:
        if problem := url_problem(url.replace(SESSION_ID, "id")):
            raise ValueError(problem)
        return url


class Conversation(BaseModel):
    """How the server keeps a conversation, and what each turn therefore sends."""

    model_config = ConfigDict(extra="forbid")

    state: Literal["session", "history", "squash"] = Field(
        description="session: an id per conversation; history: the message list at "
        "{{messages}}; squash: the history as one text at {{input}} (approximate)"
    )
    session_id: SessionIdSource | None = Field(
        None, description="default: a fresh uuid4; or read from the first reply"
    )
    session_header: str | None = Field(None, description="send the id in this header")
    session_cookie: str | None = Field(None, description="send the id in this cookie")
    reset: Reset | None = Field(None, description="requested when a conversation ends")

    @model_validator(mode="after")
    def session_settings_need_a_session(self) -> Conversation:
        given = [k for k in ("session_id", "session_header", "session_cookie") if getattr(self, k)]
        uses_id = self.reset is not None and (
            SESSION_ID in self.reset.url or holds(self.reset.body, SESSION_ID)
        )
        if self.state != "session" and (given or uses_id):
            name = given[0] if given else f"reset: {SESSION_ID}"
            raise ValueError(f"{name} is used with state: session only (state: {self.state})")
        return self

    def id_header(self, in_template: bool) -> str | None:
        """The header the id is sent in: ``session_header``, else the header it is read from
        unless the id is placed elsewhere (``in_template``: at ``{{session_id}}``)."""
        source, elsewhere = self.session_id, in_template or self.session_cookie
        return self.session_header or (source.header if source and not elsewhere else None)

    def id_cookie(self, in_template: bool) -> str | None:
        """The cookie the id is sent in, as :meth:`id_header` chooses the header."""
        source, elsewhere = self.session_id, in_template or self.session_header
        return self.session_cookie or (source.cookie if source and not elsewhere else None)


def conversation_problem(conversation: Conversation | None, body: Any, url: str) -> str | None:
    """Why the body and URL cannot carry the conversation (None: they can)."""
    has = {name: holds(body, name) for name in (INPUT, SESSION_ID, MESSAGES)}
    state = conversation.state if conversation is not None else None
    if has[MESSAGES] and state != "history":
        return f"the body holds {MESSAGES}, which only conversation: {{state: history}} fills"
    if (has[SESSION_ID] or SESSION_ID in url) and state != "session":
        return f"{SESSION_ID} is filled only with conversation: {{state: session}}"
    if conversation is None:
        return None
    if state == "history" and not has[MESSAGES]:
        return (
            f"state: history sends the message list at {MESSAGES}, and the body has none "
            f'(e.g. body: {{messages: "{MESSAGES}"}})'
        )
    if state != "history" and not has[INPUT]:
        return f"state: {state} sends each turn at {INPUT}, and the body has none"
    if state == "session" and not (
        has[SESSION_ID]
        or SESSION_ID in url
        or conversation.id_header(False)
        or conversation.id_cookie(False)
    ):
        return (
            f"state: session sends the id nowhere: put {SESSION_ID} in the body or the url, "
            "or name session_header or session_cookie"
        )
    return None


class HttpSession:
    """One conversation with an HTTP system: its id or its history, turns in order."""

    def __init__(self, sut: HttpSUT, conversation: Conversation) -> None:
        self.sut, self.conversation = sut, conversation
        fresh = conversation.state == "session" and conversation.session_id is None
        self.session_id: str | None = str(uuid.uuid4()) if fresh else None
        self.history: list[Message] = []
        self.lock = asyncio.Lock()  # one turn at a time, in the order sent
        self.closed = False
        self.in_template = holds(sut.body, SESSION_ID) or SESSION_ID in sut.url

    def values(self, text: str) -> dict[str, Any]:
        """What the placeholders stand for in this turn."""
        state = self.conversation.state
        if state == "history":
            return {INPUT: text, MESSAGES: [*self.history, {"role": "user", "content": text}]}
        if state == "squash":
            return {INPUT: squash(self.history, text)}
        return {INPUT: text, SESSION_ID: self.session_id}

    def id_headers(self) -> dict[str, str]:
        """The id in its header or cookie, once it is known."""
        if self.session_id is None:
            return {}
        headers = {}
        if name := self.conversation.id_header(self.in_template):
            headers[name] = self.session_id
        if name := self.conversation.id_cookie(self.in_template):
            given = self.sut.client.headers.get("Cookie")
            cookie = f"{name}={self.session_id}"
            headers["Cookie"] = f"{given}; {cookie}" if given else cookie
        return headers

    def url(self, template: str) -> str:
        return template.replace(SESSION_ID, quote(self.session_id or "", safe=""))

    async def send(self, text: str) -> Response:
        async with self.lock:
            values = self.values(text)
            response, reply, payload = await self.sut.exchange(
                self.sut.method,
                self.url(self.sut.url),
                fill(self.sut.body, values),
                self.id_headers(),
            )
            if response.error is not None:
                return response
            if self.conversation.state == "session" and self.session_id is None:
                self.session_id = self.read_id(reply, payload)
                if self.session_id is None:
                    return Response(
                        text=response.text,
                        data=response.data,
                        error=f"no session id in the first reply ({self.source()})",
                    )
            self.history += [
                {"role": "user", "content": text},
                {"role": "assistant", "content": response.text},
            ]
            return response

    async def rewind(self) -> bool:
        """Forget the last exchange where the history is sent each turn (``history``,
        ``squash``); a server that keeps the session cannot be made to forget."""
        if self.conversation.state == "session" or not self.history:
            return False
        async with self.lock:
            del self.history[-2:]
        return True

    def read_id(self, reply: Any, payload: Any) -> str | None:
        """The session id the first reply carries where ``session_id`` says."""
        source = self.conversation.session_id
        if source is None:
            return None
        if source.header:
            return reply.headers.get(source.header) or None
        if source.cookie:
            return reply.cookies.get(source.cookie) or None
        found = _jsonpath(source.from_ or "$").find(payload)
        value = found[0].value if found else None
        return None if value is None or value == "" else str(value)

    def source(self) -> str:
        source = self.conversation.session_id
        if source is None:
            return "generated"
        if source.header:
            return f"header {source.header}"
        return f"cookie {source.cookie}" if source.cookie else f"at {source.from_}"

    async def close(self) -> None:
        """Request ``reset`` (once); an id never learnt leaves nothing to reset."""
        reset = self.conversation.reset
        if self.closed or reset is None:
            return
        self.closed = True
        needs_id = SESSION_ID in reset.url or holds(reset.body, SESSION_ID)
        if needs_id and self.session_id is None:
            return
        values = {SESSION_ID: self.session_id}
        body = None if reset.body is None else fill(reset.body, values)
        response, _, _ = await self.sut.exchange(
            reset.method, self.url(reset.url), body, self.id_headers(), parse=False
        )
        if response.error is not None:
            raise RuntimeError(f"reset {reset.method} {self.url(reset.url)}: {response.error}")
