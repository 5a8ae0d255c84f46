"""Load time and generation speed of a local model (``local:smollm2`` by default) on this CPU.

    .venv/bin/python bench/local_model.py
    .venv/bin/python bench/local_model.py --model local:path/to/model.gguf --tokens 64 --repeat 5
    .venv/bin/python bench/local_model.py --threads 1      # when other processes share the CPU

Prints the seconds the first load takes, then tokens per second for each repetition of a
greedy answer of ``--tokens`` new tokens (no stop at the end of the answer) and the median.
"""

from __future__ import annotations

import argparse
import statistics
import time

import torch

from stellar.llm.local import load_model, model_path
from stellar.llm.models import parse_model

PROMPT = [
    {"role": "system", "content": "You are a helpful in-car navigation assistant."},
    {"role": "user", "content": "Find me a cheap Italian restaurant with parking near the centre."},
]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="local:smollm2")
    parser.add_argument("--tokens", type=int, default=64, help="new tokens per answer")
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--threads", type=int, help="torch threads (default: torch's choice)")
    args = parser.parse_args()
    if args.threads:
        torch.set_num_threads(args.threads)
    began = time.perf_counter()
    model = load_model(model_path(parse_model(args.model)))
    print(
        f"{args.model}: loaded in {time.perf_counter() - began:.1f} s "
        f"({torch.get_num_threads()} torch threads)"
    )
    model.stop = set()  # always generate --tokens tokens
    rates = []
    for i in range(args.repeat):
        began = time.perf_counter()
        answer = model.generate(PROMPT, 0.0, args.tokens, 0)
        seconds = time.perf_counter() - began
        rates.append(answer.output_tokens / seconds)
        print(
            f"  run {i + 1}: {answer.input_tokens} tokens in, {answer.output_tokens} out, "
            f"{seconds:.2f} s, {rates[-1]:.1f} tokens/s"
        )
    print(f"median {statistics.median(rates):.1f} tokens/s for {args.tokens} new tokens")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
