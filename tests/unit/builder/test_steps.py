"""Unit tests of the build steps: exporters, parity, compat, pbtxt, packaging, TensorRT pure parts."""

from __future__ import annotations

import json
import tarfile
from pathlib import Path

import numpy as np
import pytest
from tests.unit.builder.helpers import tiny, write_decl

from cdk_triton.builder import compat, run_build
from cdk_triton.builder.export import tensorrt as trt
from cdk_triton.builder.package import pack
from cdk_triton.builder.parity import compare
from cdk_triton.builder.pbtxt import IoTensor, build_config, parse_pbtxt, to_pbtxt
from cdk_triton.config.spec import BuildSpec
from cdk_triton.errors import BuildError


@pytest.fixture(scope="module")
def tiny_build(tmp_path_factory: pytest.TempPathFactory):  # type: ignore[no-untyped-def]
    tmp = tmp_path_factory.mktemp("tiny")
    body = (
        tiny("t_onnx")
        + tiny("t_ts", "torchscript")
        + tiny("t_script", "torchscript")
        + "    torchscript_mode: script\n"
    )
    decl = write_decl(
        tmp,
        body,
        endpoints="""
  - name: m
    mode: MultiModel
    instance_types: [ml.g5.xlarge]
    models: [t_onnx, t_ts, t_script]
""",
    )
    return run_build(decl, out_dir=tmp / "out", progress=False), tmp


def _spec(tmp: Path, body: str) -> BuildSpec:
    from cdk_triton.builder.declarations import load_spec

    return load_spec(write_decl(tmp, body))


def test_every_exporter_passes_parity(tiny_build) -> None:  # type: ignore[no-untyped-def]
    result, _ = tiny_build
    assert result.exported == 3
    for row in result.rows:
        assert float(row["parity"]) < 1e-5
    ts = result.manifest.models["t_script"].config
    assert ts["platform"] == "pytorch_libtorch" and ts["input"][0]["name"] == "INPUT__0"


