"""The report page's frame: one HTML file with its style, script and data inline.

The CSS and JavaScript are package files (``analysis/html/``); the data is JSON in a
``<script type="application/json">`` block with ``<``, ``>``, ``&``, U+2028 and U+2029
escaped, so that no text can close the block. The Content-Security-Policy allows nothing but
the page's own script and style (by their SHA-256) and ``data:`` images; the script inserts
every text with ``textContent``. Nothing that came from a system under test or a model runs.
"""

from __future__ import annotations

import base64
import hashlib
import json
import re
from importlib.resources import files
from typing import Any

from jinja2 import Environment
from markupsafe import Markup

_JSON_ESCAPES = {"<": "\\u003c", ">": "\\u003e", "&": "\\u0026"}
_JSON_ESCAPES |= {"\u2028": "\\u2028", "\u2029": "\\u2029"}
_JSON_UNSAFE = re.compile("[<>&\u2028\u2029]")
_SURROGATE = re.compile("[\ud800-\udfff]")


def render(payload: dict[str, Any]) -> str:
    """The HTML page showing ``payload`` (``payload["title"]`` is its title)."""
    html = files("stellar.analysis") / "html"
    css = html.joinpath("report.css").read_text(encoding="utf-8")
    js = html.joinpath("report.js").read_text(encoding="utf-8")
    csp = (
        f"default-src 'none'; script-src '{sha256(js)}'; style-src '{sha256(css)}'; "
        "img-src data:; base-uri 'none'; form-action 'none'"
    )
    template = Environment(autoescape=True, keep_trailing_newline=True).from_string(
        html.joinpath("report.html.j2").read_text(encoding="utf-8")
    )
    return template.render(
        title=payload["title"],
        csp=Markup(csp),  # hashes and keywords only
        css=Markup(css),
        js=Markup(js),
        data=Markup(embed_json(payload)),
    )


def embed_json(value: Any) -> str:
    """``value`` as JSON that is safe inside a ``<script>`` element: no ``<``, ``>``, ``&``,
    line or paragraph separator, or lone surrogate appears in it as such."""
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    text = _JSON_UNSAFE.sub(lambda m: _JSON_ESCAPES[m.group()], text)
    return _SURROGATE.sub("\ufffd", text)


def sha256(text: str) -> str:
    """The CSP source that allows exactly the inline script or style ``text``."""
    digest = hashlib.sha256(text.encode("utf-8")).digest()
    return "sha256-" + base64.b64encode(digest).decode("ascii")


def cut(text: str | None, limit: int) -> str:
    """``text`` up to ``limit`` characters, saying how long it was when cut."""
    text = text or ""
    return text if len(text) <= limit else f"{text[:limit]}… [{len(text):,} characters]"


def duration(seconds: float) -> str:
    if seconds < 60:
        return f"{seconds:.1f} s"
    minutes, secs = divmod(round(seconds), 60)
    if minutes < 60:
        return f"{minutes} min {secs} s"
    return f"{minutes // 60} h {minutes % 60} min"
