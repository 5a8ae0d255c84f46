"""``stellar compare --cluster``: runs as Dask tasks on workers that share no directory with
the client give the same archives as local runs, and survive a worker killed mid-run."""

from __future__ import annotations

import io
import json
import os
import socket
import sqlite3
import subprocess
import sys
import tarfile
import threading
import time
from pathlib import Path

import pytest
from conftest import TOY, cli
from distributed import Client

from stellar.cluster import connect, execute, pack, parse_cluster, unpack
from stellar.errors import StellarError
from stellar.experiment import Plan, counts
from stellar.experiment import execute as execute_locally

BIN = Path(sys.executable).parent
ROWS = 'SELECT generation, "index", status, input_text, scores FROM tests'
TWISE = {"algorithm.twise.strength": 3}  # a small covering array: built in 0.2 s
COMMON = ["--tests", 60, "--concurrency", 1, "--embedder", "hashing", "--repeats", 1]


def plan(**changes) -> Plan:
    settings = {
        "config": str(TOY / "run.yaml"),
        "algorithms": ["stellar", "random", "twise"],
        "seeds": [0, 1],
        "tests": 60,
        "overrides": {"concurrency": 1},
        "settings": TWISE,
    }
    return Plan(**{**settings, **changes})


def rows(run_dir: Path) -> list[tuple]:
    with sqlite3.connect(run_dir / "archive.sqlite") as db:
        return sorted(db.execute(ROWS))


def resumed(run_dir: Path) -> bool:
    with sqlite3.connect(run_dir / "archive.sqlite") as db:
        return bool(db.execute("SELECT 1 FROM meta WHERE key = 'resumed_at'").fetchall())


def checkpointed(root: Path) -> set[str]:
    """The runs with a checkpoint in the experiment directory (not the files being staged)."""
    found = {p.parent.name for p in root.glob("runs/*/archive.sqlite")}
    return {name for name in found if not name.startswith(".")}


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture(scope="module")
def local_run(tmp_path_factory) -> tuple[Path, list[tuple]]:
    """The experiment run locally, in a process pool (what the cluster must reproduce): its
    runs folder and the progress it reported."""
    root = tmp_path_factory.mktemp("local")
    progress: list[tuple] = []
    execute_locally(root, plan(), 2, lambda *done: None, lambda *seen: progress.append(seen))
    return root / "runs", progress


@pytest.fixture(scope="module")
def reference(local_run) -> Path:
    return local_run[0]