def test_perturbed_artifact_fails_parity(tiny_build, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    import onnx
    from onnx import numpy_helper

    from cdk_triton.builder.export import onnx as onnx_export
    from cdk_triton.builder.reference import build_eager, torch_runner
    from cdk_triton.builder.samples import sample_inputs

    result, tmp = tiny_build
    rel = next(k for k in result.manifest.models["t_onnx"].files if k.endswith(".onnx"))
    src = next((tmp / "out" / "cache" / "models").glob("t_onnx-*[!n]")) / rel
    model = onnx.load(str(src))
    init = model.graph.initializer[0]
    arr = numpy_helper.to_array(init).copy()
    arr.flat[0] += 0.5
    init.CopyFrom(numpy_helper.from_array(arr, init.name))
    bad = tmp_path / "bad.onnx"
    onnx.save(model, str(bad))
    spec = _spec(tmp, tiny("t_onnx"))
    m = spec.model("t_onnx")
    sample = sample_inputs(m)
    expected = torch_runner(build_eager(spec, m), m)(sample)
    assert compare(m, expected, onnx_export.load_runner(src, m)(sample), what="good") < 1e-5
    with pytest.raises(BuildError, match=r"largest difference .* \[ParityMismatch\]"):
        compare(m, expected, onnx_export.load_runner(bad, m)(sample), what="the perturbed artifact")


def test_onnx_and_torchscript_file_sources(tiny_build, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    result, tmp = tiny_build
    cache = tmp / "out" / "cache" / "models"
    onnx_file = next(cache.glob("t_onnx-*[!n]")) / "1" / "model.onnx"
    ts_file = next(cache.glob("t_ts-*[!n]")) / "1" / "model.pt"
    body = tiny("f_onnx").replace("factory: tiny_models:tiny, seed: 0", f"onnx: {onnx_file}") + tiny(
        "f_ts", "torchscript"
    ).replace("factory: tiny_models:tiny, seed: 0", f"torchscript: {ts_file}")
    out = run_build(write_decl(tmp_path, body), out_dir=tmp_path / "out", progress=False)
    assert out.exported == 2 and out.manifest.models["f_onnx"].config["input"][0]["name"] == "x"


def test_fails_onnx_ir_version_too_new(tiny_build, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    import onnx

    _, tmp = tiny_build
    model = onnx.load(str(next((tmp / "out" / "cache" / "models").glob("t_onnx-*[!n]")) / "1" / "model.onnx"))
    model.ir_version = 11
    f = tmp_path / "new.onnx"
    onnx.save(model, str(f))
    decl = write_decl(tmp_path, tiny().replace("factory: tiny_models:tiny, seed: 0", f"onnx: {f}"))
    with pytest.raises(BuildError, match=r"IR version 11.*up to 10: .*\[OnnxIrVersionTooNew\]"):
        run_build(decl, out_dir=tmp_path / "out", progress=False)
    assert not (tmp_path / "out").exists()


def test_fails_state_dict_mismatch(tmp_path: Path) -> None:
    import torch

    torch.save({"fc.weight": torch.zeros(2, 2)}, tmp_path / "w.pt")
    decl = write_decl(tmp_path, tiny().replace("seed: 0", "seed: 0, state_dict: w.pt"))
    with pytest.raises(BuildError, match=r"\[StateDictMismatch\]"):
        run_build(decl, out_dir=tmp_path / "out", progress=False)
    left = [f.name for f in (tmp_path / "out").rglob("*") if f.is_file()]
    assert left in ([], [".lock"]), left  # nothing written


def test_opset_is_chosen_within_the_target() -> None:
    assert compat.choose_opset("24.09", None, torch_max=23) == 21  # ONNX Runtime 1.19 -> 21
    assert compat.choose_opset("24.09", None, torch_max=20) == 20
    with pytest.raises(BuildError, match="OnnxOpsetTooNew"):
        compat.choose_opset("24.09", 22, torch_max=23)


def test_torchscript_warning_names_versions() -> None:
    w = compat.torchscript_warning("2.13.0+cpu", "24.09")
    assert w and "2.5.0" in w and "onnx" in w
    assert compat.torchscript_warning("2.5.1", "24.09") is None


def test_python_model_imports_are_checked(tmp_path: Path) -> None:
    (tmp_path / "model.py").write_text("import json, numpy as np\nfrom PIL import Image\nimport helper\n")
    (tmp_path / "helper.py").write_text("import os\n")
    with pytest.raises(BuildError, match=r"imports 'PIL' \(model.py:2\).*\[PythonModelImport\]"):
        compat.check_python_model(tmp_path, name="pre")
    (tmp_path / "model.py").write_text(
        "import json\nimport numpy as np\nimport triton_python_backend_utils\n"
    )
    compat.check_python_model(tmp_path, name="pre")


def test_config_round_trips_through_text_format(tmp_path: Path) -> None:
    spec = _spec(
        tmp_path,
        tiny("c", "onnx") + "    dynamic_batching: {preferred_batch_sizes: [2, 4], "
        "max_queue_delay_microseconds: 50}\n    instance_groups: [{kind: KIND_GPU, count: 2}]\n"
        "    warmup: [{batch_size: 2, data: random}]\n    response_cache: true\n"
        "    onnx: {tensorrt_accelerator: true}\n",
    )
    m = spec.model("c")
    cfg = build_config(
        m,
        inputs=[IoTensor(name="x", dtype="FP32", dims=(4,))],
        outputs=[IoTensor(name="y", dtype="FP32", dims=(3,))],
        cc_model_filenames={"8.6": "model_sm86.plan"},
    )
    text = to_pbtxt(cfg)
    back = parse_pbtxt(text)
    assert back == cfg
    assert back.dynamic_batching.preferred_batch_size == [2, 4]
    assert back.instance_group[0].count == 2 and back.response_cache.enable
    assert back.model_warmup[0].inputs["x"].random_data and back.model_warmup[0].batch_size == 2
    assert back.optimization.execution_accelerators.gpu_execution_accelerator[0].name == "tensorrt"
    assert back.cc_model_filenames["8.6"] == "model_sm86.plan"


def _tree(root: Path, big: int = 0) -> Path:
    (root / "m" / "1" / "__pycache__").mkdir(parents=True)
    (root / "m" / "1" / "__pycache__" / "x.cpython-311.pyc").write_bytes(b"junk")
    (root / "m" / "1" / "model.bin").write_bytes(np.random.default_rng(0).bytes(big or 100_000))
    (root / "m" / "config.pbtxt").write_text('name: "m"\n')
    (root / "e" / "1").mkdir(parents=True)
    (root / "e" / "config.pbtxt").write_text('name: "e"\nplatform: "ensemble"\n')
    return root


def test_archives_are_deterministic_and_clean(tmp_path: Path) -> None:
    src = _tree(tmp_path / "src")
    a, sha_a, _ = pack([("m", src / "m"), ("e", src / "e")], tmp_path / "a", "t")
    import os
    import time

    os.utime(src / "m" / "config.pbtxt", (time.time() + 50, time.time() + 50))
    b, sha_b, _ = pack([("e", src / "e"), ("m", src / "m")], tmp_path / "b", "t", threads=2)
    assert sha_a == sha_b and a.read_bytes() == b.read_bytes() and a.name == f"t-{sha_a[:12]}.tar.gz"
    with tarfile.open(a) as tar:
        names = tar.getnames()
        assert names == sorted(names)
        assert "e/1" in names and not any("__pycache__" in n or n.endswith(".pyc") for n in names)
        assert {(m.mode, m.uid, m.gid, m.mtime, m.uname) for m in tar.getmembers() if m.isfile()} == {
            (0o644, 0, 0, 0, "")
        }
    assert a.read_bytes()[4:8] == b"\0\0\0\0"  # gzip header mtime 0
    assert not list((tmp_path / "a").glob(".*.tmp"))


def test_tensorrt_profiles_flags_and_metadata(tmp_path: Path) -> None:
    spec = _spec(
        tmp_path,
        tiny("p", "tensorrt").replace("shape: [4]", "shape: [-1], sample_shape: [6]")
        + "    max_batch_size: 16\n".replace("16", "4")
        + "    dynamic_batching: {preferred_batch_sizes: [2]}\n",
    )
    m = spec.model("p")
    (prof,) = trt.profiles(m, [IoTensor(name="x", dtype="FP32", dims=(-1,))])
    assert (prof.min, prof.opt, prof.max) == ((1, 6), (2, 6), (4, 6))
    assert trt.builder_flags("fp16") == (["FP16"], []) and trt.builder_flags("fp32") == ([], ["TF32"])
    assert trt.builder_flags("int8")[0] == ["INT8", "FP16"]
    with pytest.raises(BuildError, match=r"unknown TensorRT precision 'fp8' \[TensorRTBuildFailed\]"):
        trt.builder_flags("fp8")
    meta = trt.plan_metadata(
        tensorrt_version="10.4.0",
        compute_capability=(8, 6),
        gpu_name="NVIDIA A10G",
        precision="fp16",
        profile_list=[prof],
    )
    assert meta["gpu_architecture"] == "sm86" and json.dumps(meta)
    trt.check_plan_architecture(meta, ["ml.g5.xlarge", "ml.g5.2xlarge"], model="p", triton_version="24.09")
    with pytest.raises(
        BuildError, match=r"built for sm86 but ml.g4dn.xlarge has .*sm75.*\[PlanArchitectureMismatch\]"
    ):
        trt.check_plan_architecture(meta, ["ml.g4dn.xlarge"], model="p")
    with pytest.raises(BuildError, match=r"TensorRT 10.9.0 .* ships 10.4.0"):
        trt.check_plan_architecture(
            {**meta, "tensorrt_version": "10.9.0"}, ["ml.g5.xlarge"], model="p", triton_version="24.09"
        )


def test_tensorrt_fails_clearly_without_gpu() -> None:
    import torch

    if torch.cuda.is_available():
        pytest.skip("a GPU is present")
    with pytest.raises(BuildError, match=r"need a CUDA GPU.*\[TensorRTUnavailable\]"):
        trt.require_tensorrt()


@pytest.mark.gpu
def test_tensorrt_plan_builds_on_gpu(tmp_path: Path) -> None:
    decl = write_decl(tmp_path, tiny("p", "tensorrt"))
    result = run_build(decl, out_dir=tmp_path / "out", progress=False)
    entry = result.manifest.models["p"]
    assert entry.platform == "tensorrt_plan" and entry.gpu_architectures and entry.tensorrt_version


def test_python_model_runs_outside_triton(tmp_path: Path) -> None:
    from cdk_triton.builder.python_model import PythonModelRunner

    root = Path(__file__).resolve().parents[3] / "build" / "preprocess" / "model.py"
    cfg = {"output": [{"name": "PIXELS", "data_type": "TYPE_FP32", "dims": ["3", "32", "32"]}]}
    img = np.full((2, 32, 32, 3), 255, dtype=np.uint8)
    out = PythonModelRunner(root, cfg, name="preprocess")({"IMAGE": img})["PIXELS"]
    assert out.shape == (2, 3, 32, 32) and out.dtype == np.float32
    np.testing.assert_allclose(out[0, 0, 0, 0], (1 - 0.4914) / 0.2470, rtol=1e-5)
    assert not list(root.parent.glob("__pycache__"))


def test_ensemble_maps_declared_names_to_torchscript_config_names(tmp_path: Path) -> None:
    body = (
        tiny("ts_step", "torchscript")
        + """
  - name: ens_ts
    format: ensemble
    inputs: [{name: features, dtype: FP32, shape: [4]}]
    outputs: [{name: scores, dtype: FP32, shape: [3]}]
    max_batch_size: 4
    steps:
      - {model: ts_step, input_map: {x: features}, output_map: {y: scores}}
"""
    )
    result = run_build(write_decl(tmp_path, body), out_dir=tmp_path / "out", progress=False)
    (step,) = result.manifest.models["ens_ts"].config["ensemble_scheduling"]["step"]
    assert step["input_map"] == {"INPUT__0": "features"} and step["output_map"] == {"OUTPUT__0": "scores"}
    sample = json.loads(result.manifest.resolve(result.manifest.models["ens_ts"].sample.response).read_text())
    assert sample["outputs"][0]["name"] == "scores"
    assert "parity" in result.rows[-1] and float(result.rows[-1]["parity"]) < 1e-6


def _fake_plan(directory: Path, arch: str, *, max_batch: int = 4, trt_version: str = "10.4.0") -> str:
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


def _plans_decl(tmp: Path, instance_types: str, **kw: int) -> Path:
    a = _fake_plan(tmp / "plans_sm86", "sm86", **kw)
    b = _fake_plan(tmp / "plans_sm75", "sm75", **kw)
    return write_decl(
        tmp,
        tiny("multi_plan", "tensorrt") + f"    tensorrt: {{plans: [{a}, {b}]}}\n",
        endpoints=f"""
  - name: ep
    mode: MultiModel
    instance_types: [{instance_types}]
    models: [multi_plan]
""",
    )


def test_prebuilt_plans_ship_with_cc_model_filenames(tmp_path: Path) -> None:
    decl = _plans_decl(tmp_path, "ml.g5.xlarge, ml.g4dn.xlarge")
    result = run_build(decl, out_dir=tmp_path / "out", progress=False)
    entry = result.manifest.models["multi_plan"]
    assert entry.platform == "tensorrt_plan" and entry.gpu_architectures == ["sm75", "sm86"]
    assert entry.config["cc_model_filenames"] == {"8.6": "model_sm86.plan", "7.5": "model_sm75.plan"}
    assert {"1/model_sm86.plan", "1/model_sm75.plan", "1/plan_sm86.json"} <= set(entry.files)
    assert result.manifest.endpoint("ep").gpu_architectures == ["sm75", "sm86"]
    assert entry.config["input"][0]["dims"] == ["4"]  # read from the ONNX export the plans were built from


def test_fails_plan_for_another_gpu_or_profile(tmp_path: Path) -> None:
    decl = _plans_decl(tmp_path / "a", "ml.p4d.24xlarge")
    with pytest.raises(BuildError, match=r"has .*sm80.*\[PlanArchitectureMismatch\]"):
        run_build(decl, out_dir=tmp_path / "a" / "out", progress=False)
    assert not (tmp_path / "a" / "out" / "manifest.json").exists()
    assert not (tmp_path / "a" / "out").exists()  # refused in preflight: nothing written
    decl = _plans_decl(tmp_path / "b", "ml.g5.xlarge", max_batch=2)
    with pytest.raises(
        BuildError, match=r"accepts batches up to 2 .* max_batch_size is 4; .*\[PlanProfileMismatch\]"
    ):
        run_build(decl, out_dir=tmp_path / "b" / "out", progress=False)
    assert not (tmp_path / "b" / "out").exists()


def test_plan_built_on_another_gpu_is_refused_or_skipped(tmp_path: Path) -> None:
    from tests.unit.builder.helpers import EXAMPLE

    from cdk_triton.builder.declarations import load_spec
    from cdk_triton.builder.plan import local_arch_mismatch

    spec = load_spec(EXAMPLE)
    trt_model = spec.model("classifier_trt")
    assert local_arch_mismatch(spec, trt_model, "sm86", "NVIDIA A10G") is None  # ml.g5 = A10G
    why = local_arch_mismatch(spec, trt_model, "sm90", "NVIDIA H100")
    assert why and "sm90" in why and "ml.g5.xlarge" in why and "sm86" in why


def test_torchscript_export_is_deterministic_in_process_and_path_free(tmp_path: Path) -> None:
    """Two traces (and two scripts) in one process give the same bytes; no debug info (absolute
    paths of the trace's Python stack) is saved, and the file still loads and runs."""
    import zipfile

    import torch

    from cdk_triton.builder.export import torchscript as ts_export
    from cdk_triton.builder.reference import build_eager
    from cdk_triton.builder.samples import sample_inputs

    spec = _spec(
        tmp_path, tiny("t", "torchscript") + tiny("s", "torchscript") + "    torchscript_mode: script\n"
    )
    for name in ("t", "s"):
        m = spec.model(name)
        sample = sample_inputs(m)
        files = []
        for i in range(2):
            (tmp_path / name / str(i)).mkdir(parents=True)
            f = tmp_path / name / str(i) / "model.pt"
            ts_export.export(build_eager(spec, m), m, sample, f)
            files.append(f)
        assert files[0].read_bytes() == files[1].read_bytes(), name
        names = zipfile.ZipFile(files[0]).namelist()
        assert not [n for n in names if n.endswith(".debug_pkl")]
        assert str(tmp_path).encode() not in files[0].read_bytes()
        out = ts_export.load_runner(files[0], m)(sample)["y"]
        assert out.shape == (1, 3) and torch.jit.load(str(files[0])) is not None
