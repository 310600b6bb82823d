"""Payloads for Triton's SageMaker endpoint, built and parsed with tritonclient.

JSON (``application/json``) or binary+json
(``application/vnd.sagemaker-triton.binary+json;json-header-size=N``) request bodies come from
``tritonclient.http.InferenceServerClient.generate_request_body``; responses are parsed with
``parse_response_body``. :func:`invoke_sample` sends the manifest's sample request and compares
the outputs with the sample response.
"""

from __future__ import annotations

import json
import os
import re
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from cdk_triton.config.declaration import DTYPES
from cdk_triton.config.manifest import ComponentEntry, EndpointEntry, Manifest, Sample, read_manifest
from cdk_triton.errors import TritonValidationError
from cdk_triton.local.detached import DEFAULT_STATE_DIR, read_state
from cdk_triton.local.front import FrontInvoke, Reply

BINARY_CONTENT_TYPE = "application/vnd.sagemaker-triton.binary+json"
_HEADER_SIZE = re.compile(r"json-header-size=(\d+)")


class EndpointLike(Protocol):
    """What the invoke helpers use of an endpoint: a ``LocalEndpoint`` or a :class:`FrontClient`."""

    @property
    def manifest(self) -> Manifest: ...

    @property
    def entry(self) -> EndpointEntry: ...

    @property
    def name(self) -> str: ...

    def invoke(
        self,
        body: bytes,
        content_type: str,
        target_model: str | None = None,
        accept: str | None = None,
        timeout: float = 120.0,
        component: str | None = None,
    ) -> Reply: ...


#: KServe v2 datatype -> numpy type (KServe says BYTES where model_config says STRING).
_NP = {
    ("BYTES" if name == "STRING" else name): np.dtype(np_name).type
    for name, np_name in DTYPES.items()
    if name != "BF16"
}


def tensors_from_kserve(doc: dict[str, Any], key: str = "inputs") -> dict[str, np.ndarray]:
    """``{"inputs": [{"name","shape","datatype","data"}]}`` -> name -> array."""
    out: dict[str, np.ndarray] = {}
    for t in doc.get(key, []):
        dtype = _NP.get(t["datatype"])
        if dtype is None:
            raise TritonValidationError(
                "UnsupportedDatatype",
                prop=f"{key} '{t.get('name')}' datatype",
                value=t["datatype"],
                problem="is not a KServe v2 datatype",
                allowed=", ".join(_NP),
                fix="use a KServe v2 datatype",
            )
        data = t["data"]
        if dtype is np.object_:
            arr = np.array(
                [d.encode() if isinstance(d, str) else d for d in np.array(data, dtype=object).ravel()],
                dtype=object,
            )
        else:
            arr = np.array(data, dtype=dtype)
        out[t["name"]] = arr.reshape(t["shape"])
    return out


def datatype_of(array: np.ndarray) -> str:
    """The KServe v2 / Triton datatype of a numpy array (``FP32``, ``UINT8``, ``BYTES`` ...)."""
    for name, dtype in _NP.items():
        if array.dtype == np.dtype(dtype):
            return name
    raise TritonValidationError(
        "UnsupportedDatatype",
        prop="input dtype",
        value=str(array.dtype),
        problem="has no Triton datatype",
        allowed=", ".join(_NP),
        fix="cast the input",
    )


#: KServe v2 request parameters of a sequence (tritonclient takes them as keyword arguments).
SEQUENCE_PARAMETERS = ("sequence_id", "sequence_start", "sequence_end")


