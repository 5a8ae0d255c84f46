"""Tool calls for ``local:`` models, whose chat templates know no tools.

SmolLM2's chat template renders only ``role`` and ``content``: it has no place for a tool's
schema, an assistant message's ``tool_calls`` or a ``tool`` result. So a request that offers
tools is rewritten in plain text before the template sees it: the tools and the form of a
call (one JSON object ``{"name": ..., "arguments": {...}}`` per line) are described in the
system message, earlier calls are written as those objects and results as user messages
naming the tool. In the answer, every JSON object of that form (or a list of them, or one
inside ``<tool_call>`` tags, as tool-tuned models write) is read as a call; the rest of the
text is the answer's text. Whether a model this small follows the form is its own business:
when it does not, its answer is plain text, and the agent loop takes it as the reply.
"""

from __future__ import annotations

import hashlib
import json
import re
from typing import Any

from stellar.llm.base import Completion, Message, ToolCallRequest

TOOLS_INTRO = "You can call these tools:"
CALL_FORM = (
    "To call a tool, answer with only a JSON object on one line: "
    '{"name": "<tool name>", "arguments": {<arguments>}}. '
    "Call several tools with one such line each. "
    "When you need no tool, answer the user in plain text."
)
_TAGS = re.compile(r"</?tool_call>")


def uses_tools(messages: list[Message], tools: list[dict[str, Any]] | None) -> bool:
    """Whether the request needs rewriting: tools offered, or calls and results in it."""
    return bool(tools) or any(m.get("tool_calls") or m.get("role") == "tool" for m in messages)


def tool_messages(messages: list[Message], tools: list[dict[str, Any]] | None) -> list[Message]:
    """``messages`` in plain ``role``/``content`` form, the tools described in the system
    message (one is added at the start when there is none)."""
    names: dict[str, str] = {}  # call id -> tool name, to say which tool a result is from
    out: list[Message] = []
    for message in messages:
        role, content = message.get("role", "user"), _text(message.get("content"))
        if message.get("tool_calls"):
            lines = [content] if content else []
            for call in message["tool_calls"]:
                function = call.get("function") or {}
                names[str(call.get("id"))] = str(function.get("name", ""))
                lines.append(json.dumps({"name": function.get("name"), "arguments": _args(call)}))
            out.append({"role": "assistant", "content": "\n".join(lines)})
        elif role == "tool":
            tool = names.get(str(message.get("tool_call_id")), "the tool")
            out.append({"role": "user", "content": f"Result of {tool}: {content}"})
        else:
            out.append({"role": role, "content": content})
    if tools:
        functions = [t.get("function", t) for t in tools]
        described = "\n".join(json.dumps(f, ensure_ascii=False) for f in functions)
        block = f"{TOOLS_INTRO}\n{described}\n{CALL_FORM}"
        if out and out[0]["role"] == "system":
            out[0] = {"role": "system", "content": f"{out[0]['content']}\n\n{block}".strip()}
        else:
            out.insert(0, {"role": "system", "content": block})
        if messages and messages[-1].get("role") == "user":  # a small model heeds it most
            out[-1] = {"role": "user", "content": f"{out[-1]['content']}\n\n{_reminder(functions)}"}
    return out


def _reminder(functions: list[dict[str, Any]]) -> str:
    """One line naming the tools, with a call of the first as the example of the form."""
    first = functions[0]
    required = (first.get("parameters") or {}).get("required") or []
    example = {"name": first.get("name"), "arguments": {name: "..." for name in required}}
    names = ", ".join(str(f.get("name")) for f in functions)
    return f"(Tools: {names}. To call one, reply with only JSON like {json.dumps(example)}.)"


def with_tool_calls(completion: Completion) -> Completion:
    """``completion`` with the calls written in its text moved to ``tool_calls``."""
    text, calls = parse_tool_calls(completion.text)
    if not calls:
        return completion
    return Completion(
        text,
        completion.input_tokens,
        completion.output_tokens,
        completion.cached,
        "tool_calls",
        completion.structured,
        calls,
    )


def parse_tool_calls(text: str) -> tuple[str, tuple[ToolCallRequest, ...]]:
    """The calls written in ``text`` (JSON objects with a ``name`` and ``arguments`` or
    ``parameters``, alone or in a list) and the text around them."""
    decoder, found, rest, at = json.JSONDecoder(), [], [], 0
    plain = _TAGS.sub(" ", text)
    i = 0
    while i < len(plain):
        if plain[i] not in "{[":
            i += 1
            continue
        try:
            value, end = decoder.raw_decode(plain, i)
        except json.JSONDecodeError:
            i += 1
            continue
        calls = [_call(v) for v in (value if isinstance(value, list) else [value])]
        if calls and all(c is not None for c in calls):
            found.extend(calls)
            rest.append(plain[at:i])
            at = end
        i = end
    if not found:
        return text, ()
    rest.append(plain[at:])
    digest = hashlib.sha256(text.encode()).hexdigest()[:8]
    requests = tuple(
        ToolCallRequest(f"call_{digest}_{n}", name, arguments)
        for n, (name, arguments) in enumerate(found)
    )
    return " ".join(" ".join(rest).split()), requests


def _call(value: Any) -> tuple[str, str] | None:
    if not isinstance(value, dict) or not isinstance(value.get("name"), str):
        return None
    key = "arguments" if "arguments" in value else "parameters" if "parameters" in value else None
    if key is None:
        return None
    arguments = value[key]
    if not isinstance(arguments, str):
        arguments = json.dumps(arguments, ensure_ascii=False)
    return value["name"], arguments


def _args(call: dict[str, Any]) -> Any:
    """A call's arguments as the model wrote them: parsed when they are JSON."""
    arguments = (call.get("function") or {}).get("arguments", "")
    try:
        return json.loads(arguments) if isinstance(arguments, str) else arguments
    except json.JSONDecodeError:
        return arguments


def _text(content: Any) -> str:
    if content is None:
        return ""
    return content if isinstance(content, str) else json.dumps(content, ensure_ascii=False)
