"""What synth shows of the build's release-runtime check (``models.<name>.target_runtime``)."""

from __future__ import annotations

from typing import Any

import aws_cdk as cdk
from aws_cdk import assertions

from cdk_triton.config.manifest import ModelEntry
from cdk_triton.constructs import ModelArtifacts, TritonEndpoint
from cdk_triton.constructs.checks import models as model_checks
from tests.unit.constructs.support import manifest_with, new_stack

TOOLS = {"torch": "2.13.0+cpu"}


def _record(status: str, runtime: str = "libtorch", version: str = "2.5.0", **extra: Any) -> dict[str, Any]:
    return {"runtime": runtime, "version": version, "confirmed": False, "status": status, **extra}


def _entries(name: str, record: dict[str, Any]) -> dict[str, ModelEntry]:
    def edit(d: dict[str, Any]) -> None:
        d["models"][name]["target_runtime"] = record

    return {name: manifest_with(edit).models[name]}


def _warnings(name: str, record: dict[str, Any], image: str = "24.09") -> list[tuple[str, str]]:
    errs, warnings = model_checks.check_release_agreement(
        image, _entries(name, record), tool_versions=TOOLS, built_for="24.09"
    )
    assert errs == []
    return warnings


def test_passed_shows_no_warning() -> None:
    assert _warnings("resnet_ts", _record("passed", max_abs_diff=0.0)) == []
    assert _warnings("resnet", _record("passed", "onnxruntime", "1.19.2", max_abs_diff=1e-7)) == []


def test_skipped_torchscript_warns_may_not_load_with_the_reason() -> None:
    warnings = _warnings("resnet_ts", _record("skipped", reason="turned off (--no-target-runtime)"))
    assert [w[0] for w in warnings] == ["cdk-triton:TargetRuntimeNotChecked"]
    text = warnings[0][1]
    assert "TorchScript saved by torch 2.13.0+cpu may not load in Triton 24.09's libtorch 2.5.0" in text
    assert "(release table entry unconfirmed)" in text
    assert "the release-runtime check was skipped (turned off (--no-target-runtime))" in text


def test_unavailable_warns_for_onnx_too() -> None:
    record = _record("unavailable", "onnxruntime", "1.19.2", reason="no package index")
    warnings = _warnings("resnet", record)
    assert len(warnings) == 1 and "check was unavailable (no package index)" in warnings[0][1]
    assert _warnings("resnet", _record("skipped", "onnxruntime", "1.19.2", reason="off")) == []


def test_a_pass_in_another_release_runtime_is_not_a_pass() -> None:
    warnings = _warnings("resnet_ts", _record("passed", max_abs_diff=0.0), image="25.04")
    assert len(warnings) == 1 and "checked in libtorch 2.5.0 at build" in warnings[0][1]
    assert "ships libtorch 2.7.0" in warnings[0][1]


def test_endpoint_annotates_the_warning_and_the_template_does_not_change() -> None:
    def stack_of(record: dict[str, Any] | None) -> cdk.Stack:
        def edit(d: dict[str, Any]) -> None:
            if record is not None:
                d["models"]["resnet_ts"]["target_runtime"] = record

        stack = new_stack()
        TritonEndpoint(
            stack,
            "Ep",
            artifacts=ModelArtifacts.from_manifest(manifest_with(edit), "multi"),
            instance_type="ml.g5.xlarge",
        )
        return stack

    skipped = stack_of(_record("skipped", reason="turned off"))
    found = assertions.Annotations.from_stack(skipped).find_warning(
        "*", assertions.Match.string_like_regexp("TargetRuntimeNotChecked")
    )
    assert len(found) == 1
    passed = stack_of(_record("passed", max_abs_diff=0.0))
    assert not assertions.Annotations.from_stack(passed).find_warning(
        "*", assertions.Match.string_like_regexp("TargetRuntimeNotChecked")
    )
    plain = assertions.Template.from_stack(stack_of(None)).to_json()
    assert assertions.Template.from_stack(skipped).to_json() == plain
    assert assertions.Template.from_stack(passed).to_json() == plain
