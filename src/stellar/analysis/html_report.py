"""A self-contained HTML report of a run or an experiment (``stellar report``, ``report.html``).

One file that opens from disk and works offline, and runs no code from the data
(:mod:`stellar.analysis.html_page`). A run's page holds its summary, its failure modes
(:mod:`stellar.analysis.failure_modes`, with the run's own embedder unless told another) with
their best examples, its failure conditions (:mod:`stellar.analysis.failure_rules`), its
unique failures over tests and time, and every test (texts cut at ``TEXT_LIMIT``); the page
computes the failure rates per feature value, the heat map over two features and the table's
filters from the embedded tests. An experiment's page
(:mod:`stellar.analysis.html_experiment`) links a page per run.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import yaml

from stellar.analysis.conversation_view import conversation_view
from stellar.analysis.earlier_inputs import earlier_inputs
from stellar.analysis.failure_modes import (
    FailureMode,
    failing_test,
    failure_modes,
    mode_numbers,
    opening,
    run_thresholds,
)
from stellar.analysis.failure_rules import failure_rules, verdicts_of
from stellar.analysis.html_experiment import (
    EXAMPLE_LIMIT,
    experiment_payload,
    is_experiment,
    run_dirs,
)
from stellar.analysis.html_page import cut, duration, render
from stellar.analysis.metrics import RunData, failure_curve, load_run
from stellar.analysis.reading import (
    COUNTS,
    rules_checked,
    run_counts,
    score_meanings,
    verdict_rules,
)
from stellar.modes import mode_embedder
from stellar.records import EXCLUDED_REASON, Status, TestRecord
from stellar.review_file import MARKS, MARKS_NAME, precision_estimate, read_marks
from stellar.rundir import ARCHIVE_NAME, CONFIG_NAME
from stellar.summary import RunSummary, pass_k_line, simulated_user_lines

REPORT_NAME = "report.html"
TEXT_LIMIT = 500  # characters of an input or answer kept in the tests table
CURVE_POINTS = 400  # points of a plotted curve at most
STATUSES = [s.value for s in Status]
VERDICTS = ["failure", "pass", "excluded", "no verdict"]


def write_report(
    directory: str | Path,
    out: str | Path | None = None,
    embedder: str | None = None,
    modes: list[FailureMode] | None = None,
) -> Path:
    """Write the report of a run or experiment directory (``DIR/report.html`` by default).

    ``embedder`` groups the failing answers into modes (default: the run's duplicate
    embedder, as ``stellar run`` counts them; ``hashing`` needs no model). ``modes`` may be
    handed over precomputed for a run: ``failure_modes`` of its distinct failing inputs in
    archive order. An experiment's runs get their own pages, linked from its page.
    """
    directory = Path(directory)
    path = Path(out) if out else directory / REPORT_NAME
    if is_experiment(directory):
        pages = {
            run_dir: write_report(run_dir, embedder=embedder)
            for run_dir in run_dirs(directory)
            if (run_dir / ARCHIVE_NAME).is_file()
        }
        payload = experiment_payload(directory, path.parent, pages)
    else:
        payload = run_payload(load_run(directory), embedder, modes)
    path.write_text(render(payload), encoding="utf-8")
    return path


def run_payload(
    data: RunData, embedder: str | None = None, modes: list[FailureMode] | None = None
) -> dict[str, Any]:
    """What the page shows of one run."""
    config = _config(data.run_dir)
    counts = run_counts(data.records)
    earlier = earlier_inputs(data.records, _duplicate_embedder(config))
    features = _features(data.records)
    index = [{v: i for i, v in enumerate(f["values"])} for f in features]
    tests: dict[str, list[Any]] = {
        k: [] for k in ("id", "gen", "status", "verdict", "values", "input", "answer", "scores")
    }
    tests["reason"] = []
    review = _review(data.run_dir, data.records)
    if review:
        tests["review"] = [MARKS.index(r.review) if r.review in MARKS else -1 for r in data.records]
    for n, record in enumerate(data.records, start=1):
        tests["id"].append(n)
        tests["gen"].append(record.generation)
        tests["status"].append(STATUSES.index(record.status.value))
        tests["verdict"].append(VERDICTS.index(_verdict(record)))
        tests["values"].append(
            [index[i].get(str(record.candidate.get(f["name"])), -1) for i, f in enumerate(features)]
        )
        tests["input"].append(cut(record.input_text, TEXT_LIMIT))
        view = conversation_view(record)
        tests["answer"].append(
            cut(view, VIEW_LIMIT) if view else cut(record.response_text, TEXT_LIMIT)
        )
        tests["scores"].append(_scores(record))
        tests["reason"].append(_reason(record, _earlier(data.records, earlier.get(n - 1))))
    failing = _distinct_failures(data.records)
    if modes is None:
        modes = _modes(failing, data.run_dir, embedder or _run_embedder(config))
    return {
        "kind": "run",
        "title": f"STELLAR report: {data.run_dir.name}",
        "summary": _with_modes(_run_summary(data, config, counts), modes, len(failing)),
        "notes": _notes(data.summary, counts),
        "review": review,
        "reading": {
            "rules": verdict_rules(config, (data.summary.get("post_search") or {}).get("sources")),
            "scores": score_meanings(config),
        },
        "counts": {n: getattr(counts, n) for n in COUNTS} | {"archived": len(data.records)},
        "features": features,
        "statuses": STATUSES,
        "verdicts": VERDICTS,
        "limit": TEXT_LIMIT,
        "tests": tests,
        "modes": [_mode(m, failing, len(failing)) for m in modes],
        "rules": _rules(data.records, modes),
        "rules_checked": rules_checked(),
        "distinct_failures": len(failing),
        "curve": _curve(data),
    }


def _config(run_dir: Path) -> dict[str, Any]:
    try:
        config = yaml.safe_load((run_dir / CONFIG_NAME).read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError):
        return {}
    return config if isinstance(config, dict) else {}


def _features(records: Sequence[TestRecord]) -> list[dict[str, Any]]:
    """Every feature and its values seen, values in the feature space's order (their encoded
    coordinate) where vectors are stored, else as first seen."""
    order: dict[str, dict[str, float]] = {}
    for record in records:
        aligned = len(record.vector or []) == len(record.candidate)
        for i, (name, value) in enumerate(record.candidate.items()):
            seen = order.setdefault(name, {})
            seen.setdefault(str(value), record.vector[i] if aligned else len(seen))
    return [{"name": n, "values": sorted(v, key=v.__getitem__)} for n, v in order.items()]


def _verdict(record: TestRecord) -> str:
    if record.is_failure:
        return "failure"
    if not record.judged:
        return "no verdict"
    return "excluded" if record.final_excluded else "pass"


def _scores(record: TestRecord) -> str:
    text = ", ".join(f"{k} {v:.2f}" for k, v in record.scores.items() if _number(v))
    if record.verdict is not None and record.verdict.scores:
        after = ", ".join(f"{k} {v:.2f}" for k, v in record.verdict.scores.items() if _number(v))
        text = f"{text}; after the search: {after}" if text else after
    return text


def _number(value: Any) -> bool:
    return isinstance(value, int | float) and value == value  # not NaN


def _reason(record: TestRecord, earlier: str = "") -> str:
    """The judge's verdict and reason, why a test was excluded, or the error of a test that
    ended in one (``earlier``: the input a duplicate was found too similar to)."""
    if record.error:
        return f"{record.status}: {cut(record.error, TEXT_LIMIT)}{earlier}"
    details = record.verdict.details if record.verdict is not None else {}
    if record.verdict is not None and record.verdict.error:
        return f"post-search judge: {cut(record.verdict.error, TEXT_LIMIT)}"
    parts = [details.get("verdict"), details.get("reason") or record.details.get("reason")]
    reason = cut(": ".join(p for p in parts if isinstance(p, str) and p), TEXT_LIMIT)
    if record.judged and record.final_excluded:
        why = record.exclusion_reason if record.reviewed_false_alarm else None
        why = why or details.get(EXCLUDED_REASON) or record.details.get(EXCLUDED_REASON)
        excluded = f"excluded: {why}" if isinstance(why, str) and why else "excluded by the judge"
        return f"{excluded}; {reason}" if reason else excluded
    return reason


def _review(run_dir: Path, records: Sequence[TestRecord]) -> dict[str, Any] | None:
    """A person's marks (``stellar review``) in counts and the precision they estimate."""
    marks = read_marks(run_dir)
    if not marks:
        return None
    failures = sum(r.judge_failure for r in records)
    return {
        "counts": [[name, sum(m.mark == name for m in marks.values())] for name in MARKS],
        "marked": len(marks),
        "verdicts": sum(r.judged and not r.judge_excluded for r in records),
        "precision": precision_estimate(marks).line(failures),
        "file": MARKS_NAME,
    }


