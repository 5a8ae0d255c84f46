"""The HTML report in a real headless Chromium, driven through the DevTools protocol.

The runs' inputs and answers carry ``<script>``, ``<img onerror>``, ``javascript:`` links,
``</textarea>`` and ``</script>`` payloads that would set ``window.pwned`` or log ``pwned``.
Chromium is Debian's ``chromium`` package (``make install`` installs it); without it these
tests are skipped, except in CI (``CI`` set), where a missing browser is a failure.
"""

import shutil
from pathlib import Path

import pytest
from browser import Browser, find_chromium, needs_chromium
from html_runs import hostile_experiment, hostile_run

from stellar.analysis.failure_rules import run_failure_rules
from stellar.analysis.html_page import render
from stellar.analysis.html_report import run_payload, write_report
from stellar.analysis.metrics import RunData, load_run
from stellar.records import TestRecord

CHROMIUM = find_chromium()
SCREENS = Path("/tmp/stellar-report-screens")  # a copy of each screenshot, to look at

pytestmark = needs_chromium(CHROMIUM)

# every element and attribute a payload would bring in (beside the page's own plots and links
# to runs' pages), and what it would set
INJECTED = """[
  document.querySelectorAll('#main script, #main iframe, #main img:not(#plots img), #main style,'
    + ' #main textarea, #main svg:not(.plot), #main body, #main a:not(#runs-table a),'
    + ' a[href^="javascript"]').length,
  [...document.querySelectorAll('*')].filter(e => [...e.attributes]
    .some(a => a.name.startsWith('on') || a.name === 'srcdoc')).length,
  typeof window.pwned, typeof parent.pwned, document.body.style.display
]"""


@pytest.fixture(scope="module")
def browser():
    with Browser(CHROMIUM) as chromium:
        yield chromium


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory):
    run = hostile_run(tmp_path_factory.mktemp("runs"), tests=150)
    write_report(run)
    return run


@pytest.fixture
def page(browser, run_dir):
    """The run's report, freshly loaded."""
    browser.events.clear()
    browser.open(run_dir / "report.html")
    assert browser.evaluate("document.body.dataset.ready") == "1"
    return browser


def choose(browser: Browser, element: str, value: object) -> None:
    browser.evaluate(
        f"(() => {{ const s = document.getElementById({element!r}); s.value = {str(value)!r};"
        " s.dispatchEvent(new Event('change')); })()"
    )


def shown(browser: Browser) -> tuple[str, int]:
    """The table's count line and the rows drawn."""
    return tuple(
        browser.evaluate(
            "[document.getElementById('count').textContent,"
            " document.querySelectorAll('#rows tr').length]"
        )
    )


def screenshot(browser: Browser, path: Path) -> Path:
    browser.screenshot(path)
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and path.stat().st_size > 20_000
    SCREENS.mkdir(parents=True, exist_ok=True)
    shutil.copy(path, SCREENS / path.name)
    return path


def test_no_script_from_the_data_runs(page):
    assert page.evaluate(INJECTED) == [0, 0, "undefined", "undefined", ""]
    messages = page.messages()
    assert not [m for m in messages if "pwned" in m], messages
    assert not [m for m in messages if m.startswith("exception")], messages
    # the payloads are there, as text
    text = page.evaluate("document.getElementById('main').textContent")
    for payload in (
        "<script>window.pwned=1",
        "<img src=x onerror=",
        'href="javascript:',
        "</textarea>",
    ):
        assert payload in text


def test_the_policy_blocks_a_script_put_into_the_page(page):
    page.evaluate(
        "(() => { const s = document.createElement('script');"
        " s.textContent = 'window.injected = 1'; document.body.appendChild(s); })()"
    )
    assert page.evaluate("typeof window.injected") == "undefined"
    assert any("Content Security Policy" in m for m in page.messages())


def test_the_filters_select_the_tests_they_name(page, run_dir):
    records = load_run(run_dir).records
    total = len(records)
    failures = sum(r.is_failure for r in records)
    assert shown(page) == (f"{total} of {total} inputs", 100)  # one page of rows at a time
    choose(page, "f-verdict", 0)  # failure
    assert shown(page) == (f"{failures} of {total} inputs", min(100, failures))
    assert page.evaluate("[...document.querySelectorAll('#rows .badge.v-fail')].length") == min(
        100, failures
    )
    red = sum(r.is_failure and r.candidate["color"] == "red" for r in records)
    choose(
        page,
        "f-feature-0",
        page.evaluate(
            "[...document.getElementById('f-feature-0').options]"
            ".findIndex(o => o.text === 'red') - 1"
        ),
    )
    assert shown(page)[0] == f"{red} of {total} inputs"
    choose(page, "f-verdict", "")
    choose(page, "f-feature-0", "")
    page.evaluate(
        "(() => { const s = document.getElementById('f-search'); s.value = 'QUALITY 0.5';"
        " s.dispatchEvent(new Event('input')); })()"
    )
    matching = sum("quality 0.5" in (r.response_text or "").lower() for r in records)
    assert 0 < matching < total
    assert shown(page)[0] == f"{matching} of {total} inputs"


def test_the_pages_of_rows_move_on(page, run_dir):
    total = len(load_run(run_dir).records)
    page.evaluate("document.getElementById('next').click()")
    assert page.evaluate("document.getElementById('page').textContent") == f"rows 101–{total}"
    assert shown(page)[1] == total - 100
    assert page.evaluate("document.querySelector('#rows td').textContent") == "101"


