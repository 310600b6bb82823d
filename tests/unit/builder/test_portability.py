"""Device portability: a GPU-placed TorchScript artifact whose graph names a device is refused on this
CPU machine, before anything is packaged; portable graphs and CPU-placed models pass."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cdk_triton.builder import portability, run_build
from cdk_triton.config import formats, placement
from cdk_triton.errors import BuildError
from tests.unit.builder.helpers import spec_of, tiny, write_decl

GPU_SME = """
  - name: ep
    mode: SingleModel
    instance_types: [ml.g5.xlarge]
    models: [{model}]
"""
CPU_SME = GPU_SME.replace("ml.g5.xlarge", "ml.c5.xlarge")

#: factory -> (node kind, device) the trace (or script) records
PINNED = {
    "arange_on_input_device": ("aten::arange", "cpu"),
    "zeros_on_input_device": ("aten::zeros", "cpu"),
    "moved_to_input_device": ("aten::to", "cpu"),
    "literal_cpu_tensor": ("aten::to", "cpu"),
    "pinned_in_submodule": ("aten::full", "cpu"),
}
SCRIPTED_CUDA = {
    "scripted_cuda_device": ("aten::to", "cuda:0"),
    "scripted_cuda_string": ("aten::to", "cuda"),
}


def _ts(factory: str, *, script: bool = False, groups: str = "") -> str:
    body = tiny("t", "torchscript", factory)
    if script:
        body += "    torchscript_mode: script\n"
    if groups:
        body += f"    instance_groups: [{groups}]\n"
    return body


def _refused(tmp_path: Path, body: str, endpoints: str = GPU_SME.format(model="t")) -> BuildError:
    decl = write_decl(tmp_path, body, endpoints=endpoints)
    with pytest.raises(BuildError) as exc:
        run_build(decl, out_dir=tmp_path / "out", progress=False)
    assert exc.value.code == "DevicePinnedExport", str(exc.value)
    out = tmp_path / "out"
    left = [p.relative_to(out).as_posix() for p in out.rglob("*") if p.is_file()] if out.exists() else []
    assert left in ([], [".lock"]), left  # nothing cached, packaged or written
    return exc.value


@pytest.mark.parametrize("factory", sorted(PINNED))
def test_a_traced_device_constant_is_refused_on_a_gpu_endpoint(factory: str, tmp_path: Path) -> None:
    node, device = PINNED[factory]
    err = str(_refused(tmp_path, _ts(factory)))
    assert "model 't' runs on a GPU (Triton's default placement on ml.g5.xlarge)" in err
    assert f"{node} with device '{device}'" in err
    assert "tiny_models.py(" in err  # the source location the trace recorded
    assert "torch.jit.script" in err and "zeros_like" in err and "format: onnx" in err
    if factory == "pinned_in_submodule":
        assert "in inner.forward" in err


@pytest.mark.parametrize("factory", sorted(SCRIPTED_CUDA))
def test_a_cuda_constant_is_refused_for_a_kind_gpu_group(factory: str, tmp_path: Path) -> None:
    node, device = SCRIPTED_CUDA[factory]
    body = _ts(factory, script=True, groups="{kind: KIND_GPU, count: 2}")
    err = str(_refused(tmp_path, body))
    assert "(a KIND_GPU instance group)" in err and f"{node} with device '{device}'" in err
    assert "tiny_models.py" in err and "other GPUs" in err


def test_a_given_torchscript_file_with_a_cuda_constant_is_refused(tmp_path: Path) -> None:
    import torch

    import tests.unit.builder.tiny_models as tm

    tmp_path.mkdir(exist_ok=True)
    torch.jit.save(torch.jit.script(tm.scripted_cuda_device()), str(tmp_path / "given.pt"))
    body = tiny("t", "torchscript").replace("factory: tiny_models:tiny, seed: 0", "torchscript: given.pt")
    err = str(_refused(tmp_path, body))
    assert "aten::to with device 'cuda:0'" in err


def test_scripted_code_reading_the_input_device_passes(tmp_path: Path) -> None:
    decl = write_decl(tmp_path, _ts("scripted_device", script=True), endpoints=GPU_SME.format(model="t"))
    result = run_build(decl, out_dir=tmp_path / "out", progress=False)
    assert result.manifest.models["t"].format == "torchscript"


def test_a_cpu_placed_model_keeps_its_pins_and_builds(tmp_path: Path) -> None:
    decl = write_decl(tmp_path, _ts("arange_on_input_device"), endpoints=CPU_SME.format(model="t"))
    run_build(decl, out_dir=tmp_path / "out", progress=False)
    record = json.loads(next((tmp_path / "out" / "cache" / "models").glob("t-*.json")).read_text())
    assert [p["node"] for p in record["device_pins"]] == ["aten::arange"]


def test_a_cached_artifact_moved_onto_a_gpu_is_refused_before_packaging(tmp_path: Path) -> None:
    decl = write_decl(tmp_path, _ts("arange_on_input_device"), endpoints=CPU_SME.format(model="t"))
    run_build(decl, out_dir=tmp_path / "out", progress=False)
    before = sorted(p.name for p in (tmp_path / "out").rglob("*.tar.gz"))
    decl = write_decl(tmp_path, _ts("arange_on_input_device"), endpoints=GPU_SME.format(model="t"))
    with pytest.raises(BuildError, match=r"aten::arange with device 'cpu'.*\[DevicePinnedExport\]"):
        run_build(decl, out_dir=tmp_path / "out", progress=False)
    assert sorted(p.name for p in (tmp_path / "out").rglob("*.tar.gz")) == before


def test_an_older_record_without_pins_is_read_from_the_artifact(tmp_path: Path) -> None:
    decl = write_decl(tmp_path, _ts("zeros_on_input_device"), endpoints=CPU_SME.format(model="t"))
    run_build(decl, out_dir=tmp_path / "out", progress=False)
    path = next((tmp_path / "out" / "cache" / "models").glob("t-*.json"))
    record = json.loads(path.read_text())
    del record["device_pins"]
    path.write_text(json.dumps(record))
    decl = write_decl(tmp_path, _ts("zeros_on_input_device"), endpoints=GPU_SME.format(model="t"))
    with pytest.raises(
        BuildError, match=r"aten::zeros with device 'cpu' in forward, at File .code/__torch__/tiny_models.py."
    ):
        run_build(decl, out_dir=tmp_path / "out", progress=False)


def test_onnx_cannot_pin_a_device_and_builds(tmp_path: Path) -> None:
    body = tiny("t", "onnx", "arange_on_input_device")
    decl = write_decl(tmp_path, body, endpoints=GPU_SME.format(model="t"))
    run_build(decl, out_dir=tmp_path / "out", progress=False)


# ---------------------------------------------------------------------------- placement and formats


@pytest.mark.parametrize(
    ("kinds", "types", "expected"),
    [
        (["KIND_GPU"], ["ml.c5.xlarge"], True),
        ([], ["ml.g5.xlarge"], True),
        (["KIND_AUTO"], ["ml.g5.xlarge"], True),
        ([], ["ml.c5.xlarge"], False),
        (["KIND_CPU"], ["ml.g5.xlarge"], False),
        ([], [], True),  # no endpoint yet: may be deployed on a GPU
        ([], ["ml.zz9.xlarge"], True),  # an instance type the table does not know
    ],
)
def test_runs_on_gpu(kinds: list[str], types: list[str], expected: bool) -> None:
    assert placement.runs_on_gpu(kinds, types) is expected


def test_gpu_placed_follows_the_endpoints_serving_a_model_through_ensembles(tmp_path: Path) -> None:
    spec = spec_of(
        tmp_path,
        tiny("a")
        + tiny("b").replace(
            "max_batch_size: 4", "max_batch_size: 4\n    instance_groups: [{kind: KIND_CPU}]"
        ),
    )
    assert set(portability.gpu_placed(spec)) == {"a"}


def test_every_format_says_what_can_pin_a_device() -> None:
    assert {f: formats.get(f).device_pinning for f in formats.names()} == {
        "torchscript": "graph",
        "onnx": "none",
        "tensorrt": "architecture",
        "python": "code",
        "ensemble": "none",
    }
    with pytest.raises(ValueError, match="device_pinning 'maybe'"):
        from dataclasses import replace

        formats.register(replace(formats.get("onnx"), name="toy_pin", device_pinning="maybe"))


# ---------------------------------------------------------------------------- python models


def test_code_pins_finds_device_literals() -> None:
    source = (
        "import torch\n"
        "a = torch.device('cuda:0')\n"
        "b = x.to('cpu')\n"
        "c = torch.zeros(3, device='cuda')\n"
        "d = x.cuda()\n"
        "e = x.to(dtype=float)\n"
        "f = torch.device(name)\n"
        "g = 'cuda is great'\n"
    )
    assert [line for line, _ in portability.code_pins(source)] == [2, 3, 4, 5]
    assert portability.code_pins("def broken(:\n") == []


def test_a_gpu_placed_python_model_naming_a_device_is_warned(tmp_path: Path) -> None:
    (tmp_path / "pinned").mkdir(parents=True)
    (tmp_path / "pinned" / "model.py").write_text(
        (Path(__file__).parents[3] / "build" / "preprocess" / "model.py").read_text()
        + "\nDEVICE = dict(device='cuda:0')\n"
    )
    body = """
  - name: pre
    format: python
    source: {python: pinned}
    inputs: [{name: IMAGE, dtype: UINT8, shape: [32, 32, 3]}]
    outputs: [{name: PIXELS, dtype: FP32, shape: [3, 32, 32]}]
    max_batch_size: 8
