"""JSON round trip and the documented schema."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest
from profile_factory import four_node_function

from graphc.profile import (
    FunctionProfile,
    OptimizerProfile,
    PassRecord,
    ProfileStats,
    RewriteRecord,
    StorageRecord,
    ValueInfo,
    load,
)
from graphc.profile.data import model

SCHEMA_DOC = Path(__file__).resolve().parents[1] / "docs" / "profile-schema.md"


def _rich() -> ProfileStats:
    f = four_node_function()
    f.inputs = [StorageRecord("x", 0, 8000, "float64", (1000,))]
    f.constants = [StorageRecord("2.0", 3, 8, "float64", ())]
    f.memory_recorded = True
    f.nodes[0].output_kinds = ["c"]
    f.nodes[0].output_aliases = [None]
    f.nodes[1].output_kinds = ["v"]
    f.nodes[1].output_aliases = [1]
    f.nodes[0].out_bytes_min, f.nodes[0].out_bytes_max = [8000], [8000]
    f.nodes[2].frees_after = [4]
    f.nodes[2].has_c_impl = True
    f.nodes[3].inputs = [ValueInfo("object")]
    f.optimizer_profile = OptimizerProfile([PassRecord("canon", 12)], [RewriteRecord("r", 3, 1, 5)])
    g = FunctionProfile("g")
    return ProfileStats([f, g], name="both")


def test_round_trip_is_equal(tmp_path):
    stats = _rich()
    path = tmp_path / "p.json"
    stats.save(path)
    back = load(path)
    assert back == stats
    assert back.functions[0].nodes[0].inputs[0].shape == (1000,)  # tuples, not lists
    assert isinstance(back.functions[0].nodes[0].flops_per_call, float)


def test_document_header():
    f = four_node_function()
    doc = json.loads(ProfileStats([f]).to_json())
    assert doc["schema_version"] == 1
    assert doc["functions"][0]["nodes"][0]["ns_total"] == 3_000_000


def test_unknown_version_rejected():
    doc = json.loads(ProfileStats([four_node_function()]).to_json())
    doc["schema_version"] = 2
    with pytest.raises(ValueError, match="schema_version"):
        ProfileStats.from_json(json.dumps(doc))


def test_every_field_is_documented():
    text = SCHEMA_DOC.read_text()
    classes = [
        model.ValueInfo,
        model.NodeRecord,
        model.CompilePhases,
        model.PassRecord,
        model.RewriteRecord,
        model.OptimizerProfile,
        model.StorageRecord,
        model.FunctionProfile,
    ]
    missing = [
        f"{cls.__name__}.{f.name}"
        for cls in classes
        for f in dataclasses.fields(cls)
        if f.name != "refresh" and f"`{f.name}`" not in text
    ]
    assert missing == []
