"""The direct transport sends what the openai SDK sends and raises what the SDK raises."""

from __future__ import annotations

import shutil
import socket
import ssl
import subprocess
from pathlib import Path

import openai
import pytest

from stellar.llm.stub_server import Fail, Hang, StubLLMServer
from stellar.llm.transport import DirectPost, env_proxy

PATH = "/chat/completions"
BODY = {"model": "m", "messages": [{"role": "user", "content": "hi"}], "temperature": 0.0}
# telemetry the SDK adds per attempt, and what each HTTP library sets on its own
OWN_HEADERS = {
    "x-stainless-retry-count",
    "x-stainless-read-timeout",
    "accept-encoding",
    "connection",
    "host",
    "content-length",
}


class Recording(StubLLMServer):
    """A stub that keeps the headers and body of every chat request."""

    def __init__(self, **kwargs) -> None:
        super().__init__(**kwargs)
        self.seen: list[tuple[dict[str, str], dict]] = []

    async def answer(self, headers, body):
        self.seen.append((headers, body))
        return await super().answer(headers, body)


def clients(url: str, timeout: float = 30.0) -> tuple[openai.AsyncOpenAI, DirectPost]:
    sdk = openai.AsyncOpenAI(api_key="test-key", base_url=url, max_retries=0, timeout=timeout)
    return sdk, DirectPost(sdk, 4, timeout)


def timeless(reply: dict) -> dict:
    """A reply without its ``created`` second: two calls may straddle a second."""
    return {key: value for key, value in reply.items() if key != "created"}


async def both(url: str, body: dict = BODY, timeout: float = 30.0) -> list:
    """What the SDK's ``post`` and the direct transport return (or raise) for ``body``."""
    sdk, direct = clients(url, timeout)
    results = []
    posts = (lambda: sdk.post(PATH, body=body, cast_to=object), lambda: direct.post(PATH, body))
    for post in posts:
        try:
            results.append(await post())
        except openai.APIError as exc:
            results.append(exc)
    await sdk.close()
    await direct.aclose()
    return results


async def test_the_request_is_the_sdks():
    with Recording(api_key="test-key") as server:
        via_sdk, direct = await both(server.url)
    (sdk_headers, sdk_body), (own_headers, own_body) = server.seen
    assert timeless(direct) == timeless(via_sdk) and direct["choices"][0]["message"]["content"]
    assert own_body == sdk_body == BODY
    assert own_headers["authorization"] == "Bearer test-key"
    strip = lambda headers: {k: v for k, v in headers.items() if k not in OWN_HEADERS}  # noqa: E731
    assert strip(own_headers) == strip(sdk_headers)


@pytest.mark.parametrize(
    "fail",
    [
        Fail(400, "bad 'temperature'", code="invalid_value"),
        Fail(401, "Incorrect API key provided.", code="invalid_api_key"),
        Fail(403, "not allowed"),
        Fail(404, "The model `m` does not exist"),
        Fail(409, "conflict"),
        Fail(422, "unprocessable"),
        Fail(429, "slow down", headers={"Retry-After": "7"}),
        Fail(429, "You exceeded your current quota", code="insufficient_quota"),
        Fail(418, "teapot"),
        Fail(503, "overloaded"),
    ],
    ids=lambda fail: str(fail.status),
)
async def test_error_replies_raise_the_sdks_errors(fail):
    with StubLLMServer(responder=lambda body: fail) as server:
        via_sdk, direct = await both(server.url)
    assert type(direct) is type(via_sdk)
    assert direct.status_code == via_sdk.status_code == fail.status
    assert str(direct) == str(via_sdk) and direct.body == via_sdk.body
    assert direct.response.headers.get("retry-after") == via_sdk.response.headers.get("retry-after")


async def test_a_hanging_server_is_a_timeout_and_a_closed_port_a_connection_error():
    with StubLLMServer(responder=lambda body: Hang(5)) as server:
        _, direct = await both(server.url, timeout=0.3)
    assert isinstance(direct, openai.APITimeoutError)
    with socket.socket() as free:
        free.bind(("127.0.0.1", 0))
        port = free.getsockname()[1]
    _, direct = await both(f"http://127.0.0.1:{port}/v1")
    assert type(direct) is openai.APIConnectionError
    assert str(direct).startswith("connection error: ") and "refused" in str(direct)


def test_proxies_come_from_the_environment_once(monkeypatch):
    for name in ("http", "https", "all", "no"):  # whatever the machine running the tests sets
        monkeypatch.delenv(f"{name}_proxy", raising=False)
        monkeypatch.delenv(f"{name.upper()}_PROXY", raising=False)
    monkeypatch.setenv("HTTPS_PROXY", "http://proxy.example:3128")
    monkeypatch.setenv("NO_PROXY", "internal.example")
    assert env_proxy("https://api.openai.com/v1") == "http://proxy.example:3128"
    assert env_proxy("https://internal.example/v1") is None
    assert env_proxy("http://127.0.0.1:8000/v1") is None  # no HTTP_PROXY


