"""The torchscript format's exporter: trace (or script, when asked) the factory's module, or copy the
given TorchScript file. Config names ``INPUT__n`` / ``OUTPUT__n``."""

from __future__ import annotations

import io
import re
import shutil
from pathlib import Path
from typing import TYPE_CHECKING, Any

from cdk_triton.builder import portability
from cdk_triton.builder.context import BuildContext, Exported
from cdk_triton.builder.export import artifact, check_io
from cdk_triton.builder.pbtxt import IoTensor
from cdk_triton.builder.reference import Runner, torch_runner
from cdk_triton.builder.samples import triton_dtype
from cdk_triton.config.declaration import BuildSpec, ModelSpec
from cdk_triton.errors import BuildError

if TYPE_CHECKING:
    import numpy as np

    from cdk_triton.builder.portability import DevicePin

_INDEXED = re.compile(r"^.+__\d+$")


def config_names(names: list[str], prefix: str) -> list[str]:
    """``<prefix>__<n>`` names unless every declared name already has the ``<name>__<index>`` form."""
    if names and all(_INDEXED.match(n) for n in names):
        return list(names)
    return [f"{prefix}__{i}" for i in range(len(names))]


def export(module: Any, spec: ModelSpec, sample: dict[str, np.ndarray], out_file: Path) -> list[DevicePin]:
    """Trace (or script) ``module`` and save it to ``out_file``; returns the device constants its graph
    uses, read before the save drops the source locations (``portability.graph_pins``)."""
    import numpy as np
    import torch
    import torch.jit._recursive as jit_recursive
    import torch.jit._state as jit_state

    args = tuple(torch.from_numpy(np.ascontiguousarray(sample[t.name])) for t in spec.inputs)
    # a fresh compilation unit: class names are not mangled by earlier exports in this process.
    # The concrete type store must be fresh too: it caches types of the compilation unit it was
    # filled with, and scripting a class again against dropped types crashes the process.
    saved_cu, saved_store = jit_state._python_cu, jit_recursive.concrete_type_store
    jit_state._python_cu = torch._C.CompilationUnit()
    jit_recursive.concrete_type_store = jit_recursive.ConcreteTypeStore()
    import warnings

    try:
        with torch.inference_mode(False), torch.no_grad(), warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)
            ts = (
                torch.jit.script(module)
                if spec.torchscript_mode == "script"
                else torch.jit.trace(module, args, check_trace=False, strict=False)
            )
        pins = portability.graph_pins(ts)
        buf = io.BytesIO()
        torch.jit.save(ts, buf)
    except Exception as exc:
        raise BuildError(
            f"model '{spec.name}': TorchScript {spec.torchscript_mode} failed: {exc!r}", code="ExportFailed"
        ) from exc
    finally:
        jit_state._python_cu, jit_recursive.concrete_type_store = saved_cu, saved_store
    write_without_debug_info(buf.getvalue(), out_file)
    normalize_serialization_id(out_file)
    return pins


def write_without_debug_info(archive: bytes, out_file: Path) -> None:
    """Write a TorchScript archive without its ``*.debug_pkl`` records.

    Those records hold the Python stack of the trace: absolute paths of the factory's file and of
    site-packages, so the same model built in another checkout or venv would get other bytes (and
    another S3 key). torch.jit.load (and Triton's libtorch) load an archive without them; only the
    source positions in TorchScript error messages are lost.
    """
    import torch

    reader = torch._C.PyTorchFileReader(io.BytesIO(archive))
    writer = torch._C.PyTorchFileWriter(str(out_file))
    for name in reader.get_all_records():
        if name.endswith(".debug_pkl") or name == ".data/serialization_id":
            continue
        data = reader.get_record(name)
        writer.write_record(name, data, len(data))
    writer.write_end_of_file()


def normalize_serialization_id(path: Path) -> None:
    """Replace the random ``.data/serialization_id`` torch writes with one derived from the content,
    so the same model gives the same bytes (same length, CRC fixed in both zip headers)."""
    import struct
    import zipfile
    import zlib
    from hashlib import sha256

    data = bytearray(path.read_bytes())
    with zipfile.ZipFile(path) as zf:
        info = next((i for i in zf.infolist() if i.filename.endswith(".data/serialization_id")), None)
        start_dir = zf.start_dir
    if info is None or info.compress_type != zipfile.ZIP_STORED:
        return
    off = info.header_offset
    name_len, extra_len = struct.unpack_from("<HH", data, off + 26)
    begin = off + 30 + name_len + extra_len
    size = info.file_size
    blank = bytes(data[:begin]) + b"0" * size + bytes(data[begin + size : start_dir])
    digits = str(int(sha256(blank).hexdigest(), 16)).zfill(size)[-size:].encode()
    data[begin : begin + size] = digits
    crc = zlib.crc32(digits) & 0xFFFFFFFF
    struct.pack_into("<I", data, off + 14, crc)
    pos = start_dir
    while data[pos : pos + 4] == b"PK\x01\x02":
        n_len, e_len, c_len = struct.unpack_from("<HHH", data, pos + 28)
        name = bytes(data[pos + 46 : pos + 46 + n_len]).decode("utf-8", "replace")
        if name == info.filename:
            struct.pack_into("<I", data, pos + 16, crc)
            break
        pos += 46 + n_len + e_len + c_len
    tmp = path.with_name(path.name + ".norm")
    tmp.write_bytes(bytes(data))
    tmp.replace(path)