def build_request(
    inputs: dict[str, np.ndarray],
    *,
    binary: bool = False,
    outputs: list[str] | None = None,
    parameters: dict[str, Any] | None = None,
) -> tuple[bytes, str]:
    """A request body and its Content-Type (JSON, or binary+json with the json-header-size parameter).

    ``parameters``: request parameters, such as a sequence's ``sequence_id`` / ``sequence_start`` /
    ``sequence_end``."""
    import tritonclient.http as httpclient

    params = dict(parameters or {})
    sequence = {k: params.pop(k) for k in SEQUENCE_PARAMETERS if k in params}

    infer_inputs = []
    for name, array in inputs.items():
        item = httpclient.InferInput(name, list(array.shape), datatype_of(array))
        item.set_data_from_numpy(array, binary_data=binary)
        infer_inputs.append(item)
    requested = [httpclient.InferRequestedOutput(n, binary_data=binary) for n in outputs] if outputs else None
    body, json_size = httpclient.InferenceServerClient.generate_request_body(
        infer_inputs, outputs=requested, parameters=params or None, **sequence
    )
    if json_size is None:
        if requested is None:  # tritonclient asks for binary outputs when none are named: JSON means JSON
            doc = json.loads(body)
            doc.setdefault("parameters", {})["binary_data_output"] = False
            body = json.dumps(doc).encode()
        return body, "application/json"
    return body, f"{BINARY_CONTENT_TYPE};json-header-size={json_size}"


def parse_response(body: bytes, content_type: str | None) -> dict[str, np.ndarray]:
    """A Triton response body (JSON or binary+json) -> output name -> array."""
    import tritonclient.http as httpclient

    match = _HEADER_SIZE.search(content_type or "")
    result = httpclient.InferenceServerClient.parse_response_body(
        body, header_length=int(match.group(1)) if match else None
    )
    names = [o["name"] for o in result.get_response().get("outputs", [])]
    return {n: result.as_numpy(n) for n in names}


@dataclass
class InvokeResult:
    """One invocation: status, outputs, latency, and the comparison with the sample response."""

    status: int
    latency_s: float
    content_type: str | None
    outputs: dict[str, np.ndarray] = field(default_factory=dict)
    error: str | None = None
    expected: dict[str, np.ndarray] | None = None
    max_abs_diff: float | None = None
    matched: bool | None = None
    target_model: str | None = None
    component: str | None = None

    @property
    def ok(self) -> bool:
        return self.status == 200 and self.matched is not False

    def __str__(self) -> str:
        head = f"HTTP {self.status} in {self.latency_s * 1e3:.1f} ms"
        if self.error:
            return f"{head}: {self.error[:500]}"
        shapes = ", ".join(f"{n} {list(a.shape)}" for n, a in self.outputs.items())
        if self.matched is None:
            check = "no sample response to compare"
        else:
            verdict = "matches" if self.matched else "DIFFERS FROM"
            check = f"{verdict} the sample response (max |diff| {self.max_abs_diff:.3g})"
        top = "; ".join(f"top-1 {n}: class {v[0][0]} ({v[0][1]:.4g})" for n, v in self.top_k(1).items() if v)
        return f"{head}, {shapes}, {check}" + (f"; {top}" if top else "")

    def top_k(self, k: int = 5) -> dict[str, list[tuple[int, float]]]:
        """For each 2-D float output (a classifier's logits): the top-k (class, score) of the first row."""
        out = {}
        for name, arr in self.outputs.items():
            if arr.dtype.kind == "f" and arr.ndim == 2:
                row = arr[0]
                idx = np.argsort(row)[::-1][:k]
                out[name] = [(int(i), float(row[i])) for i in idx]
        return out


def compare_outputs(
    got: dict[str, np.ndarray], expected: dict[str, np.ndarray], *, atol: float, rtol: float
) -> tuple[bool, float]:
    """Every expected output present with the same shape and within atol + rtol*|expected|."""
    worst = 0.0
    ok = True
    for name, exp in expected.items():
        arr = got.get(name)
        if arr is None or arr.shape != exp.shape:
            return False, float("inf")
        if exp.dtype == np.object_:
            ok &= bool(np.array_equal(arr, exp))
            continue
        diff = np.abs(arr.astype(np.float64) - exp.astype(np.float64))
        worst = max(worst, float(diff.max()) if diff.size else 0.0)
        ok &= bool(np.all(diff <= atol + rtol * np.abs(exp.astype(np.float64))))
    return ok, worst