async def test_requests_go_through_the_proxy_the_environment_names(monkeypatch):
    for name in ("http", "https", "all", "no"):
        monkeypatch.delenv(f"{name}_proxy", raising=False)
        monkeypatch.delenv(f"{name.upper()}_PROXY", raising=False)
    with StubLLMServer() as proxy:  # a proxy gets the full URL in its request line
        monkeypatch.setenv("HTTP_PROXY", proxy.url.removesuffix("/v1"))
        _, direct = clients("http://llm.example.invalid/v1")
        reply = await direct.post(PATH, BODY)
        await direct.aclose()
    assert reply["choices"][0]["message"]["content"]
    assert proxy.paths == ["http://llm.example.invalid/v1/chat/completions"]


def certificates(folder: Path) -> tuple[Path, Path, Path]:
    """A CA and a server certificate for 127.0.0.1 it signed (rustls refuses a CA as server)."""
    ca, key, cert = folder / "ca.pem", folder / "server.key", folder / "server.pem"
    openssl = ["openssl", "req", "-newkey", "rsa:2048", "-nodes", "-days", "2", "-subj"]
    subprocess.run(
        [*openssl, "/CN=test CA", "-x509", "-keyout", folder / "ca.key", "-out", ca],
        check=True,
        capture_output=True,
    )
    subprocess.run(
        [*openssl, "/CN=127.0.0.1", "-keyout", key, "-out", folder / "server.csr"],
        check=True,
        capture_output=True,
    )
    (folder / "san.ext").write_text("subjectAltName=IP:127.0.0.1\n")
    subprocess.run(
        [
            *("openssl", "x509", "-req", "-in", folder / "server.csr", "-CA", ca, "-CAkey"),
            *(folder / "ca.key", "-CAcreateserial", "-days", "2", "-out", cert),
            *("-extfile", folder / "san.ext"),
        ],
        check=True,
        capture_output=True,
    )
    return ca, cert, key


@pytest.mark.skipif(shutil.which("openssl") is None, reason="needs the openssl command")
async def test_https_trusts_what_ssl_cert_file_names_as_the_sdk_does(tmp_path, monkeypatch):
    ca, cert, key = certificates(tmp_path)
    tls = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    tls.load_cert_chain(cert, key)
    for name in ("SSL_CERT_FILE", "SSL_CERT_DIR"):
        monkeypatch.delenv(name, raising=False)
    with StubLLMServer(tls=tls) as server:
        assert server.url.startswith("https://")
        unknown = await both(server.url)
        monkeypatch.setenv("SSL_CERT_FILE", str(ca))
        trusted = await both(server.url)
    assert [type(e) for e in unknown] == [openai.APIConnectionError] * 2
    assert timeless(trusted[0]) == timeless(trusted[1])
    assert trusted[1]["choices"][0]["message"]["content"]


async def test_a_malformed_proxy_is_a_connection_error_that_names_it(monkeypatch):
    for name in ("http", "https", "all", "no"):
        monkeypatch.delenv(f"{name}_proxy", raising=False)
        monkeypatch.delenv(f"{name.upper()}_PROXY", raising=False)
    monkeypatch.setenv("HTTP_PROXY", "http://bad host:3128")
    _, direct = clients("http://llm.example.invalid/v1")
    with pytest.raises(openai.APIConnectionError, match="HTTP\\(S\\)_PROXY"):
        await direct.post(PATH, BODY)
    await direct.aclose()


async def test_a_machine_without_ca_certificates_still_reaches_its_endpoint(tmp_path, monkeypatch):
    monkeypatch.delenv("SSL_CERT_FILE", raising=False)
    monkeypatch.setenv("SSL_CERT_DIR", str(tmp_path))  # an empty store: certifi's roots remain
    with StubLLMServer() as server:
        via_sdk, direct = await both(server.url)
    assert timeless(direct) == timeless(via_sdk) and direct["choices"][0]["message"]["content"]


async def test_a_key_that_http_refuses_is_not_shown():
    sdk = openai.AsyncOpenAI(api_key="sk-secret\n", base_url="http://127.0.0.1:9/v1")
    direct = DirectPost(sdk, 4, 5.0)
    with pytest.raises(openai.APIConnectionError) as raised:
        await direct.post(PATH, BODY)
    await direct.aclose()
    assert "sk-secret" not in str(raised.value) and "cannot set up HTTP" in str(raised.value)
