"""Where measurements come from: the local endpoint here, or a SageMaker tuning endpoint on the target GPU.

- :class:`LocalSource`: each variant goes through the normal build stage (``run_build``) and is served
  by the local endpoint (the real Triton server, CPU stand-ins for the framework backends), driven by
  the same asyncio load generator as ``cdk-triton bench`` with binary payloads.
- :class:`EndpointSource`: every variant is a TargetModel of one multi-model tuning endpoint deployed
  once on the target instance type (:func:`tuning_declaration` writes its ``models.yaml``); requests go
  through boto3's ``invoke_endpoint`` from a pool of closed-loop clients. Point ``endpoint_url`` at
  ``cdk-triton serve`` to run it here.

Both give a warm-up phase (excluded) before each measured phase.
"""

from __future__ import annotations

import contextlib
import copy
import json
import os
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from cdk_triton.builder import run_build
from cdk_triton.config import formats, layout, modes
from cdk_triton.config.declaration.view import RawDeclaration
from cdk_triton.config.manifest import Manifest, read_manifest
from cdk_triton.errors import TritonValidationError
from cdk_triton.local import CpuOverlay, LocalEndpoint
from cdk_triton.local.client import build_request, tensors_from_kserve
from cdk_triton.local.load import LoadResult, run_load
from cdk_triton.tune.apply import apply_variant, dump_document, load_document
from cdk_triton.tune.objective import Measurement
from cdk_triton.tune.variants import Variant, find_model


@dataclass
class Target:
    """What one variant is measured through: a callable that runs one closed-loop phase."""

    run: Callable[[int, int], LoadResult]  # (concurrency, requests) -> result
    instances: int = 1


class Source(Protocol):
    kind: str

    def skip_reason(self, variant: Variant) -> str | None: ...

    def open(self, variant: Variant) -> contextlib.AbstractContextManager[Target]: ...


def run_phase(
    target: Target, variant: Variant, concurrency: int, repeat: int, seconds: float, kind: str
) -> Measurement:
    """A warm-up sized to the concurrency, then a phase of about ``seconds`` (from the warm-up's rate)."""
    warm = target.run(concurrency, max(2 * concurrency, 8))
    rate = warm.throughput or 1.0
    requests = max(4 * concurrency, int(rate * seconds))
    res = target.run(concurrency, requests)
    s = res.summary()
    return Measurement(
        variant=variant.name,
        concurrency=concurrency,
        repeat=repeat,
        requests=res.requests,
        errors=res.errors,
        throughput_rps=res.throughput,
        p50_ms=res.percentile(50) * 1e3,
        p90_ms=res.percentile(90) * 1e3,
        p99_ms=res.percentile(99) * 1e3,
        client_cores=float(s["client_cores"]),
        source=kind,
        instances=target.instances,
    )


# ------------------------------------------------------------------------------------------- local


class LocalSource:
    """Build each variant with the build stage and serve it on the local endpoint (one at a time)."""

    kind = "local"

    def __init__(self, config: Path, model: str, *, out_dir: Path, binary: bool = True) -> None:
        self.config = Path(config)
        self.model = model
        self.out_dir = Path(out_dir)
        self.binary = binary
        self.base = load_document(self.config)

    def skip_reason(self, variant: Variant) -> str | None:
        if any(formats.is_gpu_only(c.get("format")) for c in variant.changes.values()):
            return "TensorRT plans need a GPU: measure this variant on the target instance (--endpoint-name)"
        return None

    @contextlib.contextmanager
    def open(self, variant: Variant) -> Iterator[Target]:
        manifest = self._build(variant)
        counts = [
            int((c.get("instance_groups") or [{}])[0].get("count", 1)) for c in variant.changes.values()
        ]
        count = max(counts or [1])
        overlay = CpuOverlay(instance_count=count, python_instance_count=count)
        with LocalEndpoint(manifest, "tune", overlay=overlay) as ep:
            entry = manifest.endpoint("tune")
            assert entry.sample is not None
            request = json.loads(manifest.resolve(entry.sample.request).read_text())
            body, ctype = build_request(tensors_from_kserve(request), binary=self.binary)

            def run(concurrency: int, requests: int) -> LoadResult:
                return run_load(ep.url, "tune", body, ctype, concurrency=concurrency, requests=requests)

            yield Target(run, instances=1)

    def _build(self, variant: Variant) -> Manifest:
        """The variant's declaration, one SME endpoint ``tune`` serving the model, built incrementally."""
        doc = copy.deepcopy(self.base)
        apply_variant(doc, variant)
        doc["endpoints"] = [
            {
                "name": "tune",
                "mode": modes.SINGLE_MODEL.name,
                "instance_types": _instance_types(self.base),
                "models": [self.model],
                "default_model": self.model,
            }
        ]
        # factory references resolve against the declaration's directory: the variant file sits beside it
        path = self.config.parent / f".{self.config.stem}.tune-{os.getpid()}.yaml"
        path.write_text(dump_document(doc), encoding="utf-8")
        try:
            result = run_build(path, out_dir=self.out_dir, only="tune", progress=False)
        finally:
            path.unlink(missing_ok=True)
        return read_manifest(result.manifest_path)


def _instance_types(doc: Mapping[str, Any]) -> list[str]:
    view = RawDeclaration(doc)
    for ep in view.endpoints:
        if types := view.instance_types(ep):
            return types
    return ["ml.g5.xlarge"]


# ---------------------------------------------------------------------------------------- endpoint