def resolve_component(entry: EndpointEntry, component: str | None) -> ComponentEntry:
    """The component ``component`` names (its logical name or component name) on an InferenceComponents
    endpoint: ``ComponentOnOtherEndpoint``, ``ComponentRequired`` or ``UnknownInferenceComponent`` otherwise."""
    if not entry.hosting_mode.components:
        raise TritonValidationError(
            "ComponentOnOtherEndpoint",
            prop="component",
            value=component,
            problem=f"was given for {entry.mode} endpoint '{entry.name}'",
            allowed="an InferenceComponents endpoint",
            fix="drop --component (an MME takes --target-model)",
        )
    allowed = ", ".join(f"{k} ({v})" for k, v in entry.component_map().items())
    if not component:
        raise TritonValidationError(
            "ComponentRequired",
            prop="component",
            value=component,
            problem=f"is required for components endpoint '{entry.name}'",
            allowed=allowed,
            fix="pass --component with a logical name or component name from the manifest",
        )
    found = entry.find_component(component)
    if found is None:
        raise TritonValidationError(
            "UnknownInferenceComponent",
            prop="component",
            value=component,
            problem=f"is not a component of endpoint '{entry.name}'",
            allowed=allowed,
            fix="pass --component with a logical name or component name from the manifest",
        )
    return found


def resolve_sample(
    endpoint: EndpointLike, target_model: str | None, component: str | None = None
) -> tuple[Sample, str | None]:
    """The manifest sample for an endpoint (SME), a target model (MME) or a component, and the header
    (TargetModel, or the component's InferenceComponentName)."""
    entry, manifest = endpoint.entry, endpoint.manifest
    if component is not None or entry.hosting_mode.components:
        c = resolve_component(entry, component)
        archive = entry.target_models[c.target_model]
        sample = archive.sample or (
            manifest.models[archive.model].sample if archive.model in manifest.models else None
        )
        if sample is None:
            raise TritonValidationError(
                "NoSample",
                prop="sample",
                value=component,
                problem="has no sample request in the manifest",
                allowed="a model declared with a sample",
                fix="declare a sample in build/models.yaml, or pass --input FILE",
            )
        return sample, c.component_name
    if target_model is not None:
        if not entry.hosting_mode.loads_on_demand:
            raise TritonValidationError(
                "TargetModelOnSingleModelEndpoint",
                prop="target_model",
                value=target_model,
                problem=f"was given for single-model endpoint '{entry.name}'",
                allowed="None",
                fix="drop --target-model",
            )
        tm = next((t for k, t in entry.target_models.items() if target_model in (k, t.target_model)), None)
        if tm is None:
            raise TritonValidationError(
                "UnknownTargetModel",
                prop="target_model",
                value=target_model,
                problem=f"is not a model of endpoint '{entry.name}'",
                allowed=", ".join(sorted(entry.target_models)),
                fix="use a logical name from the manifest",
            )
        sample = tm.sample or (manifest.models[tm.model].sample if tm.model in manifest.models else None)
        header: str | None = tm.target_model
    else:
        if entry.hosting_mode.loads_on_demand:
            raise TritonValidationError(
                "TargetModelRequired",
                prop="target_model",
                value=None,
                problem=f"is required for multi-model endpoint '{entry.name}'",
                allowed=", ".join(sorted(entry.target_models)),
                fix="pass --target-model NAME",
            )
        model = entry.default_model
        sample = entry.sample or (
            manifest.models[model].sample if model and model in manifest.models else None
        )
        header = None
    if sample is None:
        raise TritonValidationError(
            "NoSample",
            prop="sample",
            value=target_model or entry.name,
            problem="has no sample request in the manifest",
            allowed="a model declared with a sample",
            fix="declare a sample in build/models.yaml, or pass --input FILE",
        )
    return sample, header