def test_local_runs_report_progress_too(local_run):
    _, progress = local_run
    assert {(a, s) for a, s, _ in progress} == {
        (a, s) for a in ("stellar", "random", "twise") for s in (0, 1)
    }
    assert all(0 < seen["tests"] <= 60 and seen["errors"] == 0 for *_, seen in progress)


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    """A `dask scheduler` and two `dask worker` processes on 127.0.0.1, with a cache of
    their own and checkpoints every 0.3 s; yields (address, workers, their cache)."""
    home = tmp_path_factory.mktemp("dask")
    address = f"tcp://127.0.0.1:{free_port()}"
    env = {**os.environ, "STELLAR_CACHE_DIR": str(home / "cache")}
    env["STELLAR_CHECKPOINT_SECONDS"] = "0.3"
    dask = [str(BIN / "dask")]
    port = address.rsplit(":", 1)[1]
    scheduler = subprocess.Popen(
        [*dask, "scheduler", "--host", "127.0.0.1", "--port", port, "--no-dashboard"],
        cwd=home,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    worker = [*dask, "worker", address, "--nthreads", "1", "--nworkers", "1", "--no-nanny"]
    worker += ["--no-dashboard", "--host", "127.0.0.1"]
    workers = [
        subprocess.Popen(
            worker, cwd=home, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
        )
        for _ in range(2)
    ]
    try:
        with Client(address, timeout=30) as client:
            client.wait_for_workers(2, timeout=60)
        yield address, workers, home / "cache"
    finally:
        # workers first, while the scheduler they say goodbye to still runs; one that has not
        # stopped after 30 s (once in CI, cause not found) is killed, not left running
        for group in (workers, [scheduler]):
            for process in group:
                process.terminate()
            for process in group:
                try:
                    process.wait(timeout=30)
                except subprocess.TimeoutExpired:
                    process.kill()
                    process.wait()


def test_a_cluster_compare_equals_a_local_one_and_resumes_from_the_local_copy(
    tmp_path, cluster, reference
):
    address, _, worker_cache = cluster
    root = tmp_path / "exp"
    args = ["compare", TOY / "run.yaml", "--algorithms", "stellar,random,twise", "--seeds", 2]
    args += [*COMMON, "--set", "algorithm.twise.strength=3", "--dir", root, "--cluster", address]
    env = {**os.environ, "STELLAR_CACHE_DIR": str(tmp_path / "client-cache")}
    first = cli(*args, env=env)
    assert first.returncode == 0, first.stderr
    names = sorted(d.name for d in reference.iterdir())
    assert sorted(d.name for d in (root / "runs").iterdir()) == names
    for name in names:
        assert rows(root / "runs" / name) == rows(reference / name), name
        summary = json.loads((root / "runs" / name / "summary.json").read_text())
        assert summary["tests"] == 60 and summary["run_dir"] == str(root / "runs" / name)
    assert (root / "report" / "runs.csv").exists()
    # the covering array was built once, by the client, and no worker built its own
    assert list((tmp_path / "client-cache" / "covering-arrays").glob("*.json"))
    assert not (worker_cache / "covering-arrays").exists()

    # a client killed while a run was in flight: that run resumes from its local copy
    killed = root / "runs" / "stellar-s1"
    (killed / "summary.json").unlink()
    with sqlite3.connect(killed / "archive.sqlite") as db:
        db.execute("DELETE FROM tests WHERE id > (SELECT MAX(id) - 5 FROM tests)")
    done = []
    with Client(address, timeout=10) as client:
        _, skipped = execute(root, plan(), client, lambda *d: done.append(d))
    assert skipped == 5 and [(a, s, e) for a, s, _, e in done] == [("stellar", 1, None)]
    assert rows(killed) == rows(reference / killed.name) and resumed(killed)
    assert not resumed(root / "runs" / "random-s0")


def test_a_worker_killed_mid_run_loses_nothing(tmp_path, cluster, reference):
    address, workers, _ = cluster
    slow = {"concurrency": 1, "sut.target": "toy:slow_answer"}  # 3 s a run
    experiment = plan(algorithms=["stellar", "random"], overrides=slow)

    def kill_in_the_middle() -> None:
        deadline = time.monotonic() + 60
        while len(checkpointed(tmp_path)) < 2:  # a checkpoint from each worker
            if time.monotonic() > deadline:
                return
            time.sleep(0.05)
        workers[0].kill()  # SIGKILL, in the middle of its run

    killer = threading.Thread(target=kill_in_the_middle)
    killer.start()
    errors = []
    with Client(address, timeout=10) as client:
        execute(tmp_path, experiment, client, lambda a, s, summary, e: errors.append(e))
    killer.join()
    assert workers[0].poll() is not None and errors == [None] * 4
    runs = sorted((tmp_path / "runs").iterdir())
    assert [d.name for d in runs] == ["random-s0", "random-s1", "stellar-s0", "stellar-s1"]
    for run_dir in runs:
        found = rows(run_dir)
        assert len(found) == 60 and len({(g, i) for g, i, *_ in found}) == 60
        assert found == rows(reference / run_dir.name), run_dir.name
    assert any(resumed(d) for d in runs)  # the killed worker's run went on from a checkpoint


def test_a_local_cluster_reports_progress_and_gives_the_same_runs(tmp_path, reference):
    slow = {"concurrency": 1, "sut.target": "toy:slow_answer"}  # 3 s a run: progress to see
    experiment = plan(algorithms=["twise"], seeds=[1], overrides=slow)
    done, progress = [], []
    with connect(parse_cluster("local:2")) as client:
        runs, skipped = execute(
            tmp_path, experiment, client, lambda *d: done.append(d), lambda *p: progress.append(p)
        )
    assert skipped == 0 and [(a, s, e) for a, s, _, e in done] == [("twise", 1, None)]
    assert counts(done[0][2])["tests"] == 60 and counts(done[0][2])["errors"] == 0
    tests = [seen["tests"] for a, s, seen in progress if (a, s) == ("twise", 1)]
    assert tests == sorted(tests) and 0 < tests[0] < 60, tests  # live, growing
    assert rows(runs["twise"][0]) == rows(reference / "twise-s1")


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("local:0", "local:N needs N worker processes"),
        ("local:two", "local:N needs"),
        ("garbage", "a Dask scheduler's address"),
        ("tcp://127.0.0.1", "a Dask scheduler's address"),
        ("tcp://127.0.0.1:99999", "a Dask scheduler's address"),
    ],
)
def test_a_bad_cluster_address_is_one_line_and_exit_2(tmp_path, capsys, spec, message):
    from stellar.cli import main

    code = main(["compare", str(TOY / "run.yaml"), "--dir", str(tmp_path / "x"), "--cluster", spec])
    err = capsys.readouterr().err
    assert code == 2 and err.startswith("stellar: error: --cluster") and message in err, err
    assert len(err.strip().splitlines()) == 1 and not (tmp_path / "x").exists()