def _earlier(records: Sequence[TestRecord], position: int | None) -> str:
    """`` (#N, gen G: "opening…")``: the earlier input a duplicate matched, as the tests table
    numbers it; empty when it is not known."""
    if position is None:
        return ""
    record = records[position]
    return f" (#{position + 1}, gen {record.generation}: {opening(record.input_text or '', 60)})"


def _duplicate_embedder(config: dict[str, Any]) -> str | None:
    """The embedder the run's duplicate filter used (None: it had none)."""
    duplicates = config.get("duplicates")
    if duplicates is None:
        return None
    return (duplicates or {}).get("embedder") or "minilm"


def _distinct_failures(records: Sequence[TestRecord]) -> list[TestRecord]:
    """The first failing test of each distinct input, in the order the run assigned modes
    (generation, then index)."""
    first: dict[str, TestRecord] = {}
    for record in sorted(records, key=lambda r: (r.generation, r.index)):
        if record.is_failure:
            first.setdefault(record.input_text or "", record)
    return list(first.values())


def _with_modes(rows: list[list[str]], modes: list[FailureMode], failures: int) -> list[list[str]]:
    """The summary with the failure modes first among the counts."""
    at = next((i for i, row in enumerate(rows) if row[0] == "tests"), len(rows))
    largest = f"; the largest holds {modes[0].size / failures:.0%}" if modes and failures else ""
    what = f"distinct ways it failed (failing answers grouped){largest}"
    return [*rows[:at], ["failure modes", f"{len(modes):,}", what], *rows[at:]]