def tuning_declaration(
    doc: Any,
    model: str,
    variants: Sequence[Variant],
    *,
    endpoint_name: str,
    instance_type: str,
    mode: str = modes.MULTI_MODEL.name,
) -> Any:
    """A ``models.yaml`` whose one endpoint serves every variant: as its own TargetModel of a multi-model
    endpoint, or (``mode="InferenceComponents"``) as its own inference component, each variant then measured
    on its own reserved accelerator (no MME cache shared between variants, no eviction during a sweep).

    Every variant's models are renamed ``<variant>`` (the tuned model) and ``<step>__<variant suffix>``
    (ensemble steps, with the ensemble's step references renamed to match), so one build writes them all.
    """
    base = copy.deepcopy(doc)
    top = find_model(base, model)
    models = []
    for v in variants:
        suffix = v.name.split("__", 1)[-1]
        vdoc = copy.deepcopy(base)
        apply_variant(vdoc, v)
        renames = {m: f"{m}__{suffix}" for m in v.changes if m != model}
        renames[model] = v.name
        by_name = {str(e.get("name")): e for e in vdoc.get("models") or []}
        for old, new in renames.items():
            entry = by_name[old]
            entry["name"] = new
            if formats.is_composed(entry.get("format")):
                for step in entry.get("steps") or []:
                    step["model"] = renames.get(str(step["model"]), step["model"])
            models.append(entry)
        if formats.is_composed(top.get("format")) and model not in v.changes:
            entry = by_name[model]
            entry["name"] = v.name
            for step in entry.get("steps") or []:
                step["model"] = renames.get(str(step["model"]), step["model"])
            models.append(entry)
    base["models"] = models
    base["endpoints"] = [
        {
            "name": endpoint_name,
            "mode": mode,
            "instance_types": [instance_type],
            "models": [v.name for v in variants],
        }
    ]
    return base


@dataclass
class EndpointSource:
    """Drive the TargetModels of a deployed tuning endpoint through boto3 (or ``cdk-triton serve``)."""

    endpoint_name: str
    manifest: Manifest
    endpoint_url: str | None = None
    region_name: str | None = None
    instances: int = 1
    kind: str = "endpoint"
    _client: Any = field(default=None, repr=False)

    def skip_reason(self, variant: Variant) -> str | None:
        entry = self.manifest.endpoint(self.endpoint_name)
        if variant.name not in entry.target_models:
            return f"variant {variant.name} is not a TargetModel of {self.endpoint_name} (rebuild the tuning declaration)"
        return None

    def client(self) -> Any:
        if self._client is None:
            import boto3
            from botocore.config import Config

            cfg = Config(max_pool_connections=256, retries={"max_attempts": 1}, read_timeout=70)
            self._client = boto3.client(
                "sagemaker-runtime", endpoint_url=self.endpoint_url, region_name=self.region_name, config=cfg
            )
        return self._client

    @contextlib.contextmanager
    def open(self, variant: Variant) -> Iterator[Target]:
        entry = self.manifest.endpoint(self.endpoint_name)
        tm = entry.target_models[variant.name]
        # a components tuning endpoint: the variant is the component the constructs name on that endpoint
        component = (
            layout.component_name(self.endpoint_name, variant.name) if entry.hosting_mode.components else None
        )
        if tm.sample is None:
            raise TritonValidationError(
                "TuneNoSample",
                prop="--model",
                value=variant.name,
                problem="has no recorded sample request in the tuning manifest",
                allowed="a model built with samples",
                fix="rebuild the tuning declaration with cdk-triton build",
            )
        request = json.loads(self.manifest.resolve(tm.sample.request).read_text())
        body, ctype = build_request(tensors_from_kserve(request), binary=True)
        client = self.client()

        def run(concurrency: int, requests: int) -> LoadResult:
            return closed_loop(
                lambda: _invoke(client, self.endpoint_name, tm.target_model, body, ctype, component),
                concurrency,
                requests,
            )

        yield Target(run, instances=self.instances)


def _invoke(
    client: Any,
    endpoint: str,
    target_model: str,
    body: bytes,
    content_type: str,
    component: str | None = None,
) -> str | None:
    from botocore.exceptions import BotoCoreError, ClientError

    route = {"InferenceComponentName": component} if component else {"TargetModel": target_model}
    try:
        resp = client.invoke_endpoint(EndpointName=endpoint, Body=body, ContentType=content_type, **route)
        resp["Body"].read()
        return None
    except (ClientError, BotoCoreError) as exc:
        return str(exc)[:300]


def closed_loop(invoke: Callable[[], str | None], concurrency: int, requests: int) -> LoadResult:
    """``concurrency`` threads each sending the next request when the last answered (closed loop)."""
    out = LoadResult()
    lock = threading.Lock()
    remaining = [requests]

    def client() -> None:
        while True:
            with lock:
                if remaining[0] <= 0:
                    return
                remaining[0] -= 1
            t0 = time.perf_counter()
            err = invoke()
            dt = time.perf_counter() - t0
            with lock:
                if err is None:
                    out.latencies.append(dt)
                else:
                    out.errors += 1
                    out.first_error = out.first_error or err

    cpu0 = time.process_time()
    t0 = time.perf_counter()
    threads = [threading.Thread(target=client, daemon=True) for _ in range(concurrency)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    out.wall_s = time.perf_counter() - t0
    out.client_cpu_s = time.process_time() - cpu0
    return out


__all__ = [
    "EndpointSource",
    "LocalSource",
    "Source",
    "Target",
    "closed_loop",
    "tuning_declaration",
    "run_phase",
]