def test_an_unreachable_scheduler_is_one_line_and_exit_2(tmp_path, capsys):
    from stellar.cli import main

    address = f"tcp://127.0.0.1:{free_port()}"  # nothing listens there
    args = ["compare", str(TOY / "run.yaml"), "--algorithms", "random", "--seeds", "1"]
    code = main([*args, "--dir", str(tmp_path / "x"), "--cluster", address])
    err = capsys.readouterr().err
    assert code == 2 and "cannot reach a Dask scheduler" in err, err
    assert len(err.strip().splitlines()) == 1 and not (tmp_path / "x").exists()


def test_parse_cluster_reads_addresses_and_local_counts():
    assert parse_cluster("local:3") == 3
    assert parse_cluster("tcp://10.0.0.5:8786") == "tcp://10.0.0.5:8786"
    assert parse_cluster("scheduler.lan:8786") == "tcp://scheduler.lan:8786"
    with pytest.raises(StellarError):
        parse_cluster("http://x:1")


def test_a_packed_run_directory_unpacks_to_the_same_files_and_never_outside(tmp_path):
    source = tmp_path / "run"
    source.mkdir()
    with sqlite3.connect(source / "archive.sqlite") as db:
        db.execute("PRAGMA journal_mode=WAL")
        db.execute("CREATE TABLE t (x)")
        db.execute("INSERT INTO t VALUES (1)")  # committed, still in the WAL
    (source / "summary.json").write_text("{}")
    (source / ".lock").write_text("pid 1")
    target = tmp_path / "copy"
    target.mkdir()
    (target / "archive.sqlite-wal").write_bytes(b"stale")  # of the archive it replaces
    unpack(pack(source), target)
    assert sorted(p.name for p in target.iterdir()) == ["archive.sqlite", "summary.json"]
    with sqlite3.connect(target / "archive.sqlite") as db:
        assert db.execute("SELECT x FROM t").fetchall() == [(1,)]

    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as tar:
        for name in ("../escaped", "/tmp/absolute", "ok.txt"):
            member = tarfile.TarInfo(name)
            member.size = 2
            tar.addfile(member, io.BytesIO(b"hi"))
    unpack(buffer.getvalue(), target)
    assert (target / "ok.txt").read_text() == "hi" and not (tmp_path / "escaped").exists()
