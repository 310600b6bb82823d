"""The build: declarations -> exported, verified models -> repositories/archives -> S3 -> manifest.

Phases: (1) preflight: validate, resolve sources, check target compatibility, compute cache keys
(nothing written yet); (2) export every model whose key is not cached (temp dir + rename);
(3) package each endpoint (SME repository directory or tar.gz, MME one archive per target model);
(4) optionally upload; (5) write the manifest.
"""

from __future__ import annotations

import json
import os
import shutil
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np

from cdk_triton.builder import compat
from cdk_triton.builder.cache import ModelCache, model_key, tool_versions
from cdk_triton.builder.declarations import load_spec
from cdk_triton.builder.package import pack, tree_digest
from cdk_triton.builder.parity import check_deterministic, compare
from cdk_triton.builder.pbtxt import PLATFORMS, IoTensor, build_config, sha256_text, to_dict, to_pbtxt
from cdk_triton.builder.reference import Runner, forget_local_modules, source_fingerprint
from cdk_triton.builder.repository import assemble
from cdk_triton.builder.samples import sample_inputs, tolerance, v2_tensors, write_json_if_changed
from cdk_triton.config.manifest import (
    MANIFEST_FILENAME,
    SCHEMA_VERSION,
    EndpointEntry,
    Manifest,
    ModelEntry,
    Sample,
    TargetModel,
    manifest_from_dict,
    write_manifest,
)
from cdk_triton.config.spec import BuildSpec, EndpointSpec, ModelSpec
from cdk_triton.errors import BuildError, TritonValidationError

#: a file in every ensemble's version folder ``1/``: Triton needs the folder, S3 has no empty folders,
#: and SageMaker refuses a zero-byte "folder marker" key ending in '/' under an uncompressed S3 prefix
#: (its last path part would be an empty file name, which S3ModelDataSource does not allow)
ENSEMBLE_PLACEHOLDER = ".keep"


@dataclass(kw_only=True, slots=True)
class BuildResult:
    """What a build did. ``exported``/``packaged``/``uploaded`` count work done; ``skipped`` counts
    work found up to date (cached models, unchanged packages, objects already in S3)."""

    manifest_path: Path
    manifest: Manifest
    exported: int = 0
    packaged: int = 0
    uploaded: int = 0
    copied: int = 0
    skipped: int = 0
    skipped_models: dict[str, str] = field(default_factory=dict)  # optional models not built, and why
    warnings: list[str] = field(default_factory=list)
    rows: list[dict[str, str]] = field(default_factory=list)  # summary table


class Reporter:
    """Progress and messages: rich progress bars when enabled, silent otherwise."""

    def __init__(self, enabled: bool) -> None:
        self.enabled = enabled
        self._progress: Any = None
        self._tasks: dict[str, Any] = {}

    def __enter__(self) -> Reporter:
        if self.enabled:
            from rich.console import Console
            from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

            self._progress = Progress(
                TextColumn("{task.description:<10}"),
                BarColumn(),
                TextColumn("{task.completed:.0f}/{task.total:.0f} {task.fields[unit]}"),
                TextColumn("{task.fields[what]}"),
                TimeElapsedColumn(),
                console=Console(stderr=True),
                transient=False,
            )
            self._progress.__enter__()
        return self

    def __exit__(self, *exc: object) -> None:
        if self._progress is not None:
            self._progress.__exit__(*exc)

    def start(self, phase: str, total: int, unit: str = "") -> None:
        if self._progress is not None:
            self._tasks[phase] = self._progress.add_task(phase, total=max(total, 1), what="", unit=unit)

    def advance(self, phase: str, amount: int = 1, what: str = "") -> None:
        if self._progress is not None and phase in self._tasks:
            self._progress.update(self._tasks[phase], advance=amount, what=what)

    def finish(self, phase: str) -> None:
        if self._progress is not None and phase in self._tasks:
            t = self._tasks[phase]
            self._progress.update(t, completed=self._progress.tasks[t].total, what="done")

    def warn(self, text: str) -> None:
        if self._progress is not None:
            self._progress.console.print(f"[yellow]warning:[/yellow] {text}")


@dataclass(kw_only=True, slots=True)
class _Planned:
    spec: ModelSpec
    key: str
    record: dict[str, Any] | None  # cached record, or None when it must be exported
    skip_reason: str | None = None


