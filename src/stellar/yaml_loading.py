"""The one YAML loader for what users hand the tool: configurations, use cases, feature files,
``--set`` values and ``experiment.yaml``.

A safe loader with limits, so that a hostile or broken file is a one-line error rather than a
hang, a crash or silent acceptance: at most ``MAX_BYTES`` per file, ``MAX_DEPTH`` levels of
nesting, ``MAX_ALIASES`` aliases and ``MAX_NODES`` values once aliases are expanded (an alias
"bomb" of a few hundred bytes would otherwise grow to gigabytes); duplicate keys, recursive
aliases, NUL characters and lone surrogates are refused.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import yaml
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from stellar.errors import ConfigError, StellarError

MAX_BYTES = 10 * 1024 * 1024
MAX_DEPTH = 100
MAX_ALIASES = 100
MAX_NODES = 1_000_000
_NOT_TEXT = re.compile(r"[\x00\ud800-\udfff]")  # NUL, lone surrogates (from escapes)
_MERGE = "tag:yaml.org,2002:merge"


class Refused(yaml.MarkedYAMLError):
    """A document over a limit, or with a duplicate key: valid YAML the tool will not take."""


class LimitedLoader(yaml.SafeLoader):
    """``yaml.SafeLoader`` with the limits above, checked while the document is composed."""

    def __init__(self, stream: str) -> None:
        super().__init__(stream)
        self._depth = self._aliases = 0
        self._sizes: dict[int, int] = {}  # id(node) -> values it stands for, aliases expanded

    def compose_node(self, parent: Node | None, index: Any) -> Node:
        if self.check_event(yaml.AliasEvent):
            mark = self.peek_event().start_mark
            self._aliases += 1
            if self._aliases > MAX_ALIASES:
                raise Refused(None, None, f"more than {MAX_ALIASES} aliases (*name)", mark)
            node = super().compose_node(parent, index)
            if id(node) not in self._sizes:
                raise Refused(None, None, "an alias inside the node it names (recursive)", mark)
            return node
        self._depth += 1
        try:
            if self._depth > MAX_DEPTH:
                mark = self.peek_event().start_mark
                raise Refused(None, None, f"nested deeper than {MAX_DEPTH} levels", mark)
            node = super().compose_node(parent, index)
        finally:
            self._depth -= 1
        if isinstance(node, SequenceNode):
            children = node.value
        elif isinstance(node, MappingNode):
            children = [child for pair in node.value for child in pair]
        else:
            children = []
        size = 1 + sum(self._sizes[id(child)] for child in children)
        if size > MAX_NODES:
            problem = f"more than {MAX_NODES:,} values once aliases are expanded"
            raise Refused(None, None, problem, node.start_mark)
        self._sizes[id(node)] = size
        return node

    def construct_mapping(self, node: Node, deep: bool = False) -> dict[Any, Any]:
        if isinstance(node, MappingNode):
            first: dict[Any, int] = {}
            for key_node, _ in node.value:
                if not isinstance(key_node, ScalarNode) or key_node.tag == _MERGE:
                    continue
                key = self.construct_object(key_node)
                line = key_node.start_mark.line + 1
                if key in first:
                    problem, mark = f"duplicate key {key!r}", key_node.start_mark
                    raise Refused(None, None, problem, mark, f"first at line {first[key]}")
                first[key] = line
        return super().construct_mapping(node, deep=deep)

    def construct_scalar(self, node: Node) -> Any:
        value = super().construct_scalar(node)
        if isinstance(value, str) and _NOT_TEXT.search(value):
            problem = "a NUL character or a lone surrogate is not text"
            raise Refused(None, None, problem, node.start_mark)
        return value


# dates stay text (configurations are JSON-like); binary data is refused as an unknown tag
LimitedLoader.add_constructor("tag:yaml.org,2002:timestamp", LimitedLoader.construct_scalar)
LimitedLoader.yaml_constructors = {
    tag: constructor
    for tag, constructor in LimitedLoader.yaml_constructors.items()
    if tag != "tag:yaml.org,2002:binary"
}


def parse_yaml(text: str) -> Any:
    """The document in ``text``; raises ``yaml.YAMLError`` (``Refused`` over a limit)."""
    if len(text) > MAX_BYTES:
        raise Refused(None, None, f"longer than {MAX_BYTES // 2**20} MB", None)
    loader = LimitedLoader(text)
    try:
        return loader.get_single_data()
    finally:
        loader.dispose()


def describe(exc: yaml.YAMLError) -> str:
    """A YAML error in one line: what is wrong and the line."""
    mark = getattr(exc, "problem_mark", None)
    line = f" at line {mark.line + 1}" if mark is not None else ""
    problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
    if isinstance(exc, Refused):
        return f"{problem}{line}" + (f" ({exc.note})" if exc.note else "")
    return f"not valid YAML{line} ({problem})"


def read_yaml_file(path: Path) -> Any:
    """The YAML document in the file ``path``, with one-line errors (ConfigError)."""
    try:
        if path.is_dir():
            raise ConfigError(path, "", "a folder, not a YAML file")
        if path.exists() and not path.is_file():
            raise ConfigError(path, "", "not a regular file")
        with path.open("rb") as file:
            raw = file.read(MAX_BYTES + 1)
    except FileNotFoundError:
        raise ConfigError(path, "", "file not found") from None
    except (OSError, ValueError) as exc:  # ValueError: a NUL in the path
        raise ConfigError(
            path, "", f"cannot be read ({getattr(exc, 'strerror', None) or exc})"
        ) from None
    if len(raw) > MAX_BYTES:
        raise ConfigError(path, "", f"larger than {MAX_BYTES // 2**20} MB")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        problem = f"not UTF-8 text (byte {raw[exc.start]:#04x} at offset {exc.start})"
        raise ConfigError(path, "", problem) from None
    try:
        return parse_yaml(text)
    except yaml.YAMLError as exc:
        raise ConfigError(path, "", describe(exc)) from None


def key_value(item: str, flag: str = "--set") -> tuple[str, Any]:
    """``KEY=VALUE`` of a command-line flag, the value read as YAML; a malformed one is a
    StellarError naming the flag."""
    key, sep, value = item.partition("=")
    if not sep or not key.strip():
        example = "NAME=VALUE" if flag == "--option" else "judge.votes=3"
        raise StellarError(f"{flag} {item!r}: write KEY=VALUE, e.g. {flag} {example}")
    try:
        return key.strip(), parse_yaml(value)
    except yaml.YAMLError as exc:
        raise StellarError(f"{flag} {item!r}: {describe(exc)}") from None
