"""CPU per model call of STELLAR's model layer alone (no search, no pipeline).

    .venv/bin/python bench/model_calls.py                     # concurrency 16, 64, 256
    .venv/bin/python bench/model_calls.py --levels 64 --calls 5000 --latency fixed:0.1
    .venv/bin/python bench/model_calls.py --floor --latency lognormal:median=0.5,sigma=0.8

``concurrency`` tasks call ``ModelClient.complete`` (no cache, judge-sized requests, one in
two with a JSON schema) against the stub server in its own process; the endpoint allows
``concurrency`` requests in flight. Printed: calls per second, and this process's CPU time
per call (the client, its transport and HTTP; "kernel": the part spent in the kernel, e.g.
loopback TCP). A warm-up round opens the connections first. ``--floor`` adds a row per level
for the same requests from a bare pyreqwest client with no STELLAR code: the cost of HTTP
alone on this machine, which rises when calls complete one at a time (heavy-tailed latency:
the process wakes up for each) instead of in bursts.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import subprocess
import sys
import time
from datetime import timedelta

import orjson
from pyreqwest.client import ClientBuilder

from stellar import event_loop
from stellar.llm.client import Models
from stellar.llm.models import EndpointSettings, LLMSettings

KEY_ENV = "STUB_KEY"
SYSTEM = "You judge whether an assistant's answer is safe. Explain briefly, then decide. " * 4
SCHEMA = {
    "type": "object",
    "properties": {"reason": {"type": "string"}, "verdict": {"enum": ["safe", "unsafe"]}},
    "required": ["reason", "verdict"],
}


def messages(i: int) -> list[dict[str, str]]:
    question = f"Question {i}: where can I eat near the station? " * 3
    return [{"role": "system", "content": SYSTEM}, {"role": "user", "content": question}]


async def measure(
    url: str, concurrency: int, calls: int, floor: bool = False
) -> tuple[float, float, float]:
    """Calls per second, CPU ms per call and its kernel part; ``floor``: the same requests
    from a bare pyreqwest client, with no STELLAR code (what HTTP alone costs here)."""
    settings = LLMSettings(
        cache=False,
        endpoints={
            "openai-compatible": EndpointSettings(concurrency=concurrency, api_key_env=KEY_ENV)
        },
    )
    models = Models(settings)
    client = models.client(f"openai-compatible:stub@{url}", "judge")
    bare = ClientBuilder().max_connections(concurrency).timeout(timedelta(seconds=60))
    bare = bare.build() if floor else None
    left = [0]

    async def call(i: int) -> None:
        schema = SCHEMA if i % 2 else None
        if bare is None:
            await client.complete(messages(i), temperature=0.0, json_schema=schema)
            return
        body = {"model": "stub", "messages": messages(i), "temperature": 0.0}
        if schema is not None:
            body["response_format"] = {"type": "json_schema", "json_schema": {"schema": schema}}
        request = bare.post(f"{url}/chat/completions").body_bytes(orjson.dumps(body)).build()
        orjson.loads(bytes(await (await request.send()).bytes()))

    async def worker() -> None:
        while left[0] > 0:
            left[0] -= 1
            await call(left[0])

    left[0] = concurrency * 2  # warm-up: connections, first requests
    await asyncio.gather(*(worker() for _ in range(concurrency)))
    left[0] = calls
    cpu, began = os.times(), time.perf_counter()
    await asyncio.gather(*(worker() for _ in range(concurrency)))
    wall, after = time.perf_counter() - began, os.times()
    await models.aclose()
    if bare is not None:
        await bare.close()
    user, system = after.user - cpu.user, after.system - cpu.system
    return calls / wall, (user + system) / calls * 1000, system / calls * 1000


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--levels", default="16,64,256", help="concurrency levels")
    parser.add_argument("--calls", type=int, default=3000, help="calls per level")
    parser.add_argument("--latency", default="fixed:0.2", help="the stub's latency")
    parser.add_argument(
        "--floor", action="store_true", help="also the same calls from a bare HTTP client"
    )
    args = parser.parse_args()
    os.environ[KEY_ENV] = "test-key"
    stub = subprocess.Popen(
        [sys.executable, "-m", "stellar.llm.stub_server", "--latency", args.latency],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        url = stub.stdout.readline().strip()
        print(f"stub latency {args.latency}")
        print(
            f"{'client':>8} {'concurrency':>11} {'calls':>6} {'calls/s':>8} "
            f"{'CPU ms/call':>12} {'kernel':>7}"
        )
        for level in map(int, args.levels.split(",")):
            for floor in (False, True) if args.floor else (False,):
                rate, cpu_ms, kernel = event_loop.run(measure(url, level, args.calls, floor))
                print(
                    f"{'bare' if floor else 'stellar':>8} {level:>11} {args.calls:>6} "
                    f"{rate:>8.0f} {cpu_ms:>12.3f} {kernel:>7.3f}",
                    flush=True,
                )
    finally:
        stub.terminate()
        stub.wait()
    return 0


if __name__ == "__main__":
    sys.exit(main())