def invoke_sample(
    endpoint: EndpointLike,
    target_model: str | None = None,
    binary: bool = False,
    component: str | None = None,
) -> InvokeResult:
    """Send the manifest's sample request through the front and compare with the sample response.

    Args:
        endpoint: a started LocalEndpoint.
        target_model: MME: the logical name (or hashed TargetModel value). SME: None.
        binary: send binary+json instead of JSON (outputs requested as binary too).
        component: InferenceComponents: the component's logical name or component name (sent as
            the manifest's component name).
    """
    sample, header = resolve_sample(endpoint, target_model, component)
    if endpoint.entry.hosting_mode.components:
        target_model, component = None, header
        header = None
    request = json.loads(endpoint.manifest.resolve(sample.request).read_text())
    expected = None
    if sample.response:
        expected = tensors_from_kserve(
            json.loads(endpoint.manifest.resolve(sample.response).read_text()), "outputs"
        )
    return invoke_tensors(
        endpoint,
        tensors_from_kserve(request),
        target_model=header,
        component=component,
        binary=binary,
        expected=expected,
        atol=sample.atol if sample.atol is not None else 1e-5,
        rtol=sample.rtol if sample.rtol is not None else 1e-4,
        outputs=[o["name"] for o in request.get("outputs", [])] or None,
        parameters=request.get("parameters"),
    )


def invoke_file(
    endpoint: EndpointLike,
    path: Path,
    *,
    target_model: str | None = None,
    binary: bool = False,
    component: str | None = None,
) -> InvokeResult:
    """Send a KServe v2 JSON request body read from ``path`` (its ``outputs`` names are requested).

    ``target_model`` on a multi-model endpoint: the logical name (sent as its hashed TargetModel
    value) or the TargetModel value itself.
    """
    doc = json.loads(path.read_text())
    header = None
    if target_model is not None and endpoint.entry.hosting_mode.loads_on_demand:
        target = endpoint.entry.target_models.get(target_model)
        header = target.target_model if target else target_model
    if component is not None and endpoint.entry.hosting_mode.components:
        found = endpoint.entry.find_component(component)
        component = found.component_name if found else component
    return invoke_tensors(
        endpoint,
        tensors_from_kserve(doc),
        target_model=header,
        component=component,
        binary=binary,
        outputs=[o["name"] for o in doc.get("outputs", [])] or None,
    )


def invoke_tensors(
    endpoint: EndpointLike,
    inputs: dict[str, np.ndarray],
    *,
    target_model: str | None = None,
    binary: bool = False,
    expected: dict[str, np.ndarray] | None = None,
    atol: float = 1e-5,
    rtol: float = 1e-4,
    outputs: list[str] | None = None,
    parameters: dict[str, Any] | None = None,
    component: str | None = None,
) -> InvokeResult:
    """Send tensors through the front; parse and (optionally) compare the outputs.

    ``component``: the InferenceComponentName header (an InferenceComponents endpoint)."""
    body, content_type = build_request(inputs, binary=binary, outputs=outputs, parameters=parameters)
    t0 = time.perf_counter()
    if component is not None:
        status, headers, data = endpoint.invoke(
            body, content_type, target_model=target_model, component=component
        )
    else:
        status, headers, data = endpoint.invoke(body, content_type, target_model=target_model)
    latency = time.perf_counter() - t0
    result = InvokeResult(
        status=status,
        latency_s=latency,
        content_type=headers.get("content-type"),
        target_model=target_model,
        component=component,
    )
    if status != 200:
        result.error = data.decode(errors="replace")
        return result
    result.outputs = parse_response(data, headers.get("content-type"))
    if expected is not None:
        result.expected = expected
        result.matched, result.max_abs_diff = compare_outputs(result.outputs, expected, atol=atol, rtol=rtol)
    return result


class FrontClient(FrontInvoke):
    """A started local endpoint seen from another process (``cdk-triton invoke``): manifest + front URL.

    An :class:`EndpointLike` (``manifest``, ``entry``, ``name``, ``invoke``), so a detached ``serve``
    is invoked the same way as a LocalEndpoint.
    """

    def __init__(self, manifest: Any, endpoint: str, url: str):
        self.manifest = manifest
        self.entry = manifest.endpoint(endpoint)
        self.name = endpoint
        self.url = url

    @classmethod
    def detached(
        cls,
        endpoint: str,
        *,
        state_dir: str | os.PathLike[str] = DEFAULT_STATE_DIR,
        url: str | None = None,
        manifest: str | os.PathLike[str] | None = None,
    ) -> FrontClient:
        """The client of an endpoint started with ``serve --detach``, from its state file.

        ``url`` and ``manifest`` override the state file's; given both, no state file is read
        (``LocalEndpointNotRunning`` when one is needed and there is none).
        """
        state = None if (url and manifest) else read_state(state_dir, endpoint)
        manifest_path = manifest or (state.manifest if state else "")
        return cls(read_manifest(manifest_path), endpoint, url or (state.url if state else ""))


