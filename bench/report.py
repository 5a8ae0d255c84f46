"""The HTML report of a large run: time to write it, to open it and to filter it in Chromium.

    .venv/bin/python bench/report.py                    # 10,000 tests, texts of LLM length
    .venv/bin/python bench/report.py --tests 1000 --repeats 5

A synthetic archive is written with ``Archive.add`` (no search, no system under test): 11
features of 2-14 values (as the navigation use case), inputs of 40-300 characters, answers
of 80-1,500 (a chat model's), one judge's sentence per test, 88% ok tests of which 20% fail,
8% duplicates, 2% system and 2% judge errors. Then ``write_report`` (the ``hashing``
embedder groups the failure modes unless ``--embedder`` names another, which then groups
the failing answers once before the clock starts, as ``stellar run``'s summary line has done
when a run ends: MiniLM keeps each text's embedding) and headless Chromium (the ``chromium``
package) over the DevTools protocol: the seconds from navigation to the first frame after
the load event (the page's script has drawn everything by then), and the milliseconds of
each filter, search and heat-map change until the browser has laid the page out again.
Prints the file size too (the aim: under 10 MB, opening and filtering under a second).
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parents[1] / "tests"))
from browser import Browser, find_chromium

from stellar.analysis.failure_modes import failing_test, failure_modes
from stellar.analysis.html_report import write_report
from stellar.analysis.metrics import load_run
from stellar.archive import Archive
from stellar.records import Status, TestRecord
from stellar.rundir import ARCHIVE_NAME, CONFIG_NAME, write_summary

FEATURES = {
    "category": ["hospital", "car_repair", "restaurant", "supermarket", "cafe", "bakery", "bar",
                 "hotel", "museum", "pharmacy", "parking", "fuel", "park", "cinema"],
    "payment": ["none", "cash", "credit card", "contactless", "mobile payment"],
    "cuisine": ["none", "german", "chinese", "japanese", "mexican", "greek", "thai"],
    "parking": ["none", "available"],
    "price": ["none", "low", "medium", "high"],
    "rating": ["none", "3.5", "4.0", "4.5", "5.0"],
    "slang": ["formal", "neutral", "slangy"],
    "implicitness": ["not", "slightly", "implicit"],
    "politeness": ["rude", "neutral", "polite"],
    "anthropomorphism": ["very directive", "directive", "interrogative", "empathic"],
    "word_perturbation": ["none", "delete words", "homophones", "fillers"],
}  # fmt: skip
WORDS = [
    "the", "a", "to", "find", "me", "nearest", "place", "please", "with", "parking", "cheap",
    "open", "now", "near", "here", "rated", "stars", "restaurant", "cafe", "I", "would", "like",
    "some", "could", "you", "show", "route", "there", "is", "one", "about", "kilometres", "away",
    "which", "accepts", "cards", "quiet", "friendly", "food", "coffee", "street", "station",
    "centre", "hotel", "evening", "tonight", "sorry", "not", "sure", "what", "kind", "looking",
    "for", "options", "start", "navigation", "shall",
]  # fmt: skip
REASONS = (
    "Names a fitting place close by and offers to navigate.",
    "Does not help with the request and offers nothing further.",
    "Explains at length but names no place; the answer is vague.",
)


def text(rng: random.Random, low: int, high: int) -> str:
    length = rng.randint(low, high)
    words: list[str] = []
    while sum(map(len, words)) + len(words) < length:
        words.append(rng.choice(WORDS))
    return " ".join(words)[:length].capitalize() + "."


def synthetic_run(folder: Path, tests: int, seed: int = 0) -> Path:
    """A run directory of ``tests`` records, as a long LLM run would leave it."""
    rng = random.Random(seed)
    run = folder / f"bench-random-s{seed}"
    run.mkdir(parents=True)
    (run / CONFIG_NAME).write_text(
        "name: bench\nuse_case: navi\nsut: {type: chat, options: {model: 'openai:gpt-4o-mini'}}\n"
        f"budget: {{tests: {tests}}}\nduplicates: {{embedder: hashing}}\n"
        "oracle: {below: {response: 0.75, content: 0.75}}\n",
        encoding="utf-8",
    )
    counts = dict.fromkeys(("tests", "verdicts", "failures", "duplicates"), 0)
    counts |= {"sut_errors": 0, "judge_errors": 0}
    start = time.time()
    with Archive(run / ARCHIVE_NAME) as archive:
        archive.db.execute("PRAGMA synchronous=OFF")  # a benchmark's archive: speed over safety
        for n in range(tests):
            draw = rng.random()
            status = (
                Status.OK if draw < 0.88 else Status.DUPLICATE if draw < 0.96
                else Status.SUT_ERROR if draw < 0.98 else Status.JUDGE_ERROR
            )  # fmt: skip
            candidate = {name: rng.choice(values) for name, values in FEATURES.items()}
            vector = [FEATURES[k].index(v) / len(FEATURES[k]) for k, v in candidate.items()]
            record = TestRecord(n // 20, n % 20, seed, candidate, vector, status)
            record.input_text = text(rng, 40, 300)
            record.started_at = start + n * 0.9
            record.finished_at = record.started_at + rng.uniform(0.5, 3.0)
            if status == Status.OK:
                record.response_text = text(rng, 80, 1500)
                failing = rng.random() < 0.2
                record.scores = {"response": rng.uniform(*(0, 0.7) if failing else (0.8, 1))}
                record.scores["content"] = rng.uniform(0.5, 1)
                record.failed = failing
                record.details = {"reason": rng.choice(REASONS), "source": "llm"}
                counts["verdicts"] += 1
                counts["failures"] += failing
            elif status == Status.DUPLICATE:
                record.error = f"similarity {rng.uniform(0.8, 1):.3f} to an earlier input"
                counts["duplicates"] += 1
            else:
                record.error = "timeout after 60 s" if status == Status.SUT_ERROR else "bad JSON"
                counts["sut_errors" if status == Status.SUT_ERROR else "judge_errors"] += 1
            counts["tests"] += status != Status.DUPLICATE
            archive.add(record)
    summary = {"run_dir": str(run), "algorithm": "random", "seed": seed, **counts}
    summary |= {"elapsed": tests * 0.9, "stop_reason": "test budget reached"}
    summary["failure_ratio"] = counts["failures"] / max(1, counts["verdicts"])
    write_summary(run, summary)
    return run


CHANGES = {  # what a reader does, as JavaScript; each is timed until the page is laid out
    "verdict = failure": "set('f-verdict', 0)",
    "status = ok": "set('f-status', 0)",
    "category = cafe": "set('f-feature-0', 4)",
    "search 'parking' (first)": "type('parking')",
    "search 'parking cheap'": "type('parking cheap')",
    "clear every filter": "set('f-status', ''); set('f-verdict', ''); set('f-feature-0', ''); "
    "type('')",
    "next page": "document.getElementById('next').click()",
    "heat map: rating x price": "set('heat-x', 5); set('heat-y', 4)",
}
HELPERS = (
    "const set = (id, v) => { const s = document.getElementById(id); s.value = String(v);"
    " s.dispatchEvent(new Event('change')); };"
    " const type = (q) => { const s = document.getElementById('f-search'); s.value = q;"
    " s.dispatchEvent(new Event('input')); };"
)


def timed(browser: Browser, action: str) -> float:
    """Milliseconds for ``action`` and the layout after it."""
    return browser.evaluate(
        f"(() => {{ {HELPERS} const t = performance.now(); {action};"
        " document.body.offsetHeight; return performance.now() - t; })()"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--tests", type=int, default=10_000)
    parser.add_argument("--repeats", type=int, default=3, help="page loads (default 3)")
    parser.add_argument(
        "--embedder", default="hashing", help="groups the failure modes (default hashing)"
    )
    args = parser.parse_args()
    chromium = find_chromium()
    with tempfile.TemporaryDirectory() as folder:
        t = time.perf_counter()
        run = synthetic_run(Path(folder), args.tests)
        print(f"archive of {args.tests:,} tests written in {time.perf_counter() - t:.1f} s")
        if args.embedder != "hashing":  # as at the end of `stellar run`: its summary line
            t = time.perf_counter()  # has loaded the model and grouped the same answers
            failure_modes(
                [failing_test(r, ({}, {})) for r in load_run(run).failures], args.embedder
            )
            print(
                f"{args.embedder}: loaded, failing answers grouped: {time.perf_counter() - t:.1f} s"
            )
        t = time.perf_counter()
        page = write_report(run, embedder=args.embedder)
        written = time.perf_counter() - t
        size = page.stat().st_size
        print(f"report written in {written:.2f} s: {size / 1e6:.2f} MB")
        if chromium is None:
            print("no chromium: apt-get install chromium, then run again")
            return
        loads, changes = [], {name: [] for name in CHANGES}
        with Browser(chromium) as browser:
            for _ in range(args.repeats):
                t = time.perf_counter()
                browser.open(page)  # then the first frame: laid out and painted
                browser.evaluate("new Promise(done => requestAnimationFrame(() => done(0)))")
                loads.append(time.perf_counter() - t)
                assert browser.evaluate("document.body.dataset.ready") == "1"
                for name, action in CHANGES.items():
                    changes[name].append(timed(browser, action))
            count = browser.evaluate("document.getElementById('count').textContent")
        median = statistics.median(loads)
        print(f"open (navigation to the first frame after load): median {median:.2f} s, "
              f"max {max(loads):.2f} s over {len(loads)} loads")  # fmt: skip
        for name, values in changes.items():
            print(
                f"  {name:28} median {statistics.median(values):7.1f} ms  max {max(values):7.1f} ms"
            )
        print(f"(last table state: {count})")
        slowest = max(max(v) for v in changes.values())
        print(json.dumps({"tests": args.tests, "bytes": size, "write_s": round(written, 3),
                          "open_s": round(max(loads), 3),
                          "slowest_change_ms": round(slowest, 1)}))  # fmt: skip


if __name__ == "__main__":
    main()
