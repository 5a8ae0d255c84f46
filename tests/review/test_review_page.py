"""The review page in a real headless Chromium (tests/browser.py), served by `stellar review`
in a process of its own: its policy, marks by keyboard and mouse, a kill -9 mid-review, and
the run's hostile texts kept as text. Chromium is Debian's ``chromium`` package; without it
these tests are skipped, except in CI (``CI`` set), where a missing browser is a failure."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest
from browser import Browser, find_chromium, needs_chromium
from conftest import cli
from review_server import Server, builtin_run, hostile_run, serving

from stellar.review.marks import MARKS_NAME, read_marks

CHROMIUM = find_chromium()
DOCS_SCREENSHOT = Path(__file__).parents[2] / "docs" / "images" / "review-page.png"

pytestmark = needs_chromium(CHROMIUM)

# what a payload in an input or answer would bring into the page, and what it would set
INJECTED = """[
  document.querySelectorAll('#main script, #main iframe, #main img, #main style,'
    + ' #main svg, #main body, #main a, a[href^="javascript"]').length,
  [...document.querySelectorAll('*')].filter(e => [...e.attributes]
    .some(a => a.name.startsWith('on') || a.name === 'srcdoc')).length,
  typeof window.pwned, typeof parent.pwned, document.body.style.display
]"""


@pytest.fixture(scope="module")
def browser():
    with Browser(CHROMIUM, 1280, 860) as chromium:
        yield chromium


@pytest.fixture
def run_dir(tmp_path):
    """A fresh hostile run for each test: marks of one test never leak into another."""
    return hostile_run(tmp_path / "runs")


def load(browser: Browser, url: str) -> Browser:
    browser.events.clear()
    browser.call("Page.navigate", url=url)
    browser.wait_for("Page.loadEventFired")
    assert browser.evaluate("document.body.dataset.ready") == "1"
    return browser


def press(browser: Browser, key: str) -> None:
    code = {"Enter": 13, "ArrowDown": 40}.get(key) or ord(key.upper())
    text = {"Enter": "\r", "ArrowDown": ""}.get(key, key)
    for kind in ("keyDown", "keyUp"):
        browser.call(
            "Input.dispatchKeyEvent",
            type=kind,
            key=key,
            text=text if kind == "keyDown" else "",
            windowsVirtualKeyCode=code,
        )


def click(browser: Browser, selector: str) -> None:
    """A real mouse click in the middle of the element."""
    x, y = browser.evaluate(
        f"(() => {{ const r = document.querySelector({selector!r}).getBoundingClientRect();"
        " return [r.x + r.width / 2, r.y + r.height / 2]; })()"
    )
    for kind in ("mousePressed", "mouseReleased"):
        browser.call("Input.dispatchMouseEvent", type=kind, x=x, y=y, button="left", clickCount=1)


def saved(browser: Browser, count: int, timeout: float = 20) -> None:
    """Wait until the page has heard ``count`` marks saved."""
    deadline = time.monotonic() + timeout
    while browser.evaluate("Number(document.body.dataset.saved || 0)") < count:
        assert time.monotonic() < deadline, browser.evaluate(
            "document.getElementById('status').textContent"
        )
        time.sleep(0.05)


def current_id(browser: Browser) -> int:
    return browser.evaluate(
        "Number(document.querySelector('#item h2').textContent.match(/test (\\d+)/)[1])"
    )


def test_the_page_loads_under_its_policy_and_the_policy_blocks_a_put_in_script(browser, run_dir):
    with serving(run_dir) as server:
        page = load(browser, server.url)
        messages = page.messages()
        assert not [m for m in messages if "Content Security Policy" in m], messages
        assert not [m for m in messages if m.startswith("exception")], messages
        assert page.evaluate("document.querySelectorAll('#queue li').length") > 10
        page.evaluate(
            "(() => { const s = document.createElement('script');"
            " s.textContent = 'window.injected = 1'; document.body.appendChild(s); })()"
        )
        assert page.evaluate("typeof window.injected") == "undefined"
        assert any("Content Security Policy" in m for m in page.messages())


def test_a_script_in_an_input_or_answer_stays_text(browser, run_dir):
    with serving(run_dir) as server:
        page = load(browser, server.url)
        for _ in range(8):  # several verdicts drawn, each with its payloads
            assert page.evaluate(INJECTED) == [0, 0, "undefined", "undefined", ""]
            shown = page.evaluate("document.getElementById('item').textContent")
            assert "<script>window.pwned=1" in shown or "onerror=" in shown or "<svg" in shown
            press(page, "j")
        messages = page.messages()
        assert not [m for m in messages if "pwned" in m], messages


def test_marks_by_keyboard_and_by_mouse_are_written_at_once(browser, run_dir):
    with serving(run_dir) as server:
        page = load(browser, server.url)
        first = current_id(page)
        press(page, "r")
        saved(page, 1)
        assert read_marks(run_dir)[first].mark == "real"
        second = current_id(page)  # the page moved on to the next verdict
        assert second != first
        click(page, "button.m-false_alarm")
        saved(page, 2)
        assert read_marks(run_dir)[second].mark == "false_alarm"
        press(page, "k")
        press(page, "k")
        assert current_id(page) == first
        press(page, "n")
        page.call("Input.insertText", text="the venue is wrong")
        press(page, "u")  # a letter typed in the note is text, not a mark
        press(page, "Enter")  # saves the note with the verdict's mark
        saved(page, 3)
    marks = read_marks(run_dir)
    assert (marks[first].mark, marks[first].note) == ("real", "the venue is wrongu")
    assert marks[first].reviewer == "tester" and marks[first].sample in ("uncertain", "random")
    assert len((run_dir / MARKS_NAME).read_text().splitlines()) == 3


def test_a_mark_survives_a_killed_server_and_shows_when_the_page_comes_back(browser, run_dir):
    server = Server(run_dir, "--reviewer", "tester")
    page = load(browser, server.url)
    first = current_id(page)
    press(page, "f")
    saved(page, 1)
    server.stop(kill=True)  # SIGKILL: no summary, no cleanup
    assert server.process.returncode == -9
    assert read_marks(run_dir)[first].mark == "false_alarm"
    with serving(run_dir) as again:  # the lock died with the killed process
        page = load(browser, again.url)
        badge = f"#queue li:nth-child({1}) .badge.m-false_alarm"
        assert page.evaluate(f"document.querySelector({badge!r}) !== null")
        assert current_id(page) != first  # the first verdict not yet marked
        press(page, "k")
        press(page, "r")  # marked again: the later mark counts
        saved(page, 1)
    assert read_marks(run_dir)[first].mark == "real"


def test_the_report_shows_the_review(browser, run_dir, tmp_path):
    with serving(run_dir) as server:
        page = load(browser, server.url)
        for key in "rfu":
            press(page, key)
        saved(page, 3)
    marks = read_marks(run_dir)
    result = cli("review", run_dir, "--labels", run_dir / MARKS_NAME)  # the same marks again
    assert result.returncode == 0, result.stderr
    browser.events.clear()
    browser.open(run_dir / "report.html")
    assert browser.evaluate("document.body.dataset.ready") == "1"
    assert browser.evaluate("document.querySelector('#nav a[href=\"#review\"]') !== null")
    cards = browser.evaluate(
        "[...document.querySelectorAll('#review-counts .card')].map(c => c.textContent)"
    )
    assert cards == ["real1", "false alarm1", "unsure1"]
    assert browser.evaluate("document.getElementById('review-precision').textContent").startswith(
        "precision of the failures: "
    )
    badges = browser.evaluate(
        "[...document.querySelectorAll('#rows .badge.reviewed')].map(b => b.textContent).sort()"
    )
    assert badges == ["reviewed: false alarm", "reviewed: real", "reviewed: unsure"]
    assert len(marks) == 3
    messages = browser.messages()
    assert not [m for m in messages if "pwned" in m or m.startswith("exception")], messages


def test_screenshot_for_the_docs(browser, tmp_path):
    """The page as docs/review.md shows it, on a run of the built-in use case (written there
    when STELLAR_DOCS_SCREENSHOT=1)."""
    with serving(builtin_run(tmp_path / "runs")) as server:
        page = load(browser, server.url)
        press(page, "r")
        saved(page, 1)
        press(page, "n")
        page.call("Input.insertText", text="asks back instead of naming a garage")
        path = page.screenshot(tmp_path / "review-page.png", height=860)
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and path.stat().st_size > 20_000
    if os.environ.get("STELLAR_DOCS_SCREENSHOT"):
        DOCS_SCREENSHOT.parent.mkdir(parents=True, exist_ok=True)
        DOCS_SCREENSHOT.write_bytes(path.read_bytes())
