"""The new user's path of issue 42, end to end and offline: `stellar init` against a local
HTTP FAQ bot, a 100-test run with configured checks only (no Python written), failure modes
naming the topic asked and the entry answered, export, replay against the fixed bot, and the
pytest plugin running the run's failures (those the fix mends pass, the rest fail)."""

from __future__ import annotations

import difflib
import json
import os
import re
import subprocess
import sys
import threading
from http.server import ThreadingHTTPServer
from pathlib import Path

import pytest
from conftest import json_handler

ENTRIES = {  # the scaffold's placeholder topics: keywords, answer
    "opening hours": (["open", "hours"], "We are open 9 to 18."),
    "prices": (["price", "cost"], "A bike costs 20 a day."),
    "returns": (["return"], "Returns are free within 30 days."),
    "delivery": (["deliver", "ship"], "We deliver within 2 days."),
}


def bot(tolerant: bool) -> ThreadingHTTPServer:
    """The FAQ bot: the first entry whose keyword appears; ``tolerant``: the fix, keywords
    also matched with a typo."""

    def entry_of(text: str) -> str | None:
        words = re.findall(r"[a-z]+", text.lower())
        for entry, (keys, _) in ENTRIES.items():
            for key in keys:
                if any(w.startswith(key) for w in words):
                    return entry
                if tolerant and difflib.get_close_matches(key, words, n=1, cutoff=0.75):
                    return entry
        return None

    def reply(text: str) -> dict:
        entry = entry_of(text)
        return {
            "answer": ENTRIES[entry][1] if entry else "Sorry, I didn't understand.",
            "entry": entry,
        }

    server = ThreadingHTTPServer(("127.0.0.1", 0), json_handler(reply))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def url(server: ThreadingHTTPServer) -> str:
    return f"http://127.0.0.1:{server.server_address[1]}/ask"


def stellar(*args: object, cwd: Path, check: int | None = 0) -> subprocess.CompletedProcess:
    env = {**os.environ, "COLUMNS": "200"}
    done = subprocess.run(
        [sys.executable, "-m", "stellar", *map(str, args)],
        cwd=cwd, env=env, capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    if check is not None:
        assert done.returncode == check, f"{args}\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
    return done


@pytest.fixture
def bots():
    broken, fixed = bot(tolerant=False), bot(tolerant=True)
    yield broken, fixed
    broken.shutdown()
    fixed.shutdown()


def test_init_run_export_replay_and_pytest(tmp_path, bots):
    broken, fixed = bots
    stellar("init", "faq", "--url", url(broken), "--data-path", "$", "--yes", cwd=tmp_path)
    # the one edit a user makes: which entry each topic should get (configuration, no Python)
    usecase = tmp_path / "faq" / "usecase.yaml"
    text = usecase.read_text()
    mode_line = '    mode: "{topic}: not understood"'
    assert mode_line in text
    usecase.write_text(
        text.replace(
            mode_line,
            mode_line + "\n"
            "  - name: right_entry\n"
            "    kind: json-path\n"
            "    path: $.entry\n"
            "    equals: {feature: topic}\n"
            '    mode: "asked {topic}, answered {data[entry]}"',
            1,
        )
    )
    done = stellar("run", "faq", "--tests", "100", "--seed", "2", "--out", "runs", cwd=tmp_path)
    assert re.search(r"\w[\w ]*: not understood", done.stdout)  # the modes name the topic
    assert "answered None" in done.stdout or "not understood" in done.stdout
    [run] = (tmp_path / "runs").glob("faq-stellar-s2-*")
    stellar("export", run, cwd=tmp_path)
    [failures] = run.glob("export/failures.jsonl")
    exported = [json.loads(line) for line in failures.read_text().splitlines()]
    assert exported and all(row["mode"] is not None for row in exported)

    # the checks measured like any judge, against a person's labels of three failures
    labels = tmp_path / "labels.jsonl"
    labels.write_text(
        "".join(
            json.dumps(
                {"input": row["input_text"], "answer": row["response_text"],
                 "candidate": row["candidate"], "response_data": row["response_data"],
                 "labels": [{"rater": "me", "verdict": "fail"}]}
            ) + "\n"
            for row in exported[:3]
        )
    )  # fmt: skip
    calibrated = stellar("calibrate", "faq", "--labels", labels, cwd=tmp_path)
    assert "search: checks" in calibrated.stdout

    replay = stellar("replay", run, "--set", f"sut.url={url(fixed)}", cwd=tmp_path, check=None)
    assert replay.returncode in (0, 1) and "fixed" in replay.stdout

    tests = stellar_pytest(tmp_path, run, url(fixed))
    passed, failed = (int(tests.get(k, 0)) for k in ("passed", "failed"))
    assert passed >= 1 and passed + failed == len(exported)
    [fixed_by_replay] = re.findall(r"│ fixed\s+│\s+(\d+)", replay.stdout)
    assert passed == int(fixed_by_replay)  # pytest passes exactly what replay calls fixed


def stellar_pytest(cwd: Path, run: Path, sut: str) -> dict[str, str]:
    """pytest with the plugin on the run's failures against ``sut``: its outcome counts."""
    env = {**os.environ, "PYTHONPATH": os.environ.get("PYTHONPATH", "")}
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--stellar-suite",
         str(run), "--stellar-set", f"sut.url={sut}", "-m", "stellar", "--rootdir", str(cwd),
         "-c", os.devnull],
        cwd=cwd, env=env, capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert done.returncode in (0, 1), done.stdout[-3000:] + done.stderr[-3000:]
    return {k: n for n, k in re.findall(r"(\d+) (passed|failed)", done.stdout.splitlines()[-1])}
