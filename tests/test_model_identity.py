"""Model identity: which runs a diff may compare and which a batch-size sweep may group."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from analyzer.cli import main
from analyzer.metrics.model_identity import ModelIdentity, group_models, model_difference

ROOT = Path(__file__).resolve().parents[1]
LAYER = {"Conv2D": 4, "BNTrainingUpdate": 4, "Relu": 4, "Add": 4, "MatMulV2": 4, "TransData": 4}
SHAPES = frozenset({"4,56,56,16", "64,56,56"})


def _ident(run_id: str, name: str | None = "resnet50", ops=None, shapes=SHAPES) -> ModelIdentity:
    return ModelIdentity(run_id, name, dict(LAYER if ops is None else ops), shapes)


def test_model_identity_other_name_is_another_model():
    assert "bert_base vs resnet50" in model_difference(_ident("a", "bert_base"), _ident("b"))


def test_model_identity_added_conversions_stay_one_model():
    upgraded = {**LAYER, "Cast": 4}  # a CANN upgrade inserting conversions keeps the model
    assert model_difference(_ident("a"), _ident("b", ops=upgraded)) is None


def test_model_identity_deeper_variant_is_another_model():
    deeper = {t: 6 for t in LAYER}
    reason = model_difference(_ident("a"), _ident("b", ops=deeper))
    assert reason and "another depth or variant" in reason and "24 vs 36 ops per step" in reason


def test_model_identity_other_shapes_or_op_mix_is_another_model():
    assert "input shapes differ" in model_difference(_ident("a"), _ident("b", shapes=frozenset({"768", "512,768"})))
    other = {"MatMulV2": 8, "SoftmaxV2": 4, "LayerNorm": 4, "Gelu": 4}
    assert "share only" in model_difference(_ident("a"), _ident("b", ops=other))


def test_model_identity_what_a_run_did_not_record_is_not_compared():
    level0 = _ident("b", name=None, ops={}, shapes=frozenset())
    assert model_difference(_ident("a"), level0) is None


def test_group_models_largest_group_keeps_the_name_others_are_variants():
    runs = [_ident(f"bs{i}") for i in (1, 2, 4)] + [_ident("deep", ops={t: 8 for t in LAYER})]
    labels = group_models(runs)
    assert {labels[f"bs{i}"] for i in (1, 2, 4)} == {"resnet50"}
    assert labels["deep"] == "resnet50 (variant 2: 48 ops per step)"


@pytest.mark.slow
def test_diagnose_bundled_examples_sweeps_one_model_without_the_deeper_run(tmp_path):
    assert main(["diagnose", str(ROOT / "fixtures" / "examples"), "--out", str(tmp_path), "--format", "json"]) == 0
    (finding,) = json.loads((tmp_path / "all-runs" / "diagnosis.json").read_text())["findings"]
    assert finding["subject"] == "resnet50"
    assert finding["details"]["max_batch_size"] == 16 and finding["details"]["run_count"] == 5
    assert "bs 32" not in finding["details"]["scaling_table"]
