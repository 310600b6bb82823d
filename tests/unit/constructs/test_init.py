"""Importing the constructs must not import torch, protobuf or tritonclient."""

from __future__ import annotations

import json
import subprocess
import sys


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
