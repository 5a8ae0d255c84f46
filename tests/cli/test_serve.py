"""``stellar serve USECASE``: a use case's own system under test over HTTP."""

import json
import re
import signal
import subprocess
import sys
import urllib.request

from conftest import TOY, cli


def test_serve_runs_the_use_case_server_with_its_options(tmp_path):
    server = subprocess.Popen(
        [sys.executable, "-m", "stellar.cli", "serve", "navi", "--port", "0",
         "--option", "pois=multiwoz"],
        stderr=subprocess.PIPE,
        text=True,
    )  # fmt: skip
    try:
        banner = server.stderr.readline()
        port = int(re.search(r"http://127\.0\.0\.1:(\d+)/", banner).group(1))
        request = urllib.request.Request(
            f"http://127.0.0.1:{port}/query",
            data=json.dumps({"text": "Find me a cheap hotel, please"}).encode(),
            headers={"Content-Type": "application/json"},
        )
        with urllib.request.urlopen(request, timeout=120) as reply:
            answer = json.loads(reply.read())
        assert "hotel" in answer["answer"].lower()
        assert any("cambridge" in json.dumps(p).lower() for p in answer["pois"])  # MultiWOZ
    finally:
        server.send_signal(signal.SIGINT)
        assert server.wait(timeout=30) == 0


def test_serve_refuses_a_use_case_without_a_server_and_unknown_options():
    plain = cli("serve", TOY)
    assert plain.returncode == 2
    assert (
        plain.stderr.strip() == "stellar: error: use case 'toy' ships no system under test to serve"
    )
    typo = cli("serve", "navi", "--option", "poi=multiwoz")
    assert typo.returncode == 2
    assert "usecase.poi: use case 'navi' has no such option (options: pois)" in typo.stderr


def test_serve_imports_the_server_from_the_use_case_folder(tmp_path):
    folder = tmp_path / "echo"
    folder.mkdir()
    (folder / "usecase.yaml").write_text(
        "serve: echo_server:build\noptions: {greeting: {default: hello}}\n"
    )
    (folder / "echo_server.py").write_text(
        "from http.server import BaseHTTPRequestHandler, HTTPServer\n\n\n"
        "def build(host, port, greeting):\n"
        "    class Handler(BaseHTTPRequestHandler):\n"
        "        def do_GET(self):\n"
        "            self.send_response(200)\n"
        "            self.end_headers()\n"
        "            self.wfile.write(greeting.encode())\n\n"
        "    return HTTPServer((host, port), Handler)\n"
    )
    server = subprocess.Popen(
        [sys.executable, "-m", "stellar.cli", "serve", folder, "--port", "0",
         "--option", "greeting=howdy"],
        stderr=subprocess.PIPE,
        text=True,
        cwd=tmp_path.parent,
    )  # fmt: skip
    try:
        port = int(re.search(r":(\d+)/", server.stderr.readline()).group(1))
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/", timeout=30) as reply:
            assert reply.read() == b"howdy"
    finally:
        server.send_signal(signal.SIGINT)
        assert server.wait(timeout=30) == 0