class _Build:
    def __init__(self, spec: BuildSpec, out_dir: Path, reporter: Reporter) -> None:
        self.spec = spec
        self.out = out_dir
        self.cache = ModelCache(out_dir)
        self.reporter = reporter
        self.tools = tool_versions()
        self.plan: dict[str, _Planned] = {}
        self.warnings: list[str] = []
        self._eager: dict[str, Runner] = {}
        self.fresh: set[str] = set()

    # ------------------------------------------------------------------ preflight
    def preflight(self, names: list[str]) -> None:
        by_name = {m.name: m for m in self.spec.models}
        keys: dict[str, str] = {}
        forgotten: set[str] = set()

        def plan(name: str) -> None:
            if name in self.plan:
                return
            m = by_name[name]
            for s in m.steps:
                plan(s.model)
            skip = None
            local_arch = None
            if m.format == "tensorrt":
                try:
                    from cdk_triton.builder.export.tensorrt import require_tensorrt

                    _, cc, gpu_name = require_tensorrt()
                    local_arch = f"sm{cc[0]}{cc[1]}"
                    mismatch = self._local_arch_mismatch(m, local_arch, gpu_name)
                    if mismatch and not m.tensorrt.plans:
                        if not m.optional:
                            raise BuildError(mismatch, code="PlanArchitectureMismatch")
                        skip = mismatch
                except BuildError as exc:
                    if exc.code != "TensorRTUnavailable":
                        raise
                    if not m.tensorrt.plans:
                        if not m.optional:
                            raise
                        skip = str(exc)
            if m.tensorrt.plans and m.format == "tensorrt":
                self._check_prebuilt_plans(m)
            if m.source and m.source.factory and m.source.factory not in forgotten:
                forget_local_modules(self.spec, m)  # import the factory's files as they are now
                forgotten.add(m.source.factory)
            fp = source_fingerprint(self.spec, m)
            if local_arch:
                fp["gpu_architecture"] = local_arch  # a plan is specific to the GPU it was built on
            if m.format == "python" and m.source and m.source.python:
                p = self.spec.resolve_path(m.source.python)
                compat.check_python_model(p if p.is_dir() else p.parent, name=m.name)
            if m.source and m.source.onnx:
                import onnx

                path = self.spec.resolve_path(m.source.onnx)
                try:
                    proto = onnx.load(str(path), load_external_data=False)
                except Exception as exc:
                    raise BuildError(
                        f"model '{m.name}': {path} is not an ONNX model ({exc})", code="OnnxInvalid"
                    ) from exc
                compat.check_onnx_model(proto, self.spec.triton_version, name=m.name)
                inits = {i.name for i in proto.graph.initializer}
                for group, declared, graph in (
                    ("inputs", m.inputs, [v.name for v in proto.graph.input if v.name not in inits]),
                    ("outputs", m.outputs, [v.name for v in proto.graph.output]),
                ):
                    if sorted(t.name for t in declared) != sorted(graph):
                        raise BuildError(
                            f"model '{m.name}': the ONNX graph's {group} are {graph}, the declaration says "
                            f"{[t.name for t in declared]}; declare the graph's names",
                            code="TensorNameMismatch",
                        )
            if m.source and m.source.factory:
                from cdk_triton.builder.reference import resolve_factory

                resolve_factory(self.spec, m)
            if m.format == "onnx" and m.onnx.opset is not None:
                compat.check_onnx_opset(
                    m.onnx.opset, None, self.spec.triton_version, what=f"model '{m.name}' (onnx.opset)"
                )
            step_keys = {s.model: keys[s.model] for s in m.steps}
            key = model_key(
                m,
                fingerprint=fp,
                triton_version=self.spec.triton_version,
                tools=self.tools,
                step_keys=step_keys,
            )
            keys[name] = key
            if any(self.plan[s.model].skip_reason for s in m.steps):
                skip = f"step of '{m.name}' skipped: " + "; ".join(
                    str(self.plan[s.model].skip_reason) for s in m.steps if self.plan[s.model].skip_reason
                )
                if not m.optional:
                    raise BuildError(
                        f"model '{m.name}' needs a skipped model: {skip}", code="TensorRTUnavailable"
                    )
            self.plan[name] = _Planned(
                spec=m, key=key, record=None if skip else self.cache.get(name, key), skip_reason=skip
            )
            if m.format == "torchscript" and skip is None:
                w = compat.torchscript_warning(self.tools.get("torch", "0"), self.spec.triton_version)
                if w:
                    self.warn(f"model '{m.name}': {w}")

        for n in names:
            plan(n)

    def _local_arch_mismatch(self, m: ModelSpec, arch: str, gpu_name: str) -> str | None:
        """Why a plan built on this GPU cannot serve the endpoints that contain ``m`` (None if it can)."""
        from cdk_triton.config import tables

        for ep in self.spec.endpoints:
            if not any(m.name in self.spec.closure(r) for r in ep.models):
                continue
            for it in ep.instance_types:
                info = tables.instance_type_info(it)
                if info is None or info.sm != arch:
                    want = f"{info.gpu} ({info.sm})" if info else "no known GPU"
                    return (
                        f"model '{m.name}': this GPU is {gpu_name} ({arch}) but endpoint '{ep.name}' runs on {it} "
                        f"with {want}; build the plan on that GPU, or add prebuilt plans (tensorrt.plans)"
                    )
        return None

    def _check_prebuilt_plans(self, m: ModelSpec) -> None:
        """Refuse prebuilt plans for another GPU before anything is written."""
        from cdk_triton.builder.export import tensorrt as trt_export

        metas = [
            trt_export.load_plan_dir(self.spec.resolve_path(d), model=m.name)[1] for d in m.tensorrt.plans
        ]
        trt_export.plan_layout(metas, model=m.name)
        for ep in self.spec.endpoints:
            if any(m.name in self.spec.closure(r) for r in ep.models):
                trt_export.check_plans(
                    metas,
                    ep.instance_types,
                    model=m.name,
                    triton_version=self.spec.triton_version,
                    max_batch_size=m.max_batch_size,
                )

    def warn(self, text: str) -> None:
        if text not in self.warnings:
            self.warnings.append(text)
            self.reporter.warn(text)

    # ------------------------------------------------------------------ export
    def export_all(self) -> int:
        todo = [p for p in self.plan.values() if p.record is None and p.skip_reason is None]
        self.reporter.start("export", len(todo), "models")
        for p in self.plan.values():  # planned in dependency order
            if p.record is not None or p.skip_reason is not None:
                continue
            self.reporter.advance("export", 0, what=p.spec.name)
            p.record = self._export(p)
            self.fresh.add(p.spec.name)
            self.reporter.advance("export", 1, what=p.spec.name)
        self.reporter.finish("export")
        return len(todo)

    def _export(self, p: _Planned) -> dict[str, Any]:
        m = p.spec
        tmp = self.cache.new_temp_dir(m.name)
        try:
            record = self._export_ensemble(m, tmp) if m.is_ensemble else self._export_model(m, tmp)
            record.update(
                name=m.name,
                format=m.format,
                source_sha256=p.key,
                tool_versions=self.tools,
                platform=PLATFORMS[m.format][0] if m.format != "python" else None,
                backend=PLATFORMS[m.format][1] if m.format != "ensemble" else None,
            )
            _, files, _ = tree_digest(tmp)
            record["files"] = files
            self.cache.commit(m.name, p.key, tmp, record)
            return record
        except BaseException:
            shutil.rmtree(tmp, ignore_errors=True)
            raise

    def _reference(self, m: ModelSpec) -> Runner:
        if m.name in self._eager:
            return self._eager[m.name]
        from cdk_triton.builder.export import onnx as onnx_export
        from cdk_triton.builder.export import torchscript as ts_export
        from cdk_triton.builder.reference import build_eager, torch_runner

        src = m.source
        assert src is not None
        if src.factory:
            runner = torch_runner(build_eager(self.spec, m), m)
        elif src.torchscript:
            runner = ts_export.load_runner(self.spec.resolve_path(src.torchscript), m)
        elif src.onnx:
            runner = onnx_export.load_runner(self.spec.resolve_path(src.onnx), m)
        else:
            runner = self._artifact(m)
        self._eager[m.name] = runner
        return runner

    def _artifact(self, m: ModelSpec) -> Runner:
        """A CPU runner of the built artifact (from the cache)."""
        from cdk_triton.builder.export import onnx as onnx_export
        from cdk_triton.builder.export import torchscript as ts_export
        from cdk_triton.builder.python_model import PythonModelRunner

        p = self.plan[m.name]
        assert p.record is not None
        d = self.cache.entry_dir(m.name, p.key)
        if m.format == "onnx":
            return onnx_export.load_runner(d / "1" / "model.onnx", m)
        if m.format == "torchscript":
            return ts_export.load_runner(d / "1" / "model.pt", m)
        if m.format == "python":
            return PythonModelRunner(d / "1" / "model.py", p.record["config"], name=m.name)
        if m.format == "ensemble":
            return self._chain(m, self._artifact)
        raise BuildError(
            f"model '{m.name}': a {m.format} model cannot run on CPU", code="TensorRTUnavailable"
        )

    def _chain(self, m: ModelSpec, runner_of: Callable[[ModelSpec], Runner]) -> Runner:
        def run(inputs: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
            env = dict(inputs)
            for s in m.steps:
                step = self.spec.model(s.model)
                out = runner_of(step)({k: env[v] for k, v in s.input_map.items()})
                for k, v in s.output_map.items():
                    env[v] = out[k]
            return {t.name: env[t.name] for t in m.outputs}

        return run

    def _export_model(self, m: ModelSpec, tmp: Path) -> dict[str, Any]:
        from cdk_triton.builder.export import check_io
        from cdk_triton.builder.samples import triton_dtype

        vdir = tmp / "1"
        vdir.mkdir()
        src = m.source
        assert src is not None
        sample = sample_inputs(m)
        extra: dict[str, Any] = {}
        cc_files: dict[str, str] | None = None
        if m.format == "python":
            from cdk_triton.builder.python_model import PythonModelRunner

            path = self.spec.resolve_path(src.python or "")
            if path.is_dir():
                for f in sorted(path.rglob("*")):
                    if "__pycache__" in f.parts or f.suffix == ".pyc" or f.is_dir():
                        continue
                    rel = f.relative_to(path)
                    if rel.parts[0] == "1" and len(rel.parts) > 1:
                        rel = Path(*rel.parts[1:])
                    if rel.name == "config.pbtxt":
                        continue
                    (vdir / rel).parent.mkdir(parents=True, exist_ok=True)
                    shutil.copyfile(f, vdir / rel)
            else:
                shutil.copyfile(path, vdir / "model.py")
            if not (vdir / "model.py").is_file():
                raise BuildError(f"python model '{m.name}': no model.py in {path}", code="PythonModelInvalid")
            ins = [IoTensor(name=t.name, dtype=t.dtype, dims=t.shape) for t in m.inputs]
            outs = [IoTensor(name=t.name, dtype=t.dtype, dims=t.shape) for t in m.outputs]
            cfg = build_config(m, inputs=ins, outputs=outs)
            runner = PythonModelRunner(vdir / "model.py", to_dict(cfg), name=m.name)
            expected = runner(sample)
            check_deterministic(m, expected, runner(sample))
            batched = m.max_batch_size > 0
            observed = []
            for t in m.outputs:
                if t.name not in expected:
                    raise BuildError(
                        f"python model '{m.name}' returned no output '{t.name}'", code="TensorNameMismatch"
                    )
                arr = expected[t.name]
                observed.append(
                    IoTensor(
                        name=t.name,
                        dtype=triton_dtype(arr.dtype),
                        dims=tuple(arr.shape[1:] if batched else arr.shape),
                    )
                )
            check_io(m, m.outputs, observed, group="outputs", what="the python model's sample run")
            actual = expected
        else:
            reference = _guarded(self._reference(m), m)
            expected = reference(sample)
            check_deterministic(m, expected, reference(sample))
            export_sample = (
                sample_inputs(m, batch=min(2, m.max_batch_size)) if m.max_batch_size > 0 else sample
            )
            if m.max_batch_size > 0 and src.factory:
                out2 = reference(export_sample)
                for t in m.outputs:
                    arr = out2[t.name]
                    if arr.ndim == 0 or arr.shape[0] != next(iter(export_sample.values())).shape[0]:
                        raise BuildError(
                            f"model '{m.name}': output '{t.name}' has shape {list(arr.shape)} for a batch of "
                            f"{next(iter(export_sample.values())).shape[0]}: no leading batch dim, but max_batch_size is "
                            f"{m.max_batch_size}; set max_batch_size: 0 and declare full shapes, or batch the model",
                            code="NoBatchDim",
                        )
            module = None
            if src.factory:
                from cdk_triton.builder.reference import build_eager

                module = build_eager(self.spec, m)
            if m.format == "torchscript":
                from cdk_triton.builder.export import torchscript as ts_export

                target = vdir / "model.pt"
                if module is not None:
                    ts_export.export(module, m, export_sample, target)
                else:
                    shutil.copyfile(self.spec.resolve_path(src.torchscript or ""), target)
                ins, outs, art = ts_export.inspect(target, m, sample)
                actual = art(sample)
            else:
                from cdk_triton.builder.export import onnx as onnx_export

                onnx_file = (vdir / "model.onnx") if m.format == "onnx" else (tmp.parent / f"{tmp.name}.onnx")
                if module is not None:
                    opset = compat.choose_opset(
                        self.spec.triton_version, m.onnx.opset, torch_max=onnx_export.torch_max_opset()
                    )
                    onnx_export.export(module, m, export_sample, onnx_file, opset=opset)
                else:
                    shutil.copyfile(self.spec.resolve_path(src.onnx or ""), onnx_file)
                ins, outs, info = onnx_export.inspect(onnx_file, m, triton_version=self.spec.triton_version)
                extra["onnx"] = info
                actual = onnx_export.load_runner(onnx_file, m)(sample)
                if m.format == "tensorrt":
                    compare(m, expected, actual, what="the ONNX export feeding TensorRT")
                    cc_files = self._plans(m, onnx_file, ins, vdir, extra)
                    onnx_file.unlink(missing_ok=True)
                    actual = None  # no CPU runtime for plans: parity ran on the ONNX export
            if actual is not None:
                extra["parity_max_abs_diff"] = compare(m, expected, actual, what=f"the {m.format} artifact")
            cfg = build_config(m, inputs=ins, outputs=outs, cc_model_filenames=cc_files)
        text = to_pbtxt(cfg)
        (tmp / "config.pbtxt").write_text(text, "utf-8")
        in_names = {t.name: c.name for t, c in zip(m.inputs, cfg.input, strict=True)}
        out_names = {t.name: c.name for t, c in zip(m.outputs, cfg.output, strict=True)}
        return {
            "config": to_dict(cfg),
            "config_sha256": sha256_text(text),
            "io_names": {"inputs": in_names, "outputs": out_names},
            "sample": self._sample_record(m, sample, expected, in_names, out_names),
            **extra,
        }

    def _plans(
        self, m: ModelSpec, onnx_file: Path, ins: list[IoTensor], vdir: Path, extra: dict[str, Any]
    ) -> dict[str, str] | None:
        """Build a plan on this GPU (when there is one) and add the declared prebuilt plans."""
        from cdk_triton.builder.export import tensorrt as trt_export

        plans: list[tuple[Path, dict[str, Any]]] = []
        try:
            trt_export.require_tensorrt()
            has_gpu = True
        except BuildError:
            if not m.tensorrt.plans:
                raise
            has_gpu = False
        if has_gpu:
            built = onnx_file.with_suffix(".plan")
            cache_file = (
                Path(m.tensorrt.timing_cache) if m.tensorrt.timing_cache else self.out / "tensorrt.cache"
            )
            meta = trt_export.build_plan(onnx_file, m, ins, built, timing_cache=cache_file)
            (built.parent / trt_export.METADATA_FILE).unlink(missing_ok=True)
            plans.append((built, meta))
        for d in m.tensorrt.plans:
            plans.append(trt_export.load_plan_dir(self.spec.resolve_path(d), model=m.name))
        names, cc_files = trt_export.plan_layout([meta for _, meta in plans], model=m.name)
        for (src, meta), name in zip(plans, names, strict=True):
            shutil.copyfile(src, vdir / name)
            stem = name.removesuffix(".plan").replace("model", "plan", 1)
            (vdir / f"{stem}.json").write_text(json.dumps(meta, indent=2, sort_keys=True) + "\n")
        if has_gpu:
            plans[0][0].unlink(missing_ok=True)
        extra["plans"] = [meta for _, meta in plans]
        return cc_files

    def _export_ensemble(self, m: ModelSpec, tmp: Path) -> dict[str, Any]:
        (tmp / "1").mkdir()
        (tmp / "1" / ENSEMBLE_PLACEHOLDER).write_text(
            "Triton loads an ensemble only when its version folder exists; this file keeps it in S3.\n"
        )
        steps = []
        for s in m.steps:
            rec = self.plan[s.model].record or {}
            names = rec.get("io_names", {"inputs": {}, "outputs": {}})
            steps.append(
                replace(
                    s,
                    input_map={names["inputs"].get(k, k): v for k, v in s.input_map.items()},
                    output_map={names["outputs"].get(k, k): v for k, v in s.output_map.items()},
                )
            )
        ins = [IoTensor(name=t.name, dtype=t.dtype, dims=t.shape) for t in m.inputs]
        outs = [IoTensor(name=t.name, dtype=t.dtype, dims=t.shape) for t in m.outputs]
        cfg = build_config(replace(m, steps=tuple(steps)), inputs=ins, outputs=outs)
        text = to_pbtxt(cfg)
        (tmp / "config.pbtxt").write_text(text, "utf-8")
        sample = sample_inputs(m)
        expected = self._chain(m, self._reference)(sample)
        extra: dict[str, Any] = {}
        if all(self.spec.model(n).format != "tensorrt" for n in self.spec.closure(m.name)):
            actual = self._chain(m, self._artifact)(sample)
            extra["parity_max_abs_diff"] = compare(
                m, expected, actual, what="the ensemble of built artifacts"
            )
        names_in = {t.name: t.name for t in m.inputs}
        names_out = {t.name: t.name for t in m.outputs}
        return {
            "config": to_dict(cfg),
            "config_sha256": sha256_text(text),
            "io_names": {"inputs": names_in, "outputs": names_out},
            "steps": [s.model for s in m.steps],
            "sample": self._sample_record(m, sample, expected, names_in, names_out),
            **extra,
        }

    def _sample_record(
        self,
        m: ModelSpec,
        sample: dict[str, np.ndarray],
        expected: dict[str, np.ndarray],
        in_names: dict[str, str],
        out_names: dict[str, str],
    ) -> dict[str, Any]:
        tols = [tolerance(m, t.dtype) for t in m.outputs]
        return {
            "request": {"inputs": v2_tensors({in_names[k]: v for k, v in sample.items()})},
            "response": {"outputs": v2_tensors({out_names[t.name]: expected[t.name] for t in m.outputs})},
            "atol": max(a for a, _ in tols),
            "rtol": max(r for _, r in tols),
        }

    # ------------------------------------------------------------------ package
    def model_dirs(self, names: list[str]) -> dict[str, Path]:
        return {n: self.cache.entry_dir(n, self.plan[n].key) for n in names}

    def write_samples(self, names: list[str]) -> dict[str, Sample]:
        out: dict[str, Sample] = {}
        for n in names:
            rec = self.plan[n].record
            if not rec or "sample" not in rec:
                continue
            s = rec["sample"]
            req = self.out / "samples" / f"{n}.request.json"
            resp = self.out / "samples" / f"{n}.response.json"
            write_json_if_changed(req, s["request"])
            write_json_if_changed(resp, s["response"])
            out[n] = Sample(
                request=f"samples/{n}.request.json",
                response=f"samples/{n}.response.json",
                atol=s["atol"],
                rtol=s["rtol"],
            )
        return out


def _guarded(runner: Runner, m: ModelSpec) -> Runner:
    """Turn a failure of the eager model on the declared sample into BuildError(EagerRunFailed)."""

    def run(inputs: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        try:
            return runner(inputs)
        except BuildError:
            raise
        except Exception as exc:
            shapes = {k: [*v.shape] for k, v in inputs.items()}
            raise BuildError(
                f"model '{m.name}': the eager model fails on the declared sample input {shapes}: {exc!r}; "
                "check the declared inputs (dtype, shape without the batch dim, max_batch_size)",
                code="EagerRunFailed",
            ) from exc

    return run


def _model_entry(name: str, rec: dict[str, Any], sample: Sample | None) -> ModelEntry:
    plans = rec.get("plans") or []
    return ModelEntry(
        name=name,
        format=rec["format"],
        platform=rec.get("platform"),
        backend=rec.get("backend"),
        config=rec["config"],
        config_sha256=rec["config_sha256"],
        files=rec["files"],
        steps=rec.get("steps", []),
        gpu_architectures=sorted(p["gpu_architecture"] for p in plans),
        tensorrt_version=plans[0]["tensorrt_version"] if plans else None,
        source_sha256=rec["source_sha256"],
        sample=sample,
    )


def _select(spec: BuildSpec, only: str | None) -> tuple[list[EndpointSpec], list[str]]:
    if only is None:
        endpoints = list(spec.endpoints)
        names: list[str] = []
        for m in spec.models:
            for n in spec.closure(m.name):
                if n not in names:
                    names.append(n)
        return endpoints, names
    ep_names = [e.name for e in spec.endpoints]
    if only in ep_names:
        endpoints = [e for e in spec.endpoints if e.name == only]
        roots = list(endpoints[0].models)
    elif only in spec.model_names:
        endpoints = [e for e in spec.endpoints if any(only in spec.closure(r) for r in e.models)]
        roots = [only] + [r for e in endpoints for r in e.models]
    else:
        raise TritonValidationError(
            "UnknownOnlyModel",
            prop="--only",
            value=only,
            problem="is not a declared model or endpoint",
            allowed=", ".join(spec.model_names + ep_names),
            fix="name a model or endpoint from the declaration",
        )
    names = []
    for r in roots:
        for n in spec.closure(r):
            if n not in names:
                names.append(n)
    return endpoints, names


def _order(spec: BuildSpec, names: list[str]) -> list[str]:
    """Dependency order: steps before ensembles."""
    out: list[str] = []

    def visit(n: str) -> None:
        if n in out:
            return
        for s in spec.model(n).steps:
            visit(s.model)
        out.append(n)

    for n in names:
        visit(n)
    return out


def run_build(
    config_path: str | os.PathLike[str],
    *,
    out_dir: str | os.PathLike[str] | None = None,
    upload: bool = False,
    only: str | None = None,
    force: bool = False,
    progress: bool = True,
    artifact_location: str | None = None,
    s3_client: Any | None = None,
) -> BuildResult:
    """Build every declared model and endpoint and write ``<out_dir>/manifest.json``.

    Args:
        config_path: the declaration (``build/models.yaml``).
        out_dir: where outputs go. Default: ``<yaml dir>/out``.
        upload: upload to the declared artifact location (S3). Default: compute S3 URIs only.
        only: build just this model (with its steps) or endpoint; the manifest keeps the other
            entries of the previous build.
        force: rebuild everything, ignoring the cache.
        progress: show rich progress bars and warnings on stderr.
        artifact_location: override the declared ``s3://bucket/prefix``.
        s3_client: a boto3 S3 client to upload with. Default: ``boto3.client("s3")``.

    Raises:
        TritonValidationError: bad declarations (nothing written).
        BuildError: a failed build step (the code says which).
    """
    spec = load_spec(config_path, artifact_location=artifact_location)
    out = Path(out_dir) if out_dir is not None else Path(config_path).resolve().parent / "out"
    out = out.resolve()
    endpoints, names = _select(spec, only)
    names = _order(spec, names)
    with Reporter(progress) as reporter:
        b = _Build(spec, out, reporter)
        b.preflight(names)  # raises before anything is written
        if force:
            for p in b.plan.values():
                p.record = None
        out.mkdir(parents=True, exist_ok=True)
        lock = _lock(out)
        b.cache.clean_temp()
        _clean_leftovers(out)
        result = BuildResult(manifest_path=out / MANIFEST_FILENAME, manifest=None)  # type: ignore[arg-type]
        result.skipped += sum(1 for p in b.plan.values() if p.record is not None)
        result.exported = b.export_all()
        result.skipped_models = {n: p.skip_reason for n, p in b.plan.items() if p.skip_reason}
        for n, why in result.skipped_models.items():
            b.warn(f"model '{n}' skipped (optional): {why}")
        built = [n for n in names if b.plan[n].skip_reason is None]
        samples = b.write_samples(built)
        models = {n: _model_entry(n, b.plan[n].record or {}, samples.get(n)) for n in built}
        loc = spec.artifact_location
        entries: dict[str, EndpointEntry] = {}
        uploads: list[Any] = []
        from cdk_triton.builder.export.tensorrt import check_plans
        from cdk_triton.builder.upload import UploadObject

        reporter.start("package", len(endpoints), "endpoints")
        for ep in endpoints:
            roots = [r for r in ep.models if b.plan[r].skip_reason is None]
            for r in ep.models:
                if b.plan[r].skip_reason is not None:
                    if not ep.is_multi_model:
                        raise BuildError(
                            f"endpoint '{ep.name}' needs model '{r}', which was skipped: "
                            f"{b.plan[r].skip_reason}",
                            code="TensorRTUnavailable",
                        )
                    b.warn(f"endpoint '{ep.name}': target model '{r}' left out (optional model skipped)")
            members = [n for r in roots for n in spec.closure(r)]
            archs: set[str] = set()
            for n in members:
                rec = b.plan[n].record or {}
                if rec.get("plans"):
                    check_plans(
                        rec["plans"],
                        ep.instance_types,
                        model=n,
                        triton_version=spec.triton_version,
                        max_batch_size=b.plan[n].spec.max_batch_size,
                    )
                    archs.update(p["gpu_architecture"] for p in rec["plans"])
            if ep.is_multi_model:
                entries[ep.name], objs, n_packed = _package_mme(b, ep, roots, loc.uri, samples, reporter)
            else:
                entries[ep.name], objs, n_packed = _package_sme(b, ep, roots, loc.uri, samples, reporter)
            entries[ep.name] = replace(entries[ep.name], gpu_architectures=sorted(archs))
            uploads += objs
            result.packaged += n_packed
            result.skipped += (len(roots) if ep.is_multi_model else 1) - n_packed
            reporter.advance("package", 1, what=ep.name)
        reporter.finish("package")
        ledger = out / "uploads.json"
        from cdk_triton.builder import upload as upload_mod

        prefix = f"s3://{loc.bucket}/"
        objects = [
            UploadObject(local_path=p, key=uri[len(prefix) :], sha256=sha, size=size)
            for p, uri, sha, size in uploads
        ]
        uploaded = False
        if upload:
            reporter.start("upload", sum(o.size for o in objects), "bytes")
            stats = upload_mod.upload(
                objects,
                loc,
                client=s3_client,
                ledger_path=ledger,
                progress=lambda n: reporter.advance("upload", n),
            )
            reporter.finish("upload")
            result.uploaded, result.copied = stats.uploaded, stats.copied
            result.skipped += stats.skipped
            uploaded = True
        else:
            uploaded = bool(objects) and upload_mod.all_recorded(objects, loc, ledger)
        manifest = Manifest(
            schema_version=SCHEMA_VERSION,
            triton_version=spec.triton_version,
            artifact_location=loc,
            uploaded=uploaded,
            models=models,
            endpoints=entries,
            tool_versions=b.tools,
        )
        if only is not None:
            manifest = _merge_previous(manifest, out / MANIFEST_FILENAME)
        _write_if_changed(manifest, out / MANIFEST_FILENAME)
        from cdk_triton.config.manifest import read_manifest

        result.manifest = read_manifest(out / MANIFEST_FILENAME)
        # the build succeeded: drop what neither this build nor the manifest references
        b.cache.prune(
            {(n, e.source_sha256) for n, e in result.manifest.models.items() if e.source_sha256}
            | {(n, p.key) for n, p in b.plan.items()}
        )
        _prune_outputs(out, result.manifest)
        result.warnings = list(b.warnings)
        for n in built:
            rec = b.plan[n].record or {}
            result.rows.append(
                {
                    "model": n,
                    "format": rec.get("format", ""),
                    "status": "exported" if n in b.fresh else "cached",
                    "parity": f"{rec['parity_max_abs_diff']:.2e}" if "parity_max_abs_diff" in rec else "-",
                }
            )
        for n in result.skipped_models:
            result.rows.append(
                {"model": n, "format": b.plan[n].spec.format, "status": "skipped", "parity": "-"}
            )
        lock.close()
    return result


def _lock(out: Path) -> Any:
    """One build per output directory at a time (advisory lock, released when the process dies)."""
    import fcntl

    fh = (out / ".lock").open("a")
    try:
        fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        fh.close()
        raise BuildError(
            f"another build is writing to {out}; wait for it or use another --out", code="BuildLocked"
        ) from None
    return fh


def _clean_leftovers(out: Path) -> None:
    """Remove temp files and directories a killed build left (never trusted; only space)."""
    for sub in ("sme", "mme", "samples", "cache"):
        root = out / sub
        if not root.is_dir():
            continue
        for p in sorted(root.rglob(".*"), key=lambda x: len(x.parts), reverse=True):
            if p.name.endswith((".tmp", ".old")):
                if p.is_dir():
                    shutil.rmtree(p, ignore_errors=True)
                else:
                    p.unlink(missing_ok=True)


def _prune_outputs(out: Path, manifest: Manifest) -> None:
    """Remove sample files and endpoint folders the manifest no longer references (models or
    endpoints removed from the declaration, an endpoint that changed mode)."""
    keep = {
        Path(f).name
        for m in manifest.models.values()
        if m.sample
        for f in (m.sample.request, m.sample.response)
        if f
    }
    if (out / "samples").is_dir():
        for f in (out / "samples").glob("*.json"):
            if f.name not in keep:
                f.unlink(missing_ok=True)
    for mode, multi in (("sme", False), ("mme", True)):
        if not (out / mode).is_dir():
            continue
        for d in sorted((out / mode).iterdir()):
            ep = manifest.endpoints.get(d.name)
            if d.name.startswith(".") or not d.is_dir() or (ep is not None and ep.is_multi_model == multi):
                continue
            old = d.with_name(f".{d.name}.{uuid.uuid4().hex}.old")
            os.replace(d, old)
            shutil.rmtree(old, ignore_errors=True)


def _package_sme(
    b: _Build,
    ep: EndpointSpec,
    roots: list[str],
    base_uri: str,
    samples: dict[str, Sample],
    reporter: Reporter,
) -> tuple[EndpointEntry, list[tuple[Path, str, str, int]], int]:
    members = sorted({n for r in roots for n in b.spec.closure(r)})
    key = json.dumps({n: b.plan[n].key for n in members}, sort_keys=True)
    repo = b.out / "sme" / ep.name / "repository"
    digest, files, size, rebuilt = assemble(b.model_dirs(members), repo, key=key)
    default = ep.default_model or roots[0]
    objs: list[tuple[Path, str, str, int]] = []
    if ep.packaging == "directory":
        s3_uri = f"{base_uri}sme/{ep.name}/{digest[:16]}/"
        local = repo
        objs = [
            (repo / rel, f"{s3_uri}{rel}", sha, (repo / rel).stat().st_size)
            for rel, sha in sorted(files.items())
        ]
        sha, nbytes, packed = digest, size, int(rebuilt)
    else:
        index = b.out / "sme" / ep.name / ".archive.json"
        prev = json.loads(index.read_text()) if index.is_file() else {}
        archive = b.out / "sme" / ep.name / prev.get("file", "-")
        if prev.get("tree") == digest and archive.is_file() and not rebuilt:
            sha, nbytes, packed = prev["sha256"], prev["size"], 0
        else:
            archive, sha, nbytes = pack(
                [(n, repo / n) for n in members],
                repo.parent,
                ep.name,
                progress=lambda n: reporter.advance("package", 0),
            )
            _atomic_json(index, {"tree": digest, "file": archive.name, "sha256": sha, "size": nbytes})
            _prune(repo.parent, keep={archive.name})
            packed = 1
        s3_uri = f"{base_uri}sme/{ep.name}/{archive.name}"
        local = archive
        objs = [(archive, s3_uri, sha, nbytes)]
    entry = EndpointEntry(
        name=ep.name,
        mode=ep.mode,
        instance_types=list(ep.instance_types),
        default_model=default,
        models=members,
        packaging=ep.packaging,
        local_path=os.path.relpath(local, b.out),
        s3_uri=s3_uri,
        sha256=sha,
        size_bytes=nbytes,
        sample=samples.get(default),
    )
    return entry, objs, packed


def _package_mme(
    b: _Build,
    ep: EndpointSpec,
    roots: list[str],
    base_uri: str,
    samples: dict[str, Sample],
    reporter: Reporter,
) -> tuple[EndpointEntry, list[tuple[Path, str, str, int]], int]:
    folder = b.out / "mme" / ep.name
    index_path = folder / "index.json"
    index: dict[str, Any] = json.loads(index_path.read_text()) if index_path.is_file() else {}
    prefix = f"{base_uri}mme/{ep.name}/"
    targets: dict[str, TargetModel] = {}
    objs: list[tuple[Path, str, str, int]] = []
    packed = 0
    new_index: dict[str, Any] = {}
    for r in roots:
        members = b.spec.closure(r)
        key = json.dumps({n: b.plan[n].key for n in members}, sort_keys=True)
        prev = index.get(r, {})
        archive = folder / prev.get("file", "-")
        if prev.get("key") == key and archive.is_file() and archive.stat().st_size == prev.get("size"):
            sha, size = prev["sha256"], prev["size"]
        else:
            dirs = b.model_dirs(members)
            archive, sha, size = pack([(n, dirs[n]) for n in members], folder, r)
            packed += 1
        new_index[r] = {"key": key, "file": archive.name, "sha256": sha, "size": size}
        uri = prefix + archive.name
        targets[r] = TargetModel(
            logical_name=r,
            target_model=archive.name,
            model=r,
            models=sorted(members),
            local_path=os.path.relpath(archive, b.out),
            sha256=sha,
            size_bytes=size,
            s3_uri=uri,
            sample=samples.get(r),
        )
        objs.append((archive, uri, sha, size))
    if new_index != index:
        folder.mkdir(parents=True, exist_ok=True)
        _atomic_json(index_path, new_index)
        _prune(folder, keep={v["file"] for v in new_index.values()})
    entry = EndpointEntry(
        name=ep.name,
        mode=ep.mode,
        instance_types=list(ep.instance_types),
        s3_prefix=prefix,
        target_models=targets,
        models=sorted({n for r in roots for n in b.spec.closure(r)}),
    )
    return entry, objs, packed


def _prune(folder: Path, *, keep: set[str]) -> None:
    """Remove archives of earlier builds that no declaration references any more (local files only)."""
    for p in folder.glob("*.tar.gz"):
        if p.name not in keep:
            p.unlink(missing_ok=True)


def _atomic_json(path: Path, data: Any) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_text(json.dumps(data, indent=1, sort_keys=True))
    os.replace(tmp, path)


def _merge_previous(manifest: Manifest, path: Path) -> Manifest:
    if not path.is_file():
        return manifest
    try:
        prev = manifest_from_dict(json.loads(path.read_text("utf-8")), source=str(path))
    except (TritonValidationError, json.JSONDecodeError):
        return manifest
    return replace(
        manifest,
        models={**prev.models, **manifest.models},
        endpoints={**prev.endpoints, **manifest.endpoints},
        uploaded=manifest.uploaded and prev.uploaded,
    )


def _write_if_changed(manifest: Manifest, path: Path) -> None:
    text = json.dumps(manifest.to_dict(), indent=2, sort_keys=True) + "\n"
    if path.is_file() and path.read_text("utf-8") == text:
        return
    write_manifest(manifest, path)