def _run_embedder(config: dict[str, Any]) -> str:
    return mode_embedder((config.get("duplicates") or {}).get("embedder"))


def _modes(failing: list[TestRecord], run_dir: Path, embedder: str) -> list[FailureMode]:
    thresholds = run_thresholds(run_dir)
    return failure_modes([failing_test(r, thresholds) for r in failing], embedder)


def _mode(mode: FailureMode, failing: list[TestRecord], total: int) -> dict[str, Any]:
    """A mode with its examples' scores and judge's reasons (the first test of each input)."""
    by_input = {r.input_text or "": r for r in reversed(failing)}
    examples = []
    for text, answer in mode.examples:
        record = by_input.get(text)
        examples.append(
            {
                "input": cut(text, EXAMPLE_LIMIT),
                "answer": _example_answer(record, answer),
                "scores": _scores(record) if record else "",
                "reason": _reason(record) if record else "",
            }
        )
    share = mode.size / total if total else 0.0
    return {"label": mode.label, "size": mode.size, "share": share, "examples": examples}


def _rules(records: Sequence[TestRecord], modes: list[FailureMode]) -> list[dict[str, Any]]:
    """The failure conditions, their failures by the modes the page numbers (a list of
    [mode, failures], largest first: a JSON object's number keys would be read in order)."""
    rules = failure_rules(verdicts_of(records, mode_numbers(modes)))
    return [rule.to_dict() | {"modes": list(rule.modes.items())} for rule in rules]


VIEW_LIMIT = 8000  # a conversation is shown whole, up to its failing turn and beyond


def _example_answer(record: TestRecord | None, answer: str) -> str:
    view = conversation_view(record) if record is not None else None
    return cut(view, VIEW_LIMIT) if view else cut(answer, EXAMPLE_LIMIT)


