"""Inference components in models.yaml, the manifest (schema 3) and the layout's component names."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from cdk_triton.config import components, layout
from cdk_triton.config.declaration import BuildSpec
from cdk_triton.config.manifest import (
    INFERENCE_COMPONENTS,
    SCHEMA_VERSION,
    ComponentEntry,
    ManifestError,
    manifest_from_dict,
)
from cdk_triton.errors import TritonValidationError
from tests.unit.config.declaration.decl import document, endpoint, ensemble, model, problems

ROOT = Path(__file__).resolve().parents[3]


def _ic(models: list[str] | None = None, **kw: Any) -> dict[str, Any]:
    return endpoint("ics", "components", models or ["tiny", "ens"], **kw)


def test_components_endpoint_reads_mode_aliases_settings_and_scaling() -> None:
    for alias in ("components", "inference_components", "InferenceComponents"):
        spec = BuildSpec.from_dict(document([model(), ensemble()], [endpoint("ics", alias, ["tiny", "ens"])]))
        e = spec.endpoints[0]
        assert (e.mode, e.hosting_mode.components, e.per_model_archives, e.packaging) == (
            INFERENCE_COMPONENTS,
            True,
            True,
            "tar.gz",
        )
        assert e.components == {} and e.min_instances is None
    settings = {
        "tiny": {
            "copies": 0,
            "min_copies": 0,
            "max_copies": 4,
            "memory_mb": 1024,
            "cpu_cores": 1,
            "accelerators": 1,
            "data_cache": True,
            "startup_timeout_s": 600,
        },
        "ens": {"min_copies": 0},  # min_instances 0 needs every component able to reach 0 copies
    }
    e = BuildSpec.from_dict(
        document([model(), ensemble()], [_ic(components=settings, min_instances=0, max_instances=5)])
    ).endpoints[0]
    tiny = e.components["tiny"]
    assert (tiny.copies, tiny.max_copies, tiny.memory_mb, tiny.cpu_cores, tiny.data_cache) == (
        0,
        4,
        1024,
        1.0,
        True,
    )
    assert e.components["ens"] == components.ComponentValues(min_copies=0)
    assert (e.min_instances, e.max_instances) == (0, 5)  # tiny x 4 + ens x 1, one GPU each


BAD_VALUES = [
    ({"copies": -1}, "InvalidCopyCount", "copies"),
    ({"min_copies": 3, "max_copies": 2}, "InvalidCopyCount", "min_copies"),
    ({"copies": 1, "min_copies": 2}, "InvalidCopyCount", "copies"),
    ({"max_copies": 0}, "InvalidCopyCount", "max_copies"),
    ({"memory_mb": 127}, "InvalidComputeRequirement", "memory_mb"),
    ({"memory_mb": 512, "max_memory_mb": 256}, "InvalidComputeRequirement", "max_memory_mb"),
    ({"accelerators": 0}, "InvalidComputeRequirement", "accelerators"),
    ({"cpu_cores": 0.2}, "InvalidComputeRequirement", "cpu_cores"),
    ({"startup_timeout_s": 59}, "InvalidStartupTimeout", "startup_timeout_s"),
    ({"startup_timeout_s": 3601}, "InvalidStartupTimeout", "startup_timeout_s"),
    ({"coppies": 1}, "UnknownKey", "coppies"),
    ({"copies": "2"}, "InvalidType", "copies"),
]


@pytest.mark.parametrize(("values", "code", "key"), BAD_VALUES)
def test_fails_each_bad_component_value_with_its_code_and_yaml_path(
    values: dict[str, Any], code: str, key: str
) -> None:
    found = problems(
        document([model(), ensemble()], [_ic(components={"tiny": values})]), source="models.yaml"
    )
    assert [(e.code, e.path) for e in found] == [(code, f"models.yaml: endpoints[0].components.tiny.{key}")]


def test_fails_scaling_bounds_unknown_models_collisions_and_other_modes() -> None:
    doc = document([model(), ensemble()], [_ic(min_instances=3, max_instances=2)])
    assert [(e.code, e.path) for e in problems(doc)] == [
        ("InvalidInstanceScaling", "endpoints[0].min_instances")
    ]
    doc = document([model(), ensemble()], [_ic(components={"tinny": {"copies": 1}})])
    (err,) = problems(doc)
    assert (err.code, err.path, err.fix) == (
        "UnknownComponentModel",
        "endpoints[0].components.tinny",
        "did you mean 'tiny'?",
    )
    doc = document([model("a_b"), model("a.b")], [_ic(["a_b", "a.b"])])
    (err,) = problems(doc)
    assert (err.code, err.value, err.path) == ("ComponentNameCollision", "ics-a-b", "endpoints[0].models")
    doc = document([model()], [endpoint(components={"tiny": {}}, min_instances=0)])
    assert [(e.code, e.path) for e in problems(doc)] == [
        ("NotAComponentsEndpoint", "endpoints[0].components"),
        ("NotAComponentsEndpoint", "endpoints[0].min_instances"),
    ]
    doc = document([model()], [_ic(["tiny", "tiny"])])
    assert [e.code for e in problems(doc)] == ["DuplicateModelInEndpoint"]


def test_fails_a_component_that_cannot_fit_the_instance_type() -> None:
    doc = document(
        [model(), ensemble()],
        [
            _ic(
                instance_types=["ml.g5.xlarge", "ml.c5.xlarge"],
                components={"tiny": {"accelerators": 2, "memory_mb": 20000}},
            )
        ],
    )
    found = [(e.code, e.prop) for e in problems(doc)]
    assert found == [
        ("ComponentDoesNotFit", "component 'tiny' accelerators"),  # ml.g5.xlarge: 1 GPU
        ("ComponentDoesNotFit", "component 'tiny' memory_mb"),  # and 16 GiB
        ("ComponentDoesNotFit", "component 'tiny' accelerators"),  # ml.c5.xlarge: none
    ]
    assert (
        components.fit_problems(
            "ml.g5.xlarge", component="x", accelerators=1, cpu_cores=4, memory_mb=16 * 1024, path=None
        )
        == []
    )
    (err,) = components.fit_problems(
        "ml.g5.xlarge", component="x", accelerators=None, cpu_cores=5, memory_mb=None
    )
    assert "4 vCPUs" in err.problem


def test_component_name_is_deterministic_valid_and_bounded() -> None:
    assert layout.component_name("my_ep", "classifier.v2") == "my-ep-classifier-v2"
    long = layout.component_name("e" * 40, "m" * 40)
    assert len(long) == 63 and long == layout.component_name("e" * 40, "m" * 40)
    assert long != layout.component_name("e" * 40, "m" * 39 + "n")
    assert layout.COMPONENT_NAME.fullmatch(long) and layout.COMPONENT_NAME.fullmatch(
        layout.component_name("_x_", "_")
    )
    with pytest.raises(TritonValidationError, match="ComponentNameCollision"):
        layout.check_component_names({"a_b": "e-a-b", "a.b": "e-a-b"})
    assert [e.code for e in layout.component_name_problems({"x": "bad_name"})] == ["InvalidComponentName"]
    assert layout.ic_prefix_key("ics") == "ic/ics/"


def _components_manifest() -> dict[str, Any]:
    archive = {
        "logical_name": "tiny",
        "target_model": "tiny-0123456789ab.tar.gz",
        "model": "tiny",
        "models": ["tiny"],
        "local_path": "ic/ics/tiny-0123456789ab.tar.gz",
        "sha256": "0" * 64,
        "size_bytes": 10,
        "s3_uri": "s3://b/p/ic/ics/tiny-0123456789ab.tar.gz",
    }
    return {
        "schema_version": SCHEMA_VERSION,
        "triton_version": "24.09",
        "artifact_location": {"bucket": "b", "prefix": "p"},
        "uploaded": False,
        "models": {},
        "endpoints": {
            "ics": {
                "name": "ics",
                "mode": INFERENCE_COMPONENTS,
                "instance_types": ["ml.g5.xlarge"],
                "s3_prefix": "s3://b/p/ic/ics/",
                "target_models": {"tiny": archive},
                "components": {
                    "tiny": {
                        "logical_name": "tiny",
                        "component_name": "ics-tiny",
                        "target_model": "tiny",
                        "min_copies": 0,
                    }
                },
                "min_instances": 0,
            }
        },
    }


def test_manifest_schema_3_records_components_and_reads_them_back() -> None:
    m = manifest_from_dict(_components_manifest())
    e = m.endpoint("ics")
    assert e.hosting_mode.components and not e.hosting_mode.loads_on_demand and e.min_instances == 0
    assert e.components["tiny"] == ComponentEntry(
        logical_name="tiny", component_name="ics-tiny", target_model="tiny", copies=1, min_copies=0
    )
    assert e.find_component("ics-tiny") is e.find_component("tiny") is e.components["tiny"]
    assert e.find_component("nope") is None and e.component_map() == {"tiny": "ics-tiny"}
    assert manifest_from_dict(m.to_dict()) == m
    schema = json.loads((ROOT / "cdk_triton/config/data/manifest.schema.json").read_text())
    assert schema["properties"]["schema_version"]["enum"] == [1, 2, 3, 4]
    assert set(schema["$defs"]["component"]["properties"]) == set(ComponentEntry.__dataclass_fields__)


@pytest.mark.parametrize(
    ("edit", "where"),
    [
        (lambda e: e["components"]["tiny"].update(target_model="other"), "components.tiny.target_model"),
        (lambda e: e["components"]["tiny"].update(logical_name="x"), "components.tiny.logical_name"),
        (lambda e: e.update(components={}), "components"),
        (lambda e: e["components"]["tiny"].update(copies="1"), "components.tiny.copies"),
        (lambda e: e.update(mode="MultiModel"), "components"),
    ],
)
def test_fails_a_bad_components_entry_naming_the_field(edit: Any, where: str) -> None:
    data = _components_manifest()
    edit(data["endpoints"]["ics"])
    with pytest.raises(ManifestError, match=f"endpoints.ics.{where}"):
        manifest_from_dict(data)


def test_limits_carry_their_sources() -> None:
    data = components.limits()
    assert data["read"] == "2026-11-26"
    assert all(row["source"] for row in data["limits"].values())
    assert (components.MIN_MEMORY_MB, components.MIN_CPU_CORES, components.STARTUP_TIMEOUT_S) == (
        128,
        0.25,
        (60, 3600),
    )


def test_fails_a_stateful_model_in_a_component_that_may_run_several_copies() -> None:
    seq = {"strategy": "direct", "control_inputs": {"start": "START"}}
    stateful = model("sum", format="python", source={"python": "x"}, sequence_batching=seq)
    ok = document([stateful], [_ic(["sum"], max_instances=1, components={"sum": {"max_copies": 1}})])
    assert [e.code for e in problems(ok) if e.code != "SourceNotFound"] == []
    bad = document([stateful], [_ic(["sum"], components={"sum": {"max_copies": 2}})])
    found = [(e.code, e.path) for e in problems(bad) if e.code != "SourceNotFound"]
    assert found == [("SequenceBatchingInstances", "endpoints[0].components.sum")]


def test_memory_floor_names_the_component_and_its_models() -> None:
    from cdk_triton.config import component_memory
    from cdk_triton.config.manifest import ModelEntry

    def entry(memory: int | None, size: int | None) -> ModelEntry:
        return ModelEntry(
            name="m", format="onnx", platform="onnxruntime_onnx", backend=None, config={}, config_sha256="",
            files={}, memory_bytes=memory, size_bytes=size,
        )  # fmt: skip

    mib = 1 << 20
    models = {"a": entry(1000 * mib, 300 * mib), "b": entry(None, 100 * mib)}  # b: its files (model_bytes)
    assert component_memory.memory_floor_findings("c", 2048, models) == ([], [])
    warnings, errs = component_memory.memory_floor_findings("c", 512, models)  # below 1100 MB, above 400 MB
    assert errs == [] and "[ComponentMemoryBelowModel]" in warnings[0] and "a, b" in warnings[0]
    warnings, errs = component_memory.memory_floor_findings(
        "c", 256, models, path="endpoints[0].components.c"
    )
    assert warnings == [] and [e.code for e in errs] == ["ComponentMemoryTooSmall"]
    assert "400 MB" in str(errs[0]) and "endpoints[0].components.c.min_memory_mb" in str(errs[0])
    assert component_memory.memory_floor_findings("c", None, models) == ([], [])  # derived: nothing to judge