class AsyncClient:
    """An asynchronous endpoint seen as an :class:`EndpointLike`: ``invoke`` puts the body under
    ``async/<endpoint>/input/`` of the location (``local.endpoint.async_base``: a folder or ``s3://``),
    calls boto3 ``invoke_endpoint_async`` on the front and waits for the output (or failure) object, so
    ``invoke_sample`` / ``invoke_file`` serve ``cdk-triton invoke --async`` unchanged.

    Args:
        endpoint: a started endpoint or a :class:`FrontClient` (``manifest``, ``entry``, ``name``, ``url``).
        location: where ``serve`` writes (its ``--async-location``). Default: the manifest's folder.
        timeout_s: how long to wait for the output. Default: the endpoint's invocation timeout + 10 s.
    """

    def __init__(self, endpoint: Any, *, location: str | None = None, timeout_s: float | None = None):
        from cdk_triton.config import async_inference

        self.inner = endpoint
        self.manifest, self.entry, self.name = endpoint.manifest, endpoint.entry, endpoint.name
        self.url = endpoint.url
        self.location = location
        values = self.entry.async_inference
        limit = values.invocation_timeout_s if values and values.invocation_timeout_s else None
        self.timeout_s = timeout_s or float(limit or async_inference.DEFAULT_INVOCATION_TIMEOUT_S) + 10.0
        self.last: dict[str, str] = {}  # the last invocation's InferenceId, OutputLocation, FailureLocation

    def invoke(
        self, body: bytes, content_type: str, target_model: str | None = None, **_: Any
    ) -> tuple[int, dict[str, str], bytes]:
        """(200, headers, the output object) or (500, headers, the failure object / the timeout)."""
        import uuid

        import boto3

        from cdk_triton.config import layout
        from cdk_triton.local.endpoint import async_base
        from cdk_triton.local.front import read_location, write_location

        base = async_base(self.manifest, self.location)
        inference_id = f"invoke-{uuid.uuid4().hex[:16]}"
        input_uri = base + layout.async_input_key(self.name) + f"{inference_id}.bin"
        write_location(input_uri, body)
        runtime = boto3.client(
            "sagemaker-runtime",
            endpoint_url=self.url.split("/endpoints/")[0],
            region_name="us-east-1",
            aws_access_key_id="x",
            aws_secret_access_key="x",
        )
        resp = runtime.invoke_endpoint_async(
            EndpointName=self.name,
            InputLocation=input_uri,
            ContentType=content_type,
            InferenceId=inference_id,
        )
        self.last = {
            "InferenceId": resp["InferenceId"],
            "OutputLocation": resp["OutputLocation"],
            "FailureLocation": resp.get("FailureLocation", ""),
        }
        end, delay = time.monotonic() + self.timeout_s, 0.05
        while True:
            for key, status in (("OutputLocation", 200), ("FailureLocation", 500)):
                if not self.last[key]:
                    continue
                try:
                    data = read_location(self.last[key])
                except FileNotFoundError:  # not written yet (a folder)
                    continue
                except Exception as exc:  # not written yet in S3 (NoSuchKey); anything else is raised
                    if "NoSuchKey" not in str(exc):
                        raise
                    continue
                kind = "application/json" if status == 200 else "text/plain"
                return status, {"content-type": kind}, data
            if time.monotonic() + delay > end:
                text = f"no output at {self.last['OutputLocation']} within {self.timeout_s:.0f} s"
                return 504, {"content-type": "text/plain"}, text.encode()
            time.sleep(delay)
            delay = min(delay * 2, 1.0)
