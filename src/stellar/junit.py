"""JUnit XML for CI systems, and the one rule that turns failures into an exit code.

One ``<testsuite>`` per run, one ``<testcase>`` per executed test (discarded inputs never
reached the system and are left out), named by its feature values: a failure is a
``<failure>`` with the input, the answer and the scores, a fault of the system under test or
of a judge an ``<error>``, a test its fitness excluded ``<skipped>``. Every text goes through
:func:`stellar.untrusted.for_xml`; ElementTree escapes the markup.
"""

from __future__ import annotations

import platform
import xml.etree.ElementTree as ET
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import yaml

from stellar.archive import open_run
from stellar.errors import StellarError
from stellar.records import TestRecord
from stellar.rundir import ARCHIVE_NAME, CONFIG_NAME, read_summary
from stellar.trajectory import trajectory_lines
from stellar.untrusted import for_xml

MESSAGE_CHARS = 300  # of a failure's or error's message attribute
BODY_CHARS = 4000  # of the input and the answer in a failure's body


def gate(
    failures: int,
    verdicts: int,
    max_failure_rate: float | None = None,
    max_failures: int | None = None,
) -> int:
    """The exit code of a CI gate: 1 when over a threshold, else 0 (see :func:`over_threshold`)."""
    return 1 if over_threshold(failures, verdicts, max_failure_rate, max_failures) else 0


def over_threshold(
    failures: int,
    verdicts: int,
    max_failure_rate: float | None = None,
    max_failures: int | None = None,
) -> str | None:
    """Why ``failures`` of ``verdicts`` fail the gate, or None. The rate is failures over
    verdicts; with no threshold given, any failure fails it."""
    if max_failure_rate is None and max_failures is None:
        return f"{failures} failures" if failures else None
    rate = failures / verdicts if verdicts else 0.0
    if max_failure_rate is not None and rate > max_failure_rate:
        return f"failure rate {rate:.1%} ({failures} of {verdicts}) above {max_failure_rate:.1%}"
    if max_failures is not None and failures > max_failures:
        return f"{failures} failures, more than {max_failures}"
    return None


def junit_for_run(run_dir: str | Path, path: str | Path) -> Path:
    """Write the JUnit XML of one run directory's archive to ``path``."""
    return write_suites(path, [run_suite(Path(run_dir))])


def junit_for_runs(run_dirs: Sequence[str | Path], path: str | Path) -> Path:
    """One ``<testsuite>`` per run directory (``stellar compare``: one per algorithm and
    seed); a run that never started (no archive) is left out."""
    found = [Path(d) for d in run_dirs if (Path(d) / ARCHIVE_NAME).is_file()]
    return write_suites(path, [run_suite(run_dir) for run_dir in found])


def run_suite(run_dir: Path) -> ET.Element:
    """The ``<testsuite>`` of a run directory: its tests, time and meta."""
    with open_run(run_dir) as archive:
        records, meta = list(archive.records()), archive.meta()
    return testsuite(
        records,
        run_dir.name,
        classname=run_name(run_dir),
        time=read_summary(run_dir).get("elapsed"),
        timestamp=meta.get("started_at"),
        properties={k: meta[k] for k in PROPERTIES if meta.get(k) is not None},
    )


PROPERTIES = ("version", "algorithm", "seed", "stop_reason", "replay_of")


def write_junit(
    path: str | Path,
    records: Iterable[TestRecord],
    suite_name: str,
    *,
    classname: str | None = None,
    time: float | None = None,
    properties: Mapping[str, Any] | None = None,
    labels: Mapping[int, str] | None = None,
) -> Path:
    """Write ``records`` as one test suite; ``labels`` (by test index) head failure messages,
    e.g. a replay's "still failing"."""
    suite = testsuite(
        records,
        suite_name,
        classname=classname,
        time=time,
        properties=properties,
        labels=labels,
    )
    return write_suites(path, [suite])


def write_suites(path: str | Path, suites: Sequence[ET.Element]) -> Path:
    """``<testsuites>`` with the totals of ``suites``, written as UTF-8."""
    root = ET.Element("testsuites", name="stellar")
    for key in ("tests", "failures", "errors", "skipped"):
        root.set(key, str(sum(int(s.get(key, "0")) for s in suites)))
    root.set("time", f"{sum(float(s.get('time', '0')) for s in suites):.3f}")
    root.extend(suites)
    ET.indent(root)
    path = Path(path)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        ET.ElementTree(root).write(path, encoding="utf-8", xml_declaration=True)
    except OSError as exc:
        raise StellarError(f"{path}: cannot write the JUnit XML ({exc.strerror or exc})") from None
    return path