def _curve(data: RunData) -> dict[str, list[float]]:
    """Unique failures after each executed test, thinned to ``CURVE_POINTS`` at most."""
    points = failure_curve(data)
    step = max(1, -(-len(points) // CURVE_POINTS))
    kept = points[::step] + (points[-1:] if points and (len(points) - 1) % step else [])
    return {
        "tests": [p.tests for p in kept],
        "seconds": [round(p.seconds, 2) for p in kept],
        "failures": [p.unique_failures for p in kept],
    }


def _run_summary(data: RunData, config: dict[str, Any], counts: RunSummary) -> list[list[str]]:
    """[name, value] rows, and a third cell saying what a count counts."""
    s, meta = data.summary, data.meta
    budget = config.get("budget") or {}
    limits = [
        f"{budget['tests']:,} tests" if budget.get("tests") else "",
        duration(budget["time"]) if budget.get("time") else "",
        f"${budget['cost']:.2f}" if budget.get("cost") else "",
    ]
    usage = s.get("usage") or {}
    calls = sum(float(u.get("calls", 0)) for u in usage.values())
    post = (s.get("post_search") or {}).get("usage") or {}
    calls += sum(float(u.get("calls", 0)) for u in post.values())
    c = counts
    rows = [
        ("system under test", _component(config.get("sut"))),
        ("use case", str(config.get("use_case") or config.get("name") or "-")),
        ("algorithm", str(s.get("algorithm") or meta.get("algorithm") or "-")),
        ("seed", str(s.get("seed", meta.get("seed", "-")))),
        ("budget", ", ".join(p for p in limits if p) or "-"),
        ("stopped", str(s.get("stop_message") or s.get("stop_reason") or "not finished")),
        ("tests", f"{c.tests:,}", COUNTS["tests"]),
        ("verdicts", f"{c.verdicts:,}", COUNTS["verdicts"]),
        ("failures", f"{c.failures:,}", COUNTS["failures"]),
        ("failure rate", f"{c.failure_ratio:.1%}", "failures / verdicts"),
        ("excluded", f"{c.excluded:,}", COUNTS["excluded"]),
        ("duplicates", f"{c.duplicates:,}", COUNTS["duplicates"]),
        ("invalid", f"{c.invalid:,}", COUNTS["invalid"]),
        (
            "errors",
            f"{c.sut_errors:,} system, {c.judge_errors:,} judge",
            "tests that ended in an error of the system under test or of a judge: no verdict",
        ),
        *_conversation_rows(s),
        ("time", duration(float(s.get("elapsed") or 0.0))),
        ("model calls", f"{calls:,.0f}"),
        ("cost", f"${float(s.get('cost') or 0.0):.4f}"),
        ("started", str(meta.get("started_at") or "-").replace("T", " ")),
    ]
    return [list(row) for row in rows]


def _conversation_rows(summary: dict[str, Any]) -> list[tuple[str, str, str]]:
    """How much of the user a model played; pass^k of repeated tests (where there are any)."""
    written = simulated_user_lines(summary.get("simulated_user") or {})[0]
    passes = pass_k_line(summary.get("repeated") or {}, summary.get("repeated_modes") or {})
    rows = [("simulated user", written.removeprefix("simulated user: "), TURN_SOURCES)]
    rows += [("repeats (pass^k)", passes, "each test sent k times: it fails when any fails")]
    return [row for row in rows if row[1]]


TURN_SOURCES = (
    "user turns a model was asked to write: kept as written or on retry, else the template's"
)


def _notes(summary: dict[str, Any], counts: RunSummary) -> list[str]:
    """What the reader must know before trusting the numbers."""
    notes = []
    if summary.get("error"):
        notes.append(f"The run stopped on a model error: {summary['error']}")
    if summary.get("unhealthy"):
        notes.append(f"Not healthy: {summary['unhealthy']}")
    if summary.get("approximate"):
        notes.append(f"Approximate: {summary['approximate']}")
    if summary.get("first_error"):
        notes.append(f"First error: {cut(str(summary['first_error']), TEXT_LIMIT)}")
    warning = simulated_user_lines(summary.get("simulated_user") or {})[1]
    if warning:
        notes.append(f"Simulated user: {warning}")
    if summary.get("unpriced"):
        notes.append(f"No price for {', '.join(map(str, summary['unpriced']))}: cost too low")
    if "tests" in summary and summary["tests"] != counts.tests:
        notes.append(
            f"summary.json counts {summary['tests']:,} tests, the archive {counts.tests:,}: "
            "the run did not finish writing its summary (the counts here are the archive's)"
        )
    return notes


def _component(spec: Any) -> str:
    """A configured component in a few words: its type and its target, model or URL."""
    if not isinstance(spec, dict):
        return str(spec or "-")
    options = spec.get("options") or {}
    named = spec.get("target") or options.get("model") or options.get("url") or ""
    kind = spec.get("type") or "python"
    return f"{kind}: {named}" if named and named != kind else str(kind)