def load_runner(path: Path, spec: ModelSpec) -> Runner:
    """torch.jit.load the artifact; outputs keyed by the declared output names."""
    import torch

    module = torch.jit.load(str(path), map_location="cpu")
    return torch_runner(module, spec)


def inspect(
    path: Path, spec: ModelSpec, sample: dict[str, np.ndarray]
) -> tuple[list[IoTensor], list[IoTensor], Runner]:
    """Config inputs/outputs of a TorchScript artifact, read from a traced run on the sample."""
    runner = load_runner(path, spec)
    outs = runner(sample)
    batched = spec.max_batch_size > 0
    in_names = config_names([t.name for t in spec.inputs], "INPUT")
    out_names = config_names([t.name for t in spec.outputs], "OUTPUT")
    observed_in = [
        IoTensor(
            name=n,
            dtype=triton_dtype(sample[t.name].dtype),
            dims=tuple(sample[t.name].shape[1:] if batched else sample[t.name].shape),
        )
        for n, t in zip(in_names, spec.inputs, strict=True)
    ]
    observed_out = []
    for n, t in zip(out_names, spec.outputs, strict=True):
        arr = outs[t.name]
        if batched and (arr.ndim == 0 or arr.shape[0] != next(iter(sample.values())).shape[0]):
            raise BuildError(
                f"model '{spec.name}': output '{t.name}' has shape {list(arr.shape)} without a leading batch dim, but "
                f"max_batch_size is {spec.max_batch_size}; set max_batch_size: 0 or return batched outputs",
                code="NoBatchDim",
            )
        observed_out.append(
            IoTensor(
                name=n, dtype=triton_dtype(arr.dtype), dims=tuple(arr.shape[1:] if batched else arr.shape)
            )
        )
    # dims observed on a concrete run: keep declared -1 where the declaration says dynamic
    ins = check_io(spec, spec.inputs, observed_in, group="inputs", what="the TorchScript module")
    outs_io = check_io(spec, spec.outputs, observed_out, group="outputs", what="the traced TorchScript run")
    ins = [
        IoTensor(name=i.name, dtype=i.dtype, dims=tuple(t.shape))
        for i, t in zip(ins, spec.inputs, strict=True)
    ]
    outs_io = [
        IoTensor(name=o.name, dtype=o.dtype, dims=tuple(t.shape))
        for o, t in zip(outs_io, spec.outputs, strict=True)
    ]
    return ins, outs_io, runner


# ---------------------------------------------------------------------------- the Exporter protocol

skip_reason = artifact.no_skip


def check_source(spec: BuildSpec, m: ModelSpec) -> None:
    """Nothing to refuse before the export (the torch version is a warning: :func:`warnings`)."""


def warnings(spec: BuildSpec, m: ModelSpec, tools: dict[str, str]) -> list[str]:
    """None before the export: whether TorchScript saved by a newer torch than the target release's libtorch
    loads there is the release-runtime check's finding (``builder.target_runtime``), which warns with the
    reason when it could not run."""
    return []


def export_model(ctx: BuildContext, m: ModelSpec, tmp: Path) -> Exported:
    """Trace/script the factory's module (or copy the file) to ``1/model.pt`` and check its parity."""
    return artifact.export_model(ctx, m, tmp, write=_write)


def _write(ctx: BuildContext, m: ModelSpec, src: artifact.Source) -> artifact.Written:
    target = src.version_dir / str(m.row.artifact)
    if src.module is not None:
        pins = export(src.module, m, src.export_sample, target)
    else:
        assert m.source is not None
        given = ctx.spec.resolve_path(m.source.torchscript or "")
        shutil.copyfile(given, target)
        pins = portability.file_pins(given)  # the given file, with its debug info if it has any
    portability.refuse_pins(ctx.spec, m, pins)  # before the cache commit: nothing written
    ins, outs, runner = inspect(target, m, src.sample)
    return artifact.Written(
        inputs=ins,
        outputs=outs,
        runner=runner,
        what=f"the {m.format} artifact",
        device_pins=[p.to_dict() for p in pins],
    )


def device_unavailable() -> str | None:
    """TorchScript runs on CUDA wherever torch has CUDA (``gpu-check`` requires it)."""
    return None


def device_runner(torch: Any, m: ModelSpec, artifact_path: Path, device: str) -> tuple[Runner, bool]:
    """The TorchScript artifact loaded on ``device``: torch's allocator holds it."""
    from cdk_triton.builder import device_parity

    module = torch.jit.load(str(artifact_path), map_location=device)
    return device_parity.device_runner(torch, module, m, device), True


def artifact_runner(ctx: BuildContext, m: ModelSpec, entry: Path) -> Runner:
    """The built ``1/model.pt`` on CPU."""
    return load_runner(entry / "1" / str(m.row.artifact), m)