def testsuite(
    records: Iterable[TestRecord],
    name: str,
    *,
    classname: str | None = None,
    time: float | None = None,
    timestamp: str | None = None,
    properties: Mapping[str, Any] | None = None,
    labels: Mapping[int, str] | None = None,
) -> ET.Element:
    """A ``<testsuite>`` element: one ``<testcase>`` per executed record."""
    cases = [
        testcase(r, classname or name, (labels or {}).get(r.index)) for r in records if r.executed
    ]
    counts = {kind: sum(c.find(kind) is not None for c in cases) for kind in RESULTS}
    spent = sum(float(c.get("time", "0")) for c in cases)
    suite = ET.Element("testsuite", name=for_xml(name), tests=str(len(cases)))
    for kind, key in RESULTS.items():
        suite.set(key, str(counts[kind]))
    suite.set("time", f"{spent if time is None else float(time):.3f}")
    if timestamp:
        suite.set("timestamp", for_xml(str(timestamp)))
    suite.set("hostname", for_xml(platform.node() or "localhost"))
    if properties:
        props = ET.SubElement(suite, "properties")
        for key, value in properties.items():
            ET.SubElement(props, "property", name=for_xml(str(key)), value=for_xml(str(value)))
    suite.extend(cases)
    return suite


RESULTS = {"failure": "failures", "error": "errors", "skipped": "skipped"}  # element: count


def testcase(record: TestRecord, classname: str, label: str | None = None) -> ET.Element:
    """One executed test; its result element, if any, says how it did not pass."""
    case = ET.Element("testcase", name=for_xml(case_name(record)), classname=for_xml(classname))
    seconds = sum(s or 0.0 for s in (record.sut_seconds, record.fitness_seconds))
    case.set("time", f"{seconds:.3f}")
    verdict_error = record.verdict.error if record.verdict is not None else None
    if not record.judged:
        error = record.error or verdict_error or str(record.status)
        kind = str(record.status) if verdict_error is None else "post_search_error"
        _result(case, "error", error, kind, body(record))
    elif record.is_failure:
        message = f"{label}: {scores_text(record)}" if label else scores_text(record)
        _result(case, "failure", message, "failure", body(record))
    elif record.final_excluded:
        ET.SubElement(case, "skipped", message=for_xml(f"excluded: {record.exclusion_reason}"))
    return case


def _result(case: ET.Element, kind: str, message: str, type_: str, text: str) -> None:
    element = ET.SubElement(case, kind, message=for_xml(clip(message, MESSAGE_CHARS)))
    element.set("type", for_xml(type_))
    element.text = for_xml(text)


def case_name(record: TestRecord) -> str:
    """Feature values, then generation and index, which keep names unique in a run."""
    values = ", ".join(f"{k}={v}" for k, v in record.candidate.items())
    return f"{values} [generation {record.generation}, #{record.index}]"


def scores_text(record: TestRecord) -> str:
    scores = ", ".join(f"{k} {v:.3f}" for k, v in record.scores.items()) or "no scores"
    if record.verdict is not None and record.verdict.scores:
        judged = ", ".join(f"{k} {v:.3f}" for k, v in record.verdict.scores.items())
        scores += f"; after the search: {judged}"
    return scores


def body(record: TestRecord) -> str:
    lines = [
        f"input: {clip(record.input_text or '', BODY_CHARS)}",
        f"answer: {clip(record.response_text or '', BODY_CHARS)}",
        f"scores: {scores_text(record)}",
    ]
    if record.verdict is not None and (reason := record.verdict.details.get("reason")):
        lines.append(f"judge: {clip(str(reason), BODY_CHARS)}")
    elif reason := record.details.get("reason"):
        lines.append(f"reason: {clip(str(reason), BODY_CHARS)}")
    trajectory = trajectory_lines(record.response_data, record.details.get("failing_call"))
    if trajectory:
        lines.append(clip("tool calls:\n" + "\n".join(trajectory), BODY_CHARS))
    if record.error:
        lines.append(f"error: {record.error}")
    return "\n".join(lines)


def run_name(run_dir: Path) -> str:
    """The run's ``name`` from its configuration (the use case's), else the folder's name."""
    try:
        data = yaml.safe_load((run_dir / CONFIG_NAME).read_text(encoding="utf-8"))
        return str(data["name"])
    except (OSError, yaml.YAMLError, TypeError, KeyError):
        return run_dir.name


def clip(text: str, n: int) -> str:
    return text if len(text) <= n else text[: n - 1] + "…"
