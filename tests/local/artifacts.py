"""Hand-written build outputs for the local endpoint tests (until the build stage lands).

Tiny real models (TorchScript via torch.jit.trace, ONNX via torch.onnx.export with a dynamic batch
dim, python models, an ensemble), configs generated with ``model_config_pb2`` + ``text_format``,
MME archives packed with tarfile, and a manifest shaped like tests/fixtures/manifests/example.json.
"""

from __future__ import annotations

import hashlib
import io
import json
import tarfile
from pathlib import Path
from typing import Any

import numpy as np
import torch
from google.protobuf import json_format, text_format
from tritonclient.grpc import model_config_pb2 as mc

from cdk_triton.config.manifest import manifest_from_dict
from cdk_triton.local.repository import tree_sha256

FEATURES = 8
CLASSES = 4


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


class Net(torch.nn.Module):
    def __init__(self, seed: int):
        super().__init__()
        g = torch.Generator().manual_seed(seed)
        self.w = torch.nn.Parameter(torch.randn(FEATURES, CLASSES, generator=g))
        self.b = torch.nn.Parameter(torch.randn(CLASSES, generator=g))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.tanh(x @ self.w + self.b)


def torchscript_bytes(net: torch.nn.Module) -> bytes:
    buf = io.BytesIO()
    torch.jit.save(torch.jit.trace(net.eval(), torch.zeros(2, FEATURES)), buf)
    return buf.getvalue()


def onnx_bytes(
    net: torch.nn.Module,
    path: Path,
    *,
    opset: int = 17,
    in_name: str = "x",
    out_name: str = "y",
    dynamic: bool = True,
) -> bytes:
    kwargs: dict[str, Any] = (
        {"dynamic_axes": {in_name: {0: "batch"}, out_name: {0: "batch"}}} if dynamic else {}
    )
    torch.onnx.export(
        net.eval(),
        (torch.zeros(2, FEATURES),),
        str(path),
        input_names=[in_name],
        output_names=[out_name],
        opset_version=opset,
        dynamo=False,
        external_data=False,
        **kwargs,
    )
    data = path.read_bytes()
    path.unlink()
    return data


PREPROCESS_PY = """
import numpy as np
import triton_python_backend_utils as pb_utils

SCALE = {scale}

class TritonPythonModel:
    def execute(self, requests):
        out = []
        for r in requests:
            raw = pb_utils.get_input_tensor_by_name(r, "RAW").as_numpy()
            out.append(pb_utils.InferenceResponse([pb_utils.Tensor("X", (raw.astype(np.float32) * SCALE))]))
        return out
"""

OOM_PY = """
class TritonPythonModel:
    def initialize(self, args):
        raise Exception("Out of memory: CUDA out of memory. Tried to allocate 20.00 GiB")

    def execute(self, requests):
        return []
"""


def tensor(name: str, dtype: str, dims: list[int]) -> dict[str, Any]:
    return {"name": name, "data_type": dtype, "dims": dims}


def config(
    name: str,
    *,
    platform: str = "",
    backend: str = "",
    max_batch_size: int = 8,
    inputs: list[dict[str, Any]],
    outputs: list[dict[str, Any]],
    **extra: Any,
) -> Any:
    cfg = mc.ModelConfig()
    json_format.ParseDict(
        {
            "name": name,
            "platform": platform,
            "backend": backend,
            "max_batch_size": max_batch_size,
            "input": inputs,
            "output": outputs,
            **extra,
        },
        cfg,
    )
    return cfg


def write_model(repo: Path, cfg: Any, files: dict[str, bytes]) -> dict[str, Any]:
    """Write ``<repo>/<name>/`` and return its manifest ModelEntry dict."""
    mdir = repo / cfg.name
    mdir.mkdir(parents=True, exist_ok=True)
    text = text_format.MessageToString(cfg).encode()
    (mdir / "config.pbtxt").write_bytes(text)
    hashes = {"config.pbtxt": sha256(text)}
    for rel, data in files.items():
        p = mdir / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_bytes(data)
        hashes[rel] = sha256(data)
    if not files:
        (mdir / "1").mkdir(exist_ok=True)
    fmt = {
        "onnxruntime_onnx": "onnx",
        "pytorch_libtorch": "torchscript",
        "ensemble": "ensemble",
        "tensorrt_plan": "tensorrt",
    }.get(cfg.platform, "python")
    as_json = json_format.MessageToDict(cfg, preserving_proto_field_name=True)
    return {
        "name": cfg.name,
        "format": fmt,
        "platform": cfg.platform or None,
        "backend": cfg.backend or None,
        "config": as_json,
        "config_sha256": sha256(text),
        "files": hashes,
        "steps": [s.model_name for s in cfg.ensemble_scheduling.step],
    }


def pack(repo: Path, models: list[str], dest: Path) -> tuple[str, int]:
    with tarfile.open(dest, "w:gz") as tar:
        for m in models:
            tar.add(repo / m, arcname=m)
    data = dest.read_bytes()
    return sha256(data), len(data)


