"""Build-stage test helpers: a tiny declaration writer, prebuilt TensorRT plan directories."""

from __future__ import annotations

import json
import shutil
import textwrap
from pathlib import Path

from cdk_triton.builder.export import tensorrt as trt
from cdk_triton.config.declaration import BuildSpec
from tests.acknowledgments import CRITICAL

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[2]
EXAMPLE = ROOT / "build" / "models.yaml"

TINY_MODEL = """
  - name: {name}
    format: {format}
    source: {{factory: tiny_models:{factory}, seed: 0}}
    inputs: [{{name: x, dtype: FP32, shape: [4]}}]
    outputs: [{{name: y, dtype: FP32, shape: [3]}}]
    max_batch_size: 4
"""


def write_decl(
    tmp: Path, body: str, *, endpoints: str | None = None, location: str = "s3://test-bucket/prefix/"
) -> Path:
    """A models.yaml in ``tmp`` (next to a copy of tiny_models.py and the example preprocess model)."""
    tmp.mkdir(parents=True, exist_ok=True)
    shutil.copy(HERE / "tiny_models.py", tmp / "tiny_models.py")
    if not (tmp / "preprocess").exists():
        shutil.copytree(ROOT / "build" / "preprocess", tmp / "preprocess")
    acks = "".join(f"  {cve}: {json.dumps(reason)}\n" for cve, reason in CRITICAL.items())  # the suite's one
    text = (
        f"triton_version: '24.09'\nacknowledged_advisories:\n{acks}artifact_location: {location}\n"
        f"models:\n{textwrap.dedent(body).strip(chr(10))}\n"
    )
    if endpoints:
        text += f"endpoints:\n{textwrap.dedent(endpoints).strip(chr(10))}\n"
    path = tmp / "models.yaml"
    path.write_text(text)
    return path


def tiny(name: str = "tiny", format: str = "onnx", factory: str = "tiny") -> str:
    return TINY_MODEL.format(name=name, format=format, factory=factory)


def spec_of(tmp: Path, body: str) -> BuildSpec:
    """The validated declaration of ``body`` (written into ``tmp``)."""
    from cdk_triton.builder.declarations import load_declaration

    return load_declaration(write_decl(tmp, body))


def fake_plan(directory: Path, arch: str, *, max_batch: int = 4, trt_version: str = "10.4.0") -> str:
    """A plan directory as a GPU build leaves it (the plan bytes are opaque to packaging)."""
    directory.mkdir(parents=True)
    (directory / "model.plan").write_bytes(f"engine for {arch}".encode())
    prof = trt.Profile(name="x", min=(1, 4), opt=(2, 4), max=(max_batch, 4))
    cc = (int(arch[2:-1]), int(arch[-1]))
    meta = trt.plan_metadata(
        tensorrt_version=trt_version,
        compute_capability=cc,
        gpu_name="gpu",
        precision="fp16",
        profile_list=[prof],
    )
    (directory / "plan.json").write_text(json.dumps(meta))
    return directory.name


def plans_decl(tmp: Path, instance_types: str, *, mode: str = "MultiModel", **kw: int) -> Path:
    a = fake_plan(tmp / "plans_sm86", "sm86", **kw)
    b = fake_plan(tmp / "plans_sm75", "sm75", **kw)
    return write_decl(
        tmp,
        tiny("multi_plan", "tensorrt") + f"    tensorrt: {{plans: [{a}, {b}]}}\n",
        endpoints=f"""
  - name: ep
    mode: {mode}
    instance_types: [{instance_types}]
    models: [multi_plan]
""",
    )


PYTHON_MODEL = """
  - name: {name}
    format: python
    source: {{python: preprocess}}
    inputs: [{{name: IMAGE, dtype: UINT8, shape: [32, 32, 3]}}]
    outputs: [{{name: PIXELS, dtype: FP32, shape: [3, 32, 32]}}]
    max_batch_size: 4
"""


def python_model(name: str = "pre") -> str:
    """A python model declaration (the example's preprocess step): builds without torch."""
    return PYTHON_MODEL.format(name=name)


ENSEMBLE_MODEL = """
  - name: {name}
    format: ensemble
    inputs: [{{name: x, dtype: FP32, shape: [4]}}]
    outputs: [{{name: y, dtype: FP32, shape: [3]}}]
    max_batch_size: 4
    steps:
"""


def ensemble(*steps: str, name: str = "ens") -> str:
    """An ensemble declaration with tiny's signature (x FP32 [4] -> y FP32 [3]) running ``steps``, each
    a YAML flow mapping such as ``{model: tiny, input_map: {x: x}, output_map: {y: y}}``."""
    return ENSEMBLE_MODEL.format(name=name) + "".join(f"      - {step}\n" for step in steps)


RUNNING_SUM = ROOT / "build" / "running_sum"
#: The example's stateful python model (a running sum per correlation id) under the sequence batcher;
#: append lines to set more of its ``sequence_batching`` (6-space indent) or of the model (4-space).
RUNNING_SUM_MODEL = f"""
  - name: running_sum
    format: python
    source: {{python: {RUNNING_SUM}}}
    inputs: [{{name: VALUE, dtype: FP32, shape: [1]}}]
    outputs: [{{name: SUM, dtype: FP32, shape: [1]}}]
    max_batch_size: 4
    sequence_batching:
      control_inputs: {{start: START, end: END, ready: READY, corrid: CORRID}}
"""
