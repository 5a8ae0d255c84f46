"""An on-disk response cache: the same request is never paid for twice.

Keyed by a SHA-256 of the model name, the messages and the sampling parameters, the tools
offered included (the base URL and the key are not part of it, so a server that moves keeps
its cache). SQLite in WAL mode
with a busy timeout, so parallel runs can share one cache file.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import threading
import time
from pathlib import Path
from typing import Any

from stellar.llm.base import Completion, ToolCallRequest
from stellar.llm.usage import record_call
from stellar.paths import cache_root


def default_cache_path() -> Path:
    return cache_root() / "llm-responses.sqlite"


def request_key(model: str, messages: list[dict[str, Any]], params: dict[str, Any]) -> str:
    payload = json.dumps(
        {"model": model, "messages": messages, "params": params},
        sort_keys=True,
        ensure_ascii=False,
        separators=(",", ":"),
    )
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()


class ResponseCache:
    """Completions by request key."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._db = sqlite3.connect(self.path, timeout=30, check_same_thread=False)
        self._lock = threading.Lock()
        with self._lock:
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("PRAGMA synchronous=NORMAL")
            self._db.execute(
                "CREATE TABLE IF NOT EXISTS responses (key TEXT PRIMARY KEY, model TEXT, "
                "text TEXT, input_tokens INT, output_tokens INT, finish_reason TEXT, "
                "structured INT, created REAL, tool_calls TEXT)"
            )
            self._add_tool_calls()
            self._db.commit()

    def _add_tool_calls(self) -> None:
        """A cache written before answers could call tools gets the column (another process
        may add it at the same moment)."""
        columns = {row[1] for row in self._db.execute("PRAGMA table_info(responses)")}
        if "tool_calls" not in columns:
            try:
                self._db.execute("ALTER TABLE responses ADD COLUMN tool_calls TEXT")
            except sqlite3.OperationalError as exc:
                if "duplicate column" not in str(exc):
                    raise

    def get(self, key: str) -> Completion | None:
        with self._lock:
            row = self._db.execute(
                "SELECT text, input_tokens, output_tokens, finish_reason, structured, tool_calls "
                "FROM responses WHERE key = ?",
                (key,),
            ).fetchone()
        if row is None:
            return None
        text, tokens_in, tokens_out, finish, structured, calls = row
        tool_calls = tuple(ToolCallRequest(*call) for call in json.loads(calls or "[]"))
        return Completion(text, tokens_in, tokens_out, True, finish, bool(structured), tool_calls)

    def put(self, key: str, model: str, completion: Completion) -> None:
        with self._lock:
            self._db.execute(
                "INSERT OR REPLACE INTO responses (key, model, text, input_tokens, output_tokens, "
                "finish_reason, structured, created, tool_calls) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    key,
                    model,
                    completion.text,
                    completion.input_tokens,
                    completion.output_tokens,
                    completion.finish_reason,
                    int(completion.structured),
                    time.time(),
                    _calls_json(completion.tool_calls),
                ),
            )
            self._db.commit()

    def __len__(self) -> int:
        with self._lock:
            return self._db.execute("SELECT COUNT(*) FROM responses").fetchone()[0]

    def close(self) -> None:
        with self._lock:
            self._db.close()


class StoreOnly(ResponseCache):
    """A view of ``cache`` that stores answers and never hands one back: for a role whose
    answers must be fresh (a replay's system under test). It shares the cache's connection."""

    def __init__(self, cache: ResponseCache) -> None:
        self.path, self._db, self._lock = cache.path, cache._db, cache._lock

    def get(self, key: str) -> Completion | None:
        return None

    def close(self) -> None:
        """The connection is the cache's: closed with it."""


def call_params(
    temperature: float | None,
    max_tokens: int | None,
    seed: int | None,
    json_schema: dict[str, Any] | None,
    sample: int,
    tools: list[dict[str, Any]] | None = None,
) -> dict[str, Any]:
    """The sampling parameters of a call that are set, and the tools it offers: part of its
    cache key."""
    params = {
        "temperature": temperature,
        "max_tokens": max_tokens,
        "seed": seed,
        "json_schema": json_schema,
        "sample": sample or None,
        "tools": tools or None,
    }
    return {k: v for k, v in params.items() if v is not None}


def cached_answer(
    cache: ResponseCache | None,
    model: str,
    role: str,
    messages: list[dict[str, Any]],
    params: dict[str, Any],
) -> tuple[str, Completion | None]:
    """The request's cache key, and its cached answer (booked as a cached call) if any
    (without a cache: no key, no answer)."""
    if cache is None:
        return "", None
    key = request_key(model, messages, params)
    hit = cache.get(key)
    if hit is not None:
        record_call(
            role, calls=1, cached=1, input_tokens=hit.input_tokens, output_tokens=hit.output_tokens
        )
    return key, hit


def _calls_json(calls: tuple[ToolCallRequest, ...]) -> str | None:
    if not calls:
        return None
    return json.dumps([[c.id, c.name, c.arguments] for c in calls], ensure_ascii=False)
