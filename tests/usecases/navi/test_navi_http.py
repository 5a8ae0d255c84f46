"""The navigation use case against a system under test over HTTP: scored as in-process."""

import asyncio
import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import ClassVar

import pytest
import yaml
from conftest import cli
from jsonschema import Draft202012Validator

from stellar.cli import main
from stellar.config import load_config
from stellar.run import Run
from stellar.usecases.navi.server import build_server
from stellar.usecases.navi.vocabulary import vocabulary

SCHEMA = json.loads(
    (load_config(None).response_schema or pytest.fail("navi declares a schema")).read_text()
)


def serve(server: ThreadingHTTPServer) -> str:
    threading.Thread(target=server.serve_forever, daemon=True).start()
    host, port = server.server_address[:2]
    return f"http://{host}:{port}/query"


def run(tmp_path, **overrides):
    config = load_config(None, {"out": str(tmp_path), "budget.tests": 60, "seed": 0, **overrides})
    return asyncio.run(Run(config).execute())


def test_the_assistant_over_http_scores_as_in_process(tmp_path):
    server = build_server("127.0.0.1", 0)
    try:
        url = serve(server)
        over_http = run(tmp_path / "http", sut={"type": "http", "url": url})
    finally:
        server.shutdown()
    in_process = run(tmp_path / "local")
    assert over_http.sut_errors == 0 and over_http.unhealthy is None
    assert abs(over_http.failure_ratio - in_process.failure_ratio) <= 0.05
    config = yaml.safe_load(next((tmp_path / "http").glob("*/config.yaml")).read_text())
    assert config["sut"]["options"]["data"] == "$.pois"  # the use case's default path


class Replies(BaseHTTPRequestHandler):
    reply: ClassVar[dict] = {}

    def do_POST(self):
        self.rfile.read(int(self.headers["Content-Length"]))
        body = json.dumps(self.reply).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


def replying(reply: dict) -> ThreadingHTTPServer:
    handler = type("Handler", (Replies,), {"reply": reply})
    return ThreadingHTTPServer(("127.0.0.1", 0), handler)


@pytest.mark.parametrize(
    ("reply", "expected"),
    [
        ({"answer": "Go to Bar Uno."}, "no data at $.pois in the reply: map it with sut.data"),
        (
            {"answer": "Go to Fix-It.", "pois": [{"name": "Fix-It", "category": "car repair"}]},
            "at data[0].category: 'car repair' is not one of",
        ),
    ],
)
def test_answers_without_the_venues_stop_the_run_naming_what_is_missing(
    tmp_path, capsys, reply, expected
):
    server = replying(reply)
    try:
        url = serve(server)
        code = main(["run", "--sut", url, "--tests", "40", "--quiet", "--out", str(tmp_path)])
    finally:
        server.shutdown()
    last = capsys.readouterr().err.strip().splitlines()[-1]  # after the run's banner
    assert code == 3 and last.startswith("stellar: not healthy:") and expected in last, last
    assert "sut.data=null" not in last  # the hint never leads into a run without the venues


@pytest.mark.parametrize(
    ("args", "setting"),
    [
        (["--sut", "http://127.0.0.1:9/query", "--set", "sut.data=null"], "sut.data"),
        (["--sut", "http://127.0.0.1:9/query", "--set", "sut.data="], "sut.data"),
        (["--sut", "openai-compatible:m@http://127.0.0.1:9/v1"], "sut"),
        (["--sut", "local:smollm2"], "sut"),
    ],
)
def test_a_system_that_returns_no_venues_is_refused_at_load(tmp_path, args, setting):
    result = cli("run", *args, "--tests", "5", "--out", tmp_path)
    assert result.returncode == 2, result.stderr
    [line] = result.stderr.strip().splitlines()
    assert f": {setting}: use case 'navi' scores the data every answer returns" in line
    assert "set sut.data to the JSONPath" in line if setting == "sut.data" else "chat" in line
    assert not any(tmp_path.iterdir())  # no run directory


def test_a_system_that_returns_the_venues_still_loads(tmp_path):
    url = "http://127.0.0.1:9/query"
    config = load_config(None, {"sut": {"type": "http", "url": url}})
    assert config.sut.options["data"] == "$.pois"
    mapped = load_config(None, {"sut": {"type": "http", "url": url, "data": "$.result.venues"}})
    assert mapped.sut.options["data"] == "$.result.venues"
    assert load_config(None, {}, {"sut.llm": "openai-compatible:m@http://x/v1"}).sut.type == "navi"
    assert cli("run", "--sut", url, "--dry-run", "--out", tmp_path).returncode == 0


def test_another_fitness_on_the_navi_features_may_read_the_text_alone():
    config = load_config(
        None,
        {"sut": {"type": "chat", "model": "openai-compatible:m@http://x/v1"}},
        {
            "fitness": {"target": "toy:quality", "objectives": ["quality"]},
            "oracle": {"below": {"quality": 0.5}},
        },
    )
    assert config.sut.type == "chat"


def test_export_data_writes_the_venues_in_the_response_shape(tmp_path, capsys):
    path = tmp_path / "venues.json"
    assert main(["export-data", "navi", str(path), "--option", "pois=multiwoz"]) == 0
    venues = json.loads(path.read_text())
    assert len(venues) > 200 and "wrote" in capsys.readouterr().err
    Draft202012Validator(SCHEMA).validate(venues)


def test_the_response_schema_uses_the_vocabulary():
    words = vocabulary()
    item = SCHEMA["items"]["properties"]
    assert item["category"]["enum"] == list(words.categories)
    assert item["cuisine"]["enum"] == [*words.cuisines, None]
    assert item["price"]["enum"] == [*words.price_levels, None]
    assert item["payment"]["items"]["enum"] == list(words.payment_methods)