def test_the_heat_map_counts_the_two_chosen_features(page, run_dir):
    executed = [r for r in load_run(run_dir).records if r.judged and not r.final_excluded]
    names = page.evaluate("[...document.getElementById('heat-x').options].map(o => o.text)")
    x, y = names.index("mood"), names.index("size")
    choose(page, "heat-x", x)
    choose(page, "heat-y", y)
    header = page.evaluate(
        "[...document.querySelectorAll('#heat thead th')].map(t => t.textContent)"
    )
    assert header == ["size \\ mood", "calm", "happy", "sad", "angry"]
    rows = page.evaluate(
        "[...document.querySelectorAll('#heat tbody tr')].map(tr =>"
        " [tr.querySelector('th').textContent,"
        " [...tr.querySelectorAll('td')].map(td => [+td.dataset.tests, +td.dataset.failures])])"
    )
    assert [size for size, _ in rows] == ["tiny", "small", "medium", "large", "huge"]
    for size, cells in rows:
        for mood, (tests, fails) in zip(header[1:], cells, strict=True):
            mine = [
                r for r in executed if r.candidate["size"] == size and r.candidate["mood"] == mood
            ]
            assert (tests, fails) == (len(mine), sum(r.is_failure for r in mine)), (size, mood)
    assert sum(f for _, cells in rows for _, f in cells) == sum(r.is_failure for r in executed)


def test_the_failure_conditions_table_lists_the_runs_rules(page, run_dir):
    rules = run_failure_rules(run_dir)  # the run's embedder numbers the modes, as the page's
    rows = page.evaluate(
        "[...document.querySelectorAll('#rules-table tbody tr')]"
        ".map(tr => [...tr.querySelectorAll('td')].map(td => td.textContent))"
    )
    assert rules and [row[:3] for row in rows] == [
        [r.text, f"{r.tests:,}", f"{r.failed:,}"] for r in rules
    ]
    modes = ", ".join(f"#{m} ({n:,})" for m, n in rules[0].modes.items())
    assert rows[0][-1] == modes
    link = page.evaluate("document.querySelector('#nav a[href=\"#rules\"]').textContent")
    assert link == "Failure conditions"


def synthetic_page(browser: Browser, path: Path, kinds: list[str], x: int, y: int) -> None:
    """A run whose cell (one, first kind) holds 1 failing test and the "many" cells 20
    failing tests among ``kinds``, its heat map with features ``x`` by ``y``."""
    records = [
        TestRecord(0, i, 0, {"support": value, "kind": kinds[i % len(kinds)]}, [], failed=True)
        for i, value in enumerate(["one"] + ["many"] * 20)
    ]
    for record in records:
        record.scores, record.response_text, record.input_text = {"q": 0.0}, "no", f"in {record}"
    payload = run_payload(RunData(path.parent, records), modes=[])
    path.write_text(render(payload), encoding="utf-8")
    browser.open(path)
    choose(browser, "heat-x", x)
    choose(browser, "heat-y", y)


def test_a_cell_of_one_test_is_paler_than_one_of_many_at_the_same_rate(browser, tmp_path):
    synthetic_page(browser, tmp_path / "report.html", ["a", "b", "c"], 0, 1)
    cells = browser.evaluate(
        "[...document.querySelectorAll('#heat td.cell:not(.empty)')].map(td =>"
        " [+td.dataset.tests, +td.dataset.failures, td.textContent,"
        " +getComputedStyle(td).backgroundColor.split(',')[3].replace(')', '')])"
    )
    alpha = {tests: a for tests, failures, _, a in cells if tests == failures}
    assert {tests for tests, *_ in cells} == {1, 6, 7}  # every cell fails all its tests
    assert alpha[1] < 0.3 < alpha[6] < alpha[7]  # 100% each, paler with fewer tests
    assert all(text.endswith(f"{f}/{n}") for n, f, text, _ in cells)  # n shown


def test_long_category_names_wrap_between_words(browser, tmp_path):
    kinds = [f"accommodation and lodging {i}" for i in range(20)]  # more than fit the page
    synthetic_page(browser, tmp_path / "report.html", kinds, 1, 0)
    broken = browser.evaluate(
        """[...document.querySelectorAll('#heat th, table.rates th')].flatMap(th => {
          const text = th.firstChild;
          if (!text || text.nodeType !== 3) return [];
          return [...text.data.matchAll(/\\S+/g)].filter(m => {
            const range = document.createRange();
            range.setStart(text, m.index);
            range.setEnd(text, m.index + m[0].length);
            return range.getClientRects().length > 1;  // one word over two lines
          }).map(m => m[0]);
        })"""
    )
    assert broken == []


def test_a_screenshot_of_the_run_page(page, tmp_path):
    choose(page, "heat-x", 3)  # mood x size, as shown in the docs
    choose(page, "heat-y", 2)
    screenshot(page, tmp_path / "report-run.png")


def test_the_experiment_page_links_its_runs(browser, tmp_path):
    root = hostile_experiment(tmp_path / "exp")
    write_report(root)
    browser.events.clear()
    browser.open(root / "report.html")
    assert browser.evaluate(INJECTED) == [0, 0, "undefined", "undefined", ""]
    assert browser.evaluate("document.querySelectorAll('#statistics tbody tr').length") == 5
    assert browser.evaluate("document.querySelectorAll('#plots img').length") == 5
    assert browser.evaluate(
        "[...document.querySelectorAll('#plots img')].every(i => i.naturalWidth > 0)"
    )
    links = browser.evaluate("[...document.querySelectorAll('#runs-table a')].map(a => a.href)")
    assert len(links) == 4 and all(link.startswith("file://") for link in links)
    assert not [m for m in browser.messages() if "pwned" in m or m.startswith("exception")]
    screenshot(browser, tmp_path / "report-experiment.png")
    browser.open(root / "runs" / "random-s0" / "report.html")  # a run's own page
    assert browser.evaluate(INJECTED) == [0, 0, "undefined", "undefined", ""]
