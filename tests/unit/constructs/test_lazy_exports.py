"""``import cdk_triton.constructs`` pays for nothing it does not use: each name loads on first use."""

from __future__ import annotations

import ast
import importlib
import subprocess
import sys
from pathlib import Path

import cdk_triton.constructs as constructs


def test_importing_the_package_imports_none_of_its_modules_nor_aws_cdk() -> None:
    code = (
        "import sys, cdk_triton.constructs; "
        "print(sorted(m for m in sys.modules if m.startswith('cdk_triton.constructs.') or m == 'aws_cdk'))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_every_exported_name_is_its_owner_s_object() -> None:
    where = vars(constructs)["_WHERE"]
    assert sorted(where) == sorted(constructs.__all__)
    for name, module in where.items():
        assert getattr(constructs, name) is getattr(importlib.import_module(module), name), name


#: The modules of features an endpoint may not use: asynchronous inference, deployment guardrails and data
#: capture, a shadow variant, the deploy verification, inference components.
FEATURE_MODULES = (
    "async_inference",
    "checks.data_capture",
    "checks.deployment",
    "components_endpoint",
    "deployment",
    "inference_component",
    "shadow",
    "verification",
    "verification_sample",
)

_EXAMPLE = """
import sys, tempfile
from pathlib import Path
import aws_cdk as cdk
sys.path.insert(0, {root!r})
import app as example
with tempfile.TemporaryDirectory() as out:
    application = cdk.App(outdir=out, builtin_cloud_formation_validation=False)
    env = cdk.Environment(account="123456789012", region="us-east-1")
    example.TritonExampleStack(application, "S", manifest={manifest!r}, verify={verify}, env=env)
    application.synth()
print(sorted(m for m in sys.modules if m.startswith("cdk_triton.constructs.")))
"""


def _loaded(verify: bool) -> list[str]:
    root = Path(__file__).resolve().parents[3]
    code = _EXAMPLE.format(
        root=str(root), manifest=str(root / "tests/fixtures/manifests/example.json"), verify=verify
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=root)
    return [
        m.removeprefix("cdk_triton.constructs.")
        for m in ast.literal_eval(out.stdout.strip().splitlines()[-1])
    ]


def test_an_app_pays_only_for_the_features_its_stacks_define() -> None:
    """The example's real-time endpoints load none of the feature modules; with the deploy verification on,
    the verification's modules load, and still no guardrails', shadow's or components' module."""
    plain = _loaded(verify=False)
    assert "endpoint" in plain and "monitoring" in plain  # what the example defines
    assert [m for m in FEATURE_MODULES if m in plain] == []
    verified = _loaded(verify=True)
    assert {"verification", "verification_sample"} <= set(verified)
    others = {"components_endpoint", "inference_component", "shadow", "deployment", "checks.deployment"}
    assert sorted(others & set(verified)) == []
