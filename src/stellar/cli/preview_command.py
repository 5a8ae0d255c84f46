"""``stellar preview CONFIG -n 20``: the inputs a configuration would send, sending nothing.

Before a run is spent on a question writer that garbles its questions or a feature nobody
meant, a person should read what will be asked. Only the feature space, the search and the
generator are built: no system under test, no judge, no fitness. Each input is written with
the seed a run gives it (``SEED:GENERATION:INDEX``), so the first generation shown is what a
run with that seed sends first.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import sys
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any

from stellar.cli.options import add_command, add_option_flags, model_choice, settings
from stellar.errors import StellarError

if TYPE_CHECKING:
    from stellar.config import RunConfig
    from stellar.features import FeatureSpace
    from stellar.generators import Generator
    from stellar.search import Algorithm

HELP = """\
Print N inputs a configuration would send, each with its feature values, sending nothing
to the system under test or to a judge (they are not even built).

CONFIG is what stellar run takes: a run configuration, a use case's name or its folder. The
first inputs are the search's first generation, written with the seeds a run with --seed
gives them, so a run sends the same ones first (less the near-duplicates it drops). Later
generations of a run are bred from its scores, which a preview has not got: past the first
generation, the search is asked again as after a generation with no scores (most sample
afresh). An input a run would not send is marked: a generator error, an empty or overlong
input, or the same text as an earlier one.

