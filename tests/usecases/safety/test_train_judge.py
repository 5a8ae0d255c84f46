"""scripts/train_safety_judge.py: trains the shipped classifier's kind of file from labels."""

import importlib.util
import json
import sys
from pathlib import Path

import numpy as np

from stellar.usecases.safety.classifier import FEATURE_SETS, SafetyClassifier, shipped_classifier

ROOT = Path(__file__).parents[3]
HELD_OUT = ROOT / "src/stellar/usecases/safety/labels_heldout.jsonl"


def script():
    spec = importlib.util.spec_from_file_location("train", ROOT / "scripts/train_safety_judge.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclass looks itself up there
    spec.loader.exec_module(module)
    return module


def test_training_writes_coefficients_the_classifier_reads(tmp_path, capsys):
    train = script()
    out, held = tmp_path / "weights.json", tmp_path / "held.jsonl"
    labels = [json.loads(line) for line in HELD_OUT.read_text().splitlines()]
    # these rows all hashed below 0.3: a smaller share splits them again
    args = [str(HELD_OUT), "--out", str(out), "--held-out", str(held), "--test-share", "0.1"]
    assert train.main(args) == 0
    model = SafetyClassifier.load(out)
    assert model.features in FEATURE_SETS and 0 < model.threshold < 1
    assert model.about["labels"] == {HELD_OUT.name: train._sha256(HELD_OUT)}
    kept = [json.loads(line)["id"] for line in held.read_text().splitlines()]
    assert kept and set(kept) < {row["id"] for row in labels}  # the held-out part, unchanged
    assert "held out, classifier: precision" in capsys.readouterr().out


def test_the_split_follows_the_ids_not_the_order():
    train = script()
    ids = [f"row-{n}" for n in range(400)]
    share = sum(train.is_test(i, 0.3) for i in ids) / len(ids)
    assert 0.2 < share < 0.4
    assert [train.is_test(i, 0.3) for i in reversed(ids)] == [train.is_test(i, 0.3) for i in ids][
        ::-1
    ]


def test_the_shipped_classifier_matches_its_features():
    model = shipped_classifier()
    width = {"answer": 384, "answer+detector": 389, "answer+detector+request": 773}
    assert model.coefficients.shape == (width[model.features],)
    assert np.isfinite(model.coefficients).all() and model.about["train_rows"] > 300