def kserve(tensors: dict[str, np.ndarray], key: str) -> dict[str, Any]:
    names = {np.dtype(np.float32): "FP32", np.dtype(np.uint8): "UINT8", np.dtype(np.int64): "INT64"}
    return {
        key: [
            {"name": n, "shape": list(a.shape), "datatype": names[a.dtype], "data": a.ravel().tolist()}
            for n, a in tensors.items()
        ]
    }


class Built:
    """Everything the tests need to know about the hand-written build output."""

    def __init__(self, root: Path):
        self.root = root
        self.nets = {"onnx": Net(1), "ts": Net(2), "onnx_b": Net(3)}
        self.raw = (np.arange(3 * FEATURES, dtype=np.uint8).reshape(3, FEATURES) * 7) % 251
        self.x = np.random.default_rng(0).standard_normal((3, FEATURES)).astype(np.float32)

    def eager(self, key: str, x: np.ndarray) -> np.ndarray:
        with torch.no_grad():
            return self.nets[key](torch.from_numpy(x)).numpy()


def build(root: Path) -> tuple[Built, Path]:
    """Write repositories, MME archives, samples and manifest.json under ``root``; return (facts, manifest path)."""
    b = Built(root)
    out = root / "out"
    models: dict[str, Any] = {}
    tmp = root / "tmp"
    tmp.mkdir(parents=True, exist_ok=True)

    # ---- SME repository: ensemble(preprocess -> onnx) + torchscript + a second onnx; default = pipeline
    sme = out / "sme" / "local" / "repository"
    onnx_cfg = config(
        "onnx_model",
        platform="onnxruntime_onnx",
        inputs=[tensor("x", "TYPE_FP32", [FEATURES])],
        outputs=[tensor("y", "TYPE_FP32", [CLASSES])],
        dynamic_batching={},
    )
    ts_cfg = config(
        "ts_model",
        platform="pytorch_libtorch",
        inputs=[tensor("INPUT__0", "TYPE_FP32", [FEATURES])],
        outputs=[tensor("OUTPUT__0", "TYPE_FP32", [CLASSES])],
        instance_group=[{"kind": "KIND_GPU", "count": 1, "gpus": [0]}],
    )
    pre_cfg = config(
        "preprocess",
        backend="python",
        inputs=[tensor("RAW", "TYPE_UINT8", [FEATURES])],
        outputs=[tensor("X", "TYPE_FP32", [FEATURES])],
    )
    ens_cfg = config(
        "pipeline",
        platform="ensemble",
        inputs=[tensor("RAW", "TYPE_UINT8", [FEATURES])],
        outputs=[tensor("SCORES", "TYPE_FP32", [CLASSES])],
        ensemble_scheduling={
            "step": [
                {
                    "model_name": "preprocess",
                    "model_version": -1,
                    "input_map": {"RAW": "RAW"},
                    "output_map": {"X": "pixels"},
                },
                {
                    "model_name": "onnx_model",
                    "model_version": -1,
                    "input_map": {"x": "pixels"},
                    "output_map": {"y": "SCORES"},
                },
            ]
        },
    )
    onnx_data = onnx_bytes(b.nets["onnx"], tmp / "a.onnx")
    models["onnx_model"] = write_model(sme, onnx_cfg, {"1/model.onnx": onnx_data})
    models["ts_model"] = write_model(sme, ts_cfg, {"1/model.pt": torchscript_bytes(b.nets["ts"])})
    models["preprocess"] = write_model(
        sme, pre_cfg, {"1/model.py": PREPROCESS_PY.format(scale="1.0 / 255.0").encode()}
    )
    models["pipeline"] = write_model(sme, ens_cfg, {})

    samples = out / "samples"
    samples.mkdir(parents=True)
    expected = b.eager("onnx", b.raw.astype(np.float32) / 255.0)
    (samples / "pipeline.request.json").write_text(json.dumps(kserve({"RAW": b.raw}, "inputs")))
    (samples / "pipeline.response.json").write_text(json.dumps(kserve({"SCORES": expected}, "outputs")))
    (samples / "ts.request.json").write_text(json.dumps(kserve({"INPUT__0": b.x}, "inputs")))
    (samples / "ts.response.json").write_text(
        json.dumps(kserve({"OUTPUT__0": b.eager("ts", b.x)}, "outputs"))
    )
    (samples / "onnx.request.json").write_text(json.dumps(kserve({"x": b.x}, "inputs")))
    (samples / "onnx.response.json").write_text(json.dumps(kserve({"y": b.eager("onnx", b.x)}, "outputs")))
    (samples / "py.request.json").write_text(json.dumps(kserve({"RAW": b.raw}, "inputs")))
    (samples / "py.response.json").write_text(
        json.dumps(kserve({"X": b.raw.astype(np.float32) * np.float32(1.0 / 255.0)}, "outputs"))
    )

    # ---- MME archives: two ensembles that both contain a `preprocess` step (different scales), a torchscript
    mme_repo = root / "mme-src"
    pipe_a = ens_cfg.__deepcopy__()
    pipe_a.name = "pipe_a"
    pipe_b = config(
        "pipe_b",
        platform="ensemble",
        inputs=[tensor("RAW", "TYPE_UINT8", [FEATURES])],
        outputs=[tensor("SCORES", "TYPE_FP32", [CLASSES])],
        ensemble_scheduling={
            "step": [
                {
                    "model_name": "preprocess",
                    "model_version": -1,
                    "input_map": {"RAW": "RAW"},
                    "output_map": {"X": "pixels"},
                },
                {
                    "model_name": "onnx_b",
                    "model_version": -1,
                    "input_map": {"x": "pixels"},
                    "output_map": {"y": "SCORES"},
                },
            ]
        },
    )
    onnx_b_cfg = config(
        "onnx_b",
        platform="onnxruntime_onnx",
        inputs=[tensor("x", "TYPE_FP32", [FEATURES])],
        outputs=[tensor("y", "TYPE_FP32", [CLASSES])],
    )
    a_dir, b_dir, t_dir, o_dir, x_dir, p_dir = (mme_repo / n for n in ("a", "b", "t", "oom", "x", "p"))
    write_model(x_dir, onnx_cfg, {"1/model.onnx": onnx_data})  # a standalone ONNX model
    write_model(p_dir, pre_cfg, {"1/model.py": PREPROCESS_PY.format(scale="1.0 / 255.0").encode()})
    write_model(a_dir, pipe_a, {})
    write_model(a_dir, onnx_cfg, {"1/model.onnx": onnx_data})
    write_model(a_dir, pre_cfg, {"1/model.py": PREPROCESS_PY.format(scale="1.0 / 255.0").encode()})
    models["onnx_b"] = write_model(
        b_dir, onnx_b_cfg, {"1/model.onnx": onnx_bytes(b.nets["onnx_b"], tmp / "b.onnx")}
    )
    write_model(b_dir, pipe_b, {})
    write_model(b_dir, pre_cfg, {"1/model.py": PREPROCESS_PY.format(scale="2.0 / 255.0").encode()})
    write_model(t_dir, ts_cfg, {"1/model.pt": torchscript_bytes(b.nets["ts"])})
    oom_cfg = config(
        "oom",
        backend="python",
        inputs=[tensor("RAW", "TYPE_UINT8", [FEATURES])],
        outputs=[tensor("X", "TYPE_FP32", [FEATURES])],
    )
    write_model(o_dir, oom_cfg, {"1/model.py": OOM_PY.encode()})

    mme_out = out / "mme" / "multi"
    mme_out.mkdir(parents=True)
    targets: dict[str, Any] = {}
    for logical, src, top, members, sample in (
        ("pipe_a", a_dir, "pipe_a", ["pipe_a", "onnx_model", "preprocess"], "pipeline"),
        ("pipe_b", b_dir, "pipe_b", ["pipe_b", "onnx_b", "preprocess"], None),
        ("ts", t_dir, "ts_model", ["ts_model"], "ts"),
        ("oom", o_dir, "oom", ["oom"], None),
        ("onnx", x_dir, "onnx_model", ["onnx_model"], "onnx"),
        ("py", p_dir, "preprocess", ["preprocess"], "py"),
    ):
        tmp_tar = mme_out / f"{logical}.tmp.tar.gz"
        digest, size = pack(src, members, tmp_tar)
        name = f"{logical}-{digest[:12]}.tar.gz"
        tmp_tar.rename(mme_out / name)
        targets[logical] = {
            "logical_name": logical,
            "target_model": name,
            "model": top,
            "models": members,
            "local_path": f"mme/multi/{name}",
            "sha256": digest,
            "size_bytes": size,
            "s3_uri": f"s3://bucket/cdk-triton/mme/multi/{name}",
        }
        if sample:
            targets[logical]["sample"] = {
                "request": f"samples/{sample}.request.json",
                "response": f"samples/{sample}.response.json",
                "atol": 1e-5,
                "rtol": 1e-4,
            }
    manifest = {
        "schema_version": 1,
        "triton_version": "24.09",
        "uploaded": False,
        "artifact_location": {"bucket": "bucket", "prefix": "cdk-triton/"},
        "tool_versions": {"torch": torch.__version__},
        "models": models,
        "endpoints": {
            "local": {
                "name": "local",
                "mode": "SingleModel",
                "instance_types": ["ml.g5.xlarge"],
                "default_model": "pipeline",
                "models": ["onnx_model", "pipeline", "preprocess", "ts_model"],
                "packaging": "directory",
                "local_path": "sme/local/repository",
                "s3_uri": "s3://bucket/cdk-triton/sme/local/0123/",
                "sha256": tree_sha256(sme),
                "sample": {
                    "request": "samples/pipeline.request.json",
                    "response": "samples/pipeline.response.json",
                    "atol": 1e-5,
                    "rtol": 1e-4,
                },
            },
            "multi": {
                "name": "multi",
                "mode": "MultiModel",
                "instance_types": ["ml.g5.xlarge"],
                "s3_prefix": "s3://bucket/cdk-triton/mme/multi/",
                "target_models": targets,
            },
        },
    }
    path = out / "manifest.json"
    path.write_text(json.dumps(manifest, indent=1))
    manifest_from_dict(manifest, source=str(path))  # validate the shape now
    return b, path