A generator that calls a model (--generator MODEL, or a use case's llm generator) is refused
unless --allow-model: each input is then one paid model call. --generator offline previews
the use case's own writer instead.

examples:
  stellar preview faq-bot -n 20                  a use case folder (stellar init)
  stellar preview run.yaml -n 50 --seed 3 --algorithm random
  stellar preview safety -n 5 --json             machine-readable, one JSON document
  stellar preview safety --generator openai:gpt-4o-mini --allow-model -n 5
"""

MAX_N = 10_000


@dataclass
class PreviewInput:
    """One input as a run would write it, and why a run would not send it (``note``)."""

    number: int  # 1-based, as printed
    generation: int
    index: int  # within its generation
    features: dict[str, Any]
    text: str | None
    note: str | None = None
    prompt: str | None = field(default=None, repr=False)  # a model generator's request


def count(text: str) -> int:
    """``-n``: a whole number from 1 to MAX_N."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if not 1 <= value <= MAX_N:
        raise argparse.ArgumentTypeError(f"{value}: must be from 1 to {MAX_N:,}")
    return value


def add_parser(commands: argparse._SubParsersAction) -> None:
    preview = add_command(
        commands, "preview", "print the inputs a configuration would send; sends nothing", HELP
    )
    preview.add_argument(
        "-n", type=count, default=20, metavar="N", help="inputs to print (default 20)"
    )
    preview.add_argument("--seed", type=int, help="the run's seed (default: the configuration's)")
    preview.add_argument(
        "--algorithm", help="the search that picks the feature values (default: the configured)"
    )
    preview.add_argument(
        "--generator",
        metavar="MODEL",
        help="a model writes the inputs (needs --allow-model); 'offline': the use case's own",
    )
    preview.add_argument(
        "--allow-model",
        action="store_true",
        help="let a model generator write the inputs (N paid calls; nothing else is sent)",
    )
    preview.add_argument("--json", action="store_true", help="one JSON document on stdout")
    add_option_flags(preview)
    preview.set_defaults(handler=cmd_preview)


def cmd_preview(args: argparse.Namespace) -> int:
    from stellar import event_loop
    from stellar.config import load_config

    overrides = {
        "algorithm.name": args.algorithm,
        "seed": args.seed,
        "generator": model_choice(args.generator, "generator"),
    }
    config = load_config(args.config, overrides, settings(args))
    if (models := generator_models(config)) and not args.allow_model:
        raise StellarError(
            f"the generator calls a model ({', '.join(models)}): give --allow-model to let it "
            f"write the {args.n} inputs ({args.n} model calls; nothing else is sent), or "
            "--generator offline for the use case's own writer"
        )
    inputs, generations = event_loop.run(preview_inputs(config, args.n))
    if args.json:
        print(json.dumps(document(config, inputs, generations), indent=2))
    else:
        print_inputs(config, inputs, generations)
    return 0


def generator_models(config: RunConfig) -> list[str]:
    """The models the configured generator would call (none: it writes offline)."""
    from stellar.config import model_names

    return [name for where, name in model_names(config) if where.startswith("generator.")]


async def preview_inputs(config: RunConfig, n: int) -> tuple[list[PreviewInput], int]:
    """The first ``n`` inputs and how many generations the search was asked for them."""
    from stellar.assembly import build_algorithm

    space = config.feature_space()
    algorithm = build_algorithm(config, space, config.algorithm.name)
    generator = await build_generator(config, space)
    inputs: list[PreviewInput] = []
    seen: dict[str, int] = {}  # text -> the number it was first printed with
    generation = 0
    while len(inputs) < n:
        candidates = algorithm.ask()
        if not candidates:  # a finite search (t-wise) has asked every candidate
            break
        batch = candidates[: n - len(inputs)]
        written = await asyncio.gather(
            *(
                write_one(generator, c, random.Random(f"{config.seed}:{generation}:{i}"))
                for i, c in enumerate(batch)
            )
        )
        for index, (candidate, (text, prompt, note)) in enumerate(zip(batch, written, strict=True)):
            number = len(inputs) + 1
            note = note or screen(text, config.max_input_chars, seen, number)
            values = dict(candidate.values)
            inputs.append(PreviewInput(number, generation, index, values, text, note, prompt))
        generation += 1
        if len(inputs) < n and not tell_nothing(algorithm, candidates):
            break
    return inputs, generation


async def build_generator(config: RunConfig, space: FeatureSpace) -> Generator:
    """The configured generator, prepared as a run prepares it; a model option is handed
    over as a ready client, as for a run."""
    import inspect

    from stellar.assembly import instantiate, run_endpoints
    from stellar.config import MODEL_OPTIONS
    from stellar.generators import as_generator
    from stellar.registry import resolve

    component = config.generator
    options = dict(component.options)
    if any(isinstance(options.get(key), str) for key in MODEL_OPTIONS):
        from stellar.llm.client import Models  # only for a model generator (--allow-model)

        models = Models(run_endpoints(config))
        for key in MODEL_OPTIONS:
            if isinstance(options.get(key), str):
                where = f"generator.{'options.' * (component.type == 'python')}{key}"
                options[key] = models.client(options[key], "generator", where)
    plugin = resolve("generator", component.plugin)
    generator = as_generator(instantiate(plugin, options, {"features": space}))
    if (prepare := getattr(generator, "prepare", None)) is not None:
        if inspect.iscoroutinefunction(prepare):
            await prepare()
        else:
            await asyncio.to_thread(prepare)
    return generator


async def write_one(
    generator: Generator, candidate: Any, rng: random.Random
) -> tuple[str | None, str | None, str | None]:
    """(text, prompt, note): a generator's fault is the input's note, as a run records it."""
    from stellar.errors import ModelAccessError

    try:
        written = await generator.generate(candidate, rng)
    except ModelAccessError:
        raise  # no later call can succeed: the key or the model is wrong
    except Exception as exc:
        return None, None, f"generator error: {type(exc).__name__}: {exc}"
    return written.text, written.prompt, None


def screen(text: str | None, max_chars: int, seen: dict[str, int], number: int) -> str | None:
    """Why a run would not send ``text`` (None: it would, unless its embedder finds a
    near-duplicate)."""
    stripped = (text or "").strip()
    if not stripped:
        return "empty: a run does not send it"
    if len(stripped) > max_chars:
        return f"longer than {max_chars} characters: a run does not send it"
    first = seen.setdefault(stripped, number)
    return f"the same text as #{first}: a run does not send it twice" if first != number else None


def tell_nothing(algorithm: Algorithm, candidates: list[Any]) -> bool:
    """Tell the search its generation had no scores (as a run tells discarded inputs), so
    that it asks a new one; False when it will not take that."""
    try:
        algorithm.tell(candidates, [None] * len(candidates))
    except Exception:  # a search that cannot go on without scores: show what it asked
        return False
    return True


def document(config: RunConfig, inputs: list[PreviewInput], generations: int) -> dict[str, Any]:
    """``--json``: what was previewed and the inputs (a prompt only where a model wrote it)."""
    return {
        "config": config.name,
        "algorithm": config.algorithm.name,
        "seed": config.seed,
        "generator": config.generator.plugin,
        "generations": generations,
        "sent": 0,  # nothing is sent to the system under test or a judge
        "inputs": [
            {k: v for k, v in asdict(i).items() if v is not None or k == "text"} for i in inputs
        ],
    }


def print_inputs(config: RunConfig, inputs: list[PreviewInput], generations: int) -> None:
    """A header on stderr; each input on stdout, its feature values on the line below."""
    from stellar.untrusted import for_terminal

    n = len(inputs)
    print(
        f"preview of {for_terminal(config.name)}: {n} input{'s' * (n != 1)} written by "
        f"{for_terminal(config.generator.plugin)} for the candidates of algorithm "
        f"{for_terminal(config.algorithm.name)}, seed {config.seed} ({generations} "
        f"generation{'s' * (generations != 1)}); nothing was sent",
        file=sys.stderr,
    )
    width = len(str(len(inputs)))
    for item in inputs:
        if item.generation and item.index == 0:
            print(f"-- generation {item.generation}: a run breeds it from scores; asked without")
        lines = (item.text or "").splitlines() or [""]
        print(f"{item.number:>{width}}  {for_terminal(lines[0])}")
        for line in lines[1:]:  # a conversation: a turn per line
            print(f"{'':>{width}}  {for_terminal(line)}")
        pairs = "  ".join(f"{k}={v}" for k, v in item.features.items())
        print(f"{'':>{width}}  [{for_terminal(pairs)}]")
        if item.note:
            print(f"{'':>{width}}  ({for_terminal(item.note)})")