"""
    decl = write_decl(tmp_path, body, endpoints=GPU_SME.format(model="pre"))
    result = run_build(decl, out_dir=tmp_path / "out", progress=False)
    assert any("model.py:" in w and "[PythonDevicePinned]" in w for w in result.warnings), result.warnings


def test_a_traced_transformers_bert_is_found_pinned_to_the_cpu() -> None:
    """The class the H100 run found (shared/data/gpu-h100-2026-11-27: a BERT-base TorchScript traced on the
    CPU failed every CUDA inference): transformers' attention-mask code bakes a CPU device into the trace.
    transformers 4.57 (the pinned suite) pins one node, transformers 5 (the compatibility lane) several,
    in masking_utils; either way the check names transformers' own source line."""
    import torch
    from transformers import BertConfig, BertModel

    config = BertConfig(
        num_hidden_layers=1, hidden_size=32, num_attention_heads=2, intermediate_size=64, vocab_size=100
    )
    model = BertModel(config).eval()
    ids = torch.randint(0, 100, (2, 16))
    mask = torch.ones(2, 16, dtype=torch.int64)
    with torch.no_grad():
        traced = torch.jit.trace(model, (ids, mask), strict=False)
    pins = portability.graph_pins(traced)
    assert pins and {p.device for p in pins} == {"cpu"}
    assert any("transformers" in p.where for p in pins), pins
