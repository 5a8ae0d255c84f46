"""Loading user code named by a dotted path ``package.module:attribute``."""

from __future__ import annotations

import functools
import importlib
import inspect
from typing import Any

from stellar.errors import StellarError


def load_object(path: str, what: str = "object") -> Any:
    """Import ``package.module:attr`` (or ``package.module.attr``); clear error otherwise."""
    module_name, sep, attr = path.partition(":")
    if not sep:
        module_name, _, attr = path.rpartition(".")
    if not module_name or not attr:
        raise StellarError(f"{what} {path!r}: expected 'package.module:attribute'")
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise StellarError(f"{what} {path!r}: cannot import {module_name!r} ({exc})") from None
    try:
        return functools.reduce(getattr, attr.split("."), module)
    except AttributeError:
        raise StellarError(f"{what} {path!r}: {module_name!r} has no {attr!r}") from None


def instantiate(obj: Any, options: dict[str, Any]) -> Any:
    """A class is built with the options; a function gets them bound as keyword arguments."""
    if inspect.isclass(obj):
        try:
            return obj(**options)
        except TypeError as exc:
            raise StellarError(f"cannot build {obj.__qualname__} with {options} ({exc})") from None
    return functools.partial(obj, **options) if options else obj


def accepted_kwargs(func: Any, options: dict[str, Any]) -> dict[str, Any]:
    """The options that ``func`` accepts (all of them if it takes ``**kwargs``)."""
    params = inspect.signature(func).parameters.values()
    if any(p.kind is p.VAR_KEYWORD for p in params):
        return dict(options)
    names = {p.name for p in params}
    return {k: v for k, v in options.items() if k in names}
