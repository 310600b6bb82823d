"""Importing the constructs must not import torch, protobuf or tritonclient."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path


def test_constructs_import_is_light() -> None:
    code = (
        "import sys, json, cdk_triton, cdk_triton.constructs\n"
        "from cdk_triton.constructs import TritonEndpoint, ModelArtifacts\n"
        "heavy = sorted(m for m in sys.modules if m.split('.')[0] in "
        "('torch', 'google', 'tritonclient', 'onnx', 'onnxruntime', 'numpy', 'grpc'))\n"
        "print(json.dumps(heavy))\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    heavy = json.loads(proc.stdout.strip().splitlines()[-1])
    assert heavy == [], heavy


#: What an app pays only when it uses the feature: aws_s3 (with aws_events) for asynchronous inference
#: and data capture, aws_lambda and custom resources for the deploy verification; aws_s3_deployment
#: (and its aws-cli layer) for nothing of the constructs; the constructs' own modules of other features.
UNUSED_BY_A_MINIMAL_STACK = (
    "aws_cdk.aws_s3",
    "aws_cdk.aws_events",
    "aws_cdk.aws_s3_deployment",
    "aws_cdk.aws_lambda",
    "aws_cdk.custom_resources",
    "aws_cdk.aws_sns",
    "cdk_triton.constructs.components",
    "cdk_triton.constructs.registry",
)

MINIMAL_STACK = """
import json, sys
import cdk_triton.constructs as ct
after_import = sorted(m for m in sys.modules if m.startswith(("aws_cdk", "cdk_triton.constructs.")))
import aws_cdk as cdk
app = cdk.App()
stack = cdk.Stack(app, "Minimal", env=cdk.Environment(account="123456789012", region="us-east-1"))
ct.TritonEndpoint(
    stack, "Classifier", artifacts=ct.ModelArtifacts.from_manifest({manifest!r}, "classifier"),
    instance_type="ml.g5.xlarge",
)
template = app.synth().get_stack_by_name("Minimal").template
assert any(r["Type"] == "AWS::SageMaker::Endpoint" for r in template["Resources"].values())
print(json.dumps({{"after_import": after_import, "after_synth": sorted(sys.modules)}}))
"""


def _modules_of_a_minimal_stack() -> dict[str, list[str]]:
    manifest = str(Path(__file__).resolve().parents[2] / "fixtures" / "manifests" / "example.json")
    code = MINIMAL_STACK.format(manifest=manifest)
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    loaded: dict[str, list[str]] = json.loads(proc.stdout.strip().splitlines()[-1])
    return loaded


def test_a_minimal_stack_imports_only_what_it_uses() -> None:
    loaded = _modules_of_a_minimal_stack()
    assert loaded["after_import"] == []  # the package alone imports neither aws_cdk nor a module of its own
    modules = set(loaded["after_synth"])
    assert {"aws_cdk.aws_sagemaker", "cdk_triton.constructs.endpoint"} <= modules  # the probe sees imports
    assert sorted(modules.intersection(UNUSED_BY_A_MINIMAL_STACK)) == []
