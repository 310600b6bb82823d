"""Deploy verification: invoke every model of a SageMaker Triton endpoint and compare with the build.

Plain Python and boto3 only (shipped as a CDK asset; imports nothing of cdk_triton). Three entry
points share one verification:

- ``handler(event, context)`` as a CloudFormation custom resource (``RequestType`` in the event): Create
  verifies and answers SUCCESS or FAILED; Update and Delete never verify and always succeed, so a
  rollback or a cleanup can never be blocked (the resource gets a new logical id whenever what it
  verifies changes, so every verification is a Create; see ``lifecycle`` below).
- ``handler(event, context)`` invoked directly (a pipeline's post-deployment step): returns the report,
  raises ``VerificationFailed`` when a model answers wrong.
- ``python index.py --spec spec.json`` (a CodeBuild step): prints the report, exit 1 on failure.

The verification spec (CloudFormation ``ResourceProperties`` or the direct event)::

    {"EndpointName": "classifier", "Routing": "default_model" | "target_model" | "component",
     "Checks": [{"Model": "classifier", "Request": "s3://b/k.request.json",
                 "Response": "s3://b/k.response.json", "Atol": 1e-4, "Rtol": 1e-3}],
     "TargetModelParameterPath": "/cdk-triton/multi/target-models",   # target_model: the name map
     "WarmUp": ["bert"],                                             # TargetModels invoked first
     "Components": {"classifier": "app-ics-classifier"},             # components: logical -> real name
     "ComponentNameParameterPath": "/cdk-triton/ics/components",     # or the published name map
     "DeadlineSeconds": 600}

``Routing`` (optional) says how a request reaches each model: the endpoint's default model
(``/invocations``), a ``TargetModel`` header from the published map, or an ``InferenceComponentName``.
Without it (what the constructs and the pipeline write: their templates stay as they were), the keys given
say it: ``TargetModelParameterPath`` routes by TargetModel, ``Components`` / ``ComponentNameParameterPath``
by inference component, else the default model. The handler knows routes, not hosting modes: other keys
(the ``Mode`` the constructs still write, for one) are ignored.

An asynchronous endpoint (``Async`` "true") does not answer ``InvokeEndpoint``: each check's request is put
under ``AsyncInputPrefix`` (``s3://bucket/prefix/async/<endpoint>/input/``), the endpoint is invoked with
``InvokeEndpointAsync`` (``InputLocation``, ``InvocationTimeoutSeconds`` when given) and the handler polls
the ``OutputLocation`` and ``FailureLocation`` SageMaker answers with (under ``AsyncOutputPrefix`` /
``AsyncFailurePrefix``) until the deadline; the output is compared as a synchronous answer is, a failure
object fails the check with its text. An endpoint scaled to zero starts an instance for the request
(``HasBacklogWithoutCapacity``): the deadline has to cover that start.

A fleet-sized MME keeps its checks in S3 instead (``ChecksUri`` + ``ChecksSha256`` replace ``Checks``):
the object lists every TargetModel's check with ``Sampled`` (chosen at synth: every changed one plus a
share of the others, capped by what the instances' cache holds) and the handler runs the sampled ones,
``Parallelism`` at a time, each started only while the deadline leaves time for it; the report and the
custom resource's ``Data`` say what was checked of how many, and what was skipped and why.

Lifecycle: CloudFormation creates the verification resource after the endpoint update, with a new
logical and physical id for each new model data or endpoint config. A wrong answer fails the Create;
the rollback then sends Delete for that new resource (always SUCCESS) while the endpoint goes back to
its previous config: the stack ends in UPDATE_ROLLBACK_COMPLETE. A success leaves the old resource to
the cleanup phase, which again only sends Delete.

Routing by inference component (:func:`verify_component`): each check's model is invoked with its component's
``InferenceComponentName``. A component that autoscaling has scaled in to zero copies
(``DescribeInferenceComponent``: ``RuntimeConfig.CurrentCopyCount`` 0) is skipped and reported as
skipped, never invoked: the invocation would fail and start a scale-out from zero (minutes, beyond most
deadlines, and a cost the deployment did not ask for). A component whose copy count cannot be read
(no permission, no control plane: the local endpoint) is invoked.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import sys
import time
import urllib.request
import uuid
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from typing import Any

import boto3
from botocore.config import Config
from botocore.exceptions import BotoCoreError, ClientError

#: Errors of InvokeEndpoint that mean "not yet" (models loading, instances starting): retried.
RETRYABLE_CODES = frozenset(
    {
        "ModelNotReadyException",
        "ServiceUnavailable",
        "ThrottlingException",
        "InternalFailure",
        "InternalDependencyException",
    }
)
#: Seconds kept in hand before the Lambda's own timeout, to answer CloudFormation in every case.
ANSWER_RESERVE_S = 15.0
DEFAULT_DEADLINE_S = 600.0
#: Checks run at once (threads: each waits on the endpoint); ``Parallelism`` in the spec overrides it.
DEFAULT_PARALLELISM = 8
#: A check is started only while at least this many seconds are left before the deadline (each
#: started check makes one attempt at least; retries stop at the deadline).
MIN_CHECK_S = 1.0
#: CloudFormation refuses a response body over 4 KiB; the reason is cut to fit.
REASON_LIMIT = 3000


class VerificationFailed(Exception):
    """At least one model of the endpoint did not answer as recorded at build time."""


@dataclass(frozen=True)
class Check:
    model: str
    request: str
    response: str
    atol: float = 1e-5
    rtol: float = 1e-4


@dataclass(frozen=True)
class Spec:
    endpoint_name: str
    routing: str  # one of ROUTINGS
    checks: tuple[Check, ...]
    target_model_parameter_path: str | None = None
    warm_up: tuple[str, ...] = ()
    deadline_s: float = DEFAULT_DEADLINE_S
    components: tuple[tuple[str, str], ...] = ()  # ROUTE_COMPONENT: (logical name, component name)
    component_name_parameter_path: str | None = None
    checks_uri: str | None = None  # the checks in S3 (fleet-sized MME) instead of ``checks``
    checks_sha256: str | None = None
    parallelism: int = DEFAULT_PARALLELISM
    total: int | None = None  # TargetModels with a check (the S3 spec's count; else len(checks))
    not_sampled: int = 0  # checks the synth-time sample left out
    async_prefixes: tuple[str, str, str] | None = None  # Async: input, output, failure s3:// prefixes
    invocation_timeout_s: int | None = None  # Async: InvocationTimeoutSeconds


@dataclass
class Outcome:
    model: str
    ok: bool
    detail: str
    attempts: int = 0
    target_model: str | None = None
    component: str | None = None
    skipped: bool = False


@dataclass
class Report:
    endpoint_name: str
    outcomes: list[Outcome] = field(default_factory=list)
    total: int = 0
    skipped: dict[str, int] = field(default_factory=dict)  # why -> how many were not checked

    def coverage(self) -> str:
        """``checked C of T; skipped: N why, ...`` (a line for the log and the response Data)."""
        text = f"checked {len(self.outcomes)} of {max(self.total, len(self.outcomes))}"
        skipped = ", ".join(f"{n} {why}" for why, n in sorted(self.skipped.items()) if n)
        return text + (f"; skipped: {skipped}" if skipped else "")

    @property
    def ok(self) -> bool:
        return bool(self.outcomes) and all(o.ok for o in self.outcomes)

    def summary(self) -> str:
        bad = [o for o in self.outcomes if not o.ok]
        if not self.outcomes:
            return f"endpoint {self.endpoint_name}: nothing was verified"
        skipped = [o for o in self.outcomes if o.skipped]
        cover = f" ({self.coverage()})" if self.total > len(self.outcomes) else ""
        if not bad:
            answered = len(self.outcomes) - len(skipped)
            head = f"endpoint {self.endpoint_name}: {answered} model(s) answered as recorded{cover}"
            if skipped:
                head += f"; {len(skipped)} skipped: " + "; ".join(f"{o.model}: {o.detail}" for o in skipped)
            return head
        lines = [
            f"endpoint {self.endpoint_name}: {len(bad)} of {len(self.outcomes)} model(s) failed verification{cover}"
        ]
        lines += [
            f"- {o.model}{f' (TargetModel {o.target_model})' if o.target_model else ''}"
            f"{f' (InferenceComponent {o.component})' if o.component else ''}: {o.detail}"
            for o in bad
        ]
        return "\n".join(lines)

    def to_dict(self) -> dict[str, Any]:
        return {
            "EndpointName": self.endpoint_name,
            "Ok": self.ok,
            "Coverage": {"Checked": len(self.outcomes), "Total": self.total, "Skipped": dict(self.skipped)},
            "Models": [
                {
                    "Model": o.model,
                    "Ok": o.ok,
                    "Detail": o.detail,
                    "Attempts": o.attempts,
                    "TargetModel": o.target_model,
                    "InferenceComponent": o.component,
                    "Skipped": o.skipped,
                }
                for o in self.outcomes
            ],
        }


# ---------------------------------------------------------------------------------------------- spec


#: How a request reaches a model: the endpoint's default model, a TargetModel header, a component name.
ROUTE_DEFAULT_MODEL = "default_model"
ROUTE_TARGET_MODEL = "target_model"
ROUTE_COMPONENT = "component"
ROUTINGS = (ROUTE_DEFAULT_MODEL, ROUTE_TARGET_MODEL, ROUTE_COMPONENT)


def routing_of(props: dict[str, Any]) -> str:
    """The routing the spec's keys imply when it names none (see the module docstring)."""
    if props.get("TargetModelParameterPath"):
        return ROUTE_TARGET_MODEL
    if props.get("Components") or props.get("ComponentNameParameterPath"):
        return ROUTE_COMPONENT
    return ROUTE_DEFAULT_MODEL


def parse_spec(props: dict[str, Any]) -> Spec:
    """The verification spec from resource properties (CloudFormation passes every value as a string)."""
    problems: list[str] = []
    name = props.get("EndpointName")
    if not isinstance(name, str) or not name:
        problems.append("EndpointName: a non-empty endpoint name is required")
    routing = props.get("Routing") or routing_of(props)
    if routing not in ROUTINGS:
        problems.append(f"Routing: {routing!r} is not one of {', '.join(repr(r) for r in ROUTINGS)}")
    uri, digest = props.get("ChecksUri") or None, props.get("ChecksSha256") or None
    raw_checks = props.get("Checks")
    if uri is not None:
        if not str(uri).startswith("s3://") or not digest:
            problems.append("ChecksUri: an s3:// URI with its ChecksSha256 is required")
        raw_checks = []
    elif not isinstance(raw_checks, list) or not raw_checks:
        problems.append("Checks: at least one model with a recorded sample is required (build with samples)")
        raw_checks = []
    checks, check_problems = parse_checks(raw_checks)
    problems += check_problems
    path = props.get("TargetModelParameterPath") or None
    if routing == ROUTE_TARGET_MODEL and not path:
        problems.append(
            "TargetModelParameterPath: routing by TargetModel needs the SSM path of the TargetModel map"
        )
    deadline, parallelism = _spec_tail(props, problems)
    warm = props.get("WarmUp") or []
    components, component_path = _component_spec(props, routing, problems)
    prefixes, invocation_timeout = _async_spec(props, routing, problems)
    if problems:
        raise ValueError("invalid verification spec: " + "; ".join(problems))
    return Spec(
        str(name),
        str(routing),
        tuple(checks),
        path,
        tuple(str(w) for w in warm),
        deadline,
        components=components,
        component_name_parameter_path=component_path,
        checks_uri=str(uri) if uri else None,
        checks_sha256=str(digest) if digest else None,
        parallelism=parallelism,
        async_prefixes=prefixes,
        invocation_timeout_s=invocation_timeout,
    )


def _async_spec(
    props: dict[str, Any], routing: Any, problems: list[str]
) -> tuple[tuple[str, str, str] | None, int | None]:
    """``Async`` "true": the three ``s3://`` prefixes and ``InvocationTimeoutSeconds`` (optional)."""
    if str(props.get("Async", "false")).lower() != "true":
        return None, None
    if routing != ROUTE_DEFAULT_MODEL:
        problems.append(
            f"Async: asynchronous verification is for an endpoint routed to its default model, not {routing!r}"
        )
    names = ("AsyncInputPrefix", "AsyncOutputPrefix", "AsyncFailurePrefix")
    found = [str(props.get(n) or "") for n in names]
    for n, v in zip(names, found, strict=True):
        if not v.startswith("s3://") or "/" not in v[len("s3://") :]:
            problems.append(f"{n}: an s3://bucket/prefix/ location is required for an asynchronous endpoint")
    timeout = None
    if props.get("InvocationTimeoutSeconds") not in (None, ""):
        try:
            timeout = int(props["InvocationTimeoutSeconds"])
        except (TypeError, ValueError):
            timeout = 0
        if not 1 <= timeout <= 3600:
            problems.append(
                f"InvocationTimeoutSeconds: {props['InvocationTimeoutSeconds']!r} is not 1..3600 seconds"
            )
    return (found[0], found[1], found[2]), timeout


def parse_checks(raw_checks: list[Any]) -> tuple[list[Check], list[str]]:
    """The ``Checks`` entries (from the properties or the S3 spec) and what is wrong with them."""
    problems: list[str] = []
    checks: list[Check] = []
    for i, c in enumerate(raw_checks):
        if not isinstance(c, dict) or not all(
            isinstance(c.get(k), str) and c.get(k) for k in ("Model", "Request", "Response")
        ):
            problems.append(f"Checks[{i}]: needs Model, Request and Response (s3:// URIs)")
            continue
        for key in ("Request", "Response"):
            if not c[key].startswith("s3://"):
                problems.append(f"Checks[{i}].{key}: {c[key]!r} is not an s3:// URI")
        try:
            checks.append(
                Check(
                    c["Model"],
                    c["Request"],
                    c["Response"],
                    float(c.get("Atol", 1e-5)),
                    float(c.get("Rtol", 1e-4)),
                )
            )
        except (TypeError, ValueError):
            problems.append(f"Checks[{i}]: Atol and Rtol must be numbers")
    return checks, problems


def _spec_tail(props: dict[str, Any], problems: list[str]) -> tuple[float, int]:
    """``DeadlineSeconds`` and ``Parallelism``."""
    try:
        deadline = float(props.get("DeadlineSeconds", DEFAULT_DEADLINE_S))
    except (TypeError, ValueError):
        problems.append(f"DeadlineSeconds: {props.get('DeadlineSeconds')!r} is not a number")
        deadline = DEFAULT_DEADLINE_S
    try:
        parallelism = int(props.get("Parallelism", DEFAULT_PARALLELISM))
    except (TypeError, ValueError):
        parallelism = 0
    if not 1 <= parallelism <= 64:
        problems.append(f"Parallelism: {props.get('Parallelism')!r} is not a number of checks from 1 to 64")
        parallelism = DEFAULT_PARALLELISM
    return deadline, parallelism


def _component_spec(
    props: dict[str, Any], routing: Any, problems: list[str]
) -> tuple[tuple[tuple[str, str], ...], str | None]:
    """Routing by inference component: ``Components`` (logical -> component name; a JSON object or its text) and/or
    ``ComponentNameParameterPath`` (the SSM name map); at least one of them."""
    raw = props.get("Components") or {}
    if isinstance(raw, str):
        try:
            raw = json.loads(raw)
        except ValueError:
            raw = None
    if not isinstance(raw, dict) or not all(isinstance(v, str) and v for v in raw.values()):
        problems.append("Components: a mapping of logical model name -> InferenceComponentName is required")
        raw = {}
    path = props.get("ComponentNameParameterPath") or None
    if routing == ROUTE_COMPONENT and not raw and not path:
        problems.append(
            "Components: routing by inference component needs Components or ComponentNameParameterPath"
        )
    return tuple(sorted((str(k), str(v)) for k, v in raw.items())), path


# --------------------------------------------------------------------------- fleet: the sample in S3


def stored_checks(s3: Any, spec: Spec) -> Spec:
    """The spec with the sampled checks of its S3 object (``ChecksUri``), its sha256 verified.

    The object (written at synth): ``{"Total": N, "Checks": [{..., "Sampled": true|false,
    "Changed": true|false}, ...]}``; the checks not sampled are counted, not run.
    """
    if not spec.checks_uri:
        return replace(spec, total=len(spec.checks))
    bucket, _, key = spec.checks_uri[len("s3://") :].partition("/")
    body = s3.get_object(Bucket=bucket, Key=key)["Body"].read()
    digest = hashlib.sha256(body).hexdigest()
    if digest != spec.checks_sha256:
        raise ValueError(f"{spec.checks_uri}: sha256 {digest} is not the recorded {spec.checks_sha256}")
    doc = json.loads(body)
    raw = [c for c in doc.get("Checks", []) if isinstance(c, dict)]
    checks, problems = parse_checks([c for c in raw if c.get("Sampled", True)])
    if problems or not checks:
        raise ValueError(f"{spec.checks_uri}: " + ("; ".join(problems) or "no sampled check"))
    total = int(doc.get("Total", len(raw)))
    return replace(spec, checks=tuple(checks), total=total, not_sampled=total - len(checks))


def run_parallel(
    items: list[Any], task: Callable[[Any], Any], *, workers: int, end: float
) -> tuple[list[Any], int]:
    """``task(item)`` for each item, ``workers`` at a time, in order; an item not yet started when
    fewer than ``MIN_CHECK_S`` seconds are left is skipped (its result None). Returns the results and
    how many were skipped for the deadline."""
    skipped = 0

    def guarded(item: Any) -> Any:
        nonlocal skipped
        if time.monotonic() + MIN_CHECK_S > end:
            skipped += 1
            return None
        return task(item)

    if workers <= 1 or len(items) <= 1:
        return [guarded(i) for i in items], skipped
    with ThreadPoolExecutor(max_workers=min(workers, len(items))) as pool:
        results = list(pool.map(guarded, items))
    return results, skipped


# -------------------------------------------------------------------------------------------- compare


def compare(got: dict[str, Any], expected: dict[str, Any], *, atol: float, rtol: float) -> str | None:
    """None when every expected output is there with its datatype, shape and values; else what differed."""
    got_outputs = {o.get("name"): o for o in got.get("outputs", []) if isinstance(o, dict)}
    for exp in expected.get("outputs", []):
        name = exp["name"]
        out = got_outputs.get(name)
        if out is None:
            return f"output {name} missing (got {sorted(n for n in got_outputs if n)})"
        if out.get("datatype") != exp.get("datatype"):
            return f"output {name}: datatype {out.get('datatype')} != expected {exp.get('datatype')}"
        if list(out.get("shape", [])) != list(exp.get("shape", [])):
            return f"output {name}: shape {out.get('shape')} != expected {exp.get('shape')}"
        got_data, exp_data = _flat(out.get("data", [])), _flat(exp.get("data", []))
        if len(got_data) != len(exp_data):
            return f"output {name}: {len(got_data)} values != expected {len(exp_data)}"
        if exp.get("datatype") in ("BYTES", "BOOL"):
            if got_data != exp_data:
                first = next(i for i, (a, b) in enumerate(zip(got_data, exp_data, strict=True)) if a != b)
                return f"output {name}: value {first} is {got_data[first]!r}, expected {exp_data[first]!r}"
            continue
        worst, worst_i = 0.0, -1
        for i, (a, b) in enumerate(zip(got_data, exp_data, strict=True)):
            a, b = float(a), float(b)
            if math.isnan(a) or math.isnan(b):
                if not (math.isnan(a) and math.isnan(b)):
                    return f"output {name}: value {i} is {a}, expected {b}"
                continue
            excess = abs(a - b) - (atol + rtol * abs(b))
            if excess > 0 and abs(a - b) > worst:
                worst, worst_i = abs(a - b), i
        if worst_i >= 0:
            return (
                f"output {name}: max abs difference {worst:.6g} at value {worst_i} "
                f"(got {float(got_data[worst_i]):.6g}, expected {float(exp_data[worst_i]):.6g}; atol {atol:g}, rtol {rtol:g})"
            )
    return None


def _flat(data: Any) -> list[Any]:
    if isinstance(data, list):
        return [x for item in data for x in _flat(item)]
    return [data]


# ------------------------------------------------------------------------------------------- verify


def _clients() -> tuple[Any, Any, Any]:
    cfg = Config(retries={"max_attempts": 2, "mode": "standard"}, read_timeout=70, connect_timeout=5)
    return (
        boto3.client("sagemaker-runtime", config=cfg),
        boto3.client("s3", config=cfg),
        boto3.client("ssm", config=cfg),
    )


def _read_s3_json(s3: Any, uri: str) -> dict[str, Any]:
    bucket, _, key = uri[len("s3://") :].partition("/")
    body = s3.get_object(Bucket=bucket, Key=key)["Body"].read()
    return json.loads(body)


def target_model_map(ssm: Any, path: str) -> dict[str, str]:
    """The logical name -> TargetModel map the endpoint stack published under ``path`` (one or more parts)."""
    merged: dict[str, str] = {}
    kwargs: dict[str, Any] = {"Path": path, "Recursive": False}
    while True:
        page = ssm.get_parameters_by_path(**kwargs)
        for p in sorted(page.get("Parameters", []), key=lambda p: p["Name"]):
            merged.update(json.loads(p["Value"]))
        if not page.get("NextToken"):
            return merged
        kwargs["NextToken"] = page["NextToken"]


def _error_text(exc: Exception) -> tuple[str, bool]:
    """What went wrong and whether waiting may help."""
    if isinstance(exc, ClientError):
        err = exc.response.get("Error", {})
        code, msg = str(err.get("Code", "")), str(err.get("Message", ""))
        status = exc.response.get("OriginalStatusCode") or exc.response.get("ResponseMetadata", {}).get(
            "HTTPStatusCode"
        )
        if code == "ModelError" and status in (503, 507):
            return f"{code} ({status}): {msg}", True
        if code == "ValidationError" and "not found" in msg.lower():
            return f"endpoint not found: {msg}", True
        return f"{code}: {msg}", code in RETRYABLE_CODES
    if isinstance(
        exc, BotoCoreError
    ):  # connection refused / reset / timed out: the endpoint is not answering
        return f"endpoint not reachable: {exc}", True
    return f"{type(exc).__name__}: {exc}", False


def _invoke(
    runtime: Any, spec: Spec, body: bytes, target_model: str | None, component: str | None = None
) -> dict[str, Any]:
    kwargs: dict[str, Any] = {
        "EndpointName": spec.endpoint_name,
        "Body": body,
        "ContentType": "application/json",
        "Accept": "application/json",
    }
    if target_model:
        kwargs["TargetModel"] = target_model
    if component:
        kwargs["InferenceComponentName"] = component
    resp = runtime.invoke_endpoint(**kwargs)
    return json.loads(resp["Body"].read())


#: Seconds between two looks for an asynchronous result (doubling up to the maximum).
ASYNC_POLL_S, ASYNC_POLL_MAX_S = 0.5, 10.0


class _AsyncFailed(Exception):
    """The asynchronous endpoint wrote a failure object (its text): not retried."""


def _split(uri: str) -> tuple[str, str]:
    bucket, _, key = uri[len("s3://") :].partition("/")
    return bucket, key


def _get_if_there(s3: Any, uri: str) -> bytes | None:
    """The object's bytes, None while it does not exist."""
    bucket, key = _split(uri)
    try:
        return bytes(s3.get_object(Bucket=bucket, Key=key)["Body"].read())
    except ClientError as exc:
        if exc.response.get("Error", {}).get("Code") in ("NoSuchKey", "404", "NotFound"):
            return None
        raise


def _invoke_async(
    runtime: Any, s3: Any, spec: Spec, model: str, body: bytes, end: float, sleep: Any
) -> dict[str, Any]:
    """Put ``body`` under the input prefix, ``InvokeEndpointAsync`` it, wait for its output or failure.

    Raises ``_AsyncFailed`` with the failure object's text, ``TimeoutError`` when neither appeared
    before ``end``; the invocation's own errors propagate (the caller retries the retryable ones)."""
    assert spec.async_prefixes is not None
    input_prefix = spec.async_prefixes[0]
    inference_id = f"verify-{model}-{uuid.uuid4().hex[:12]}"[:64]
    bucket, key = _split(input_prefix.rstrip("/") + f"/{inference_id}.json")
    s3.put_object(Bucket=bucket, Key=key, Body=body, ContentType="application/json")
    kwargs: dict[str, Any] = {
        "EndpointName": spec.endpoint_name,
        "InputLocation": f"s3://{bucket}/{key}",
        "ContentType": "application/json",
        "Accept": "application/json",
        "InferenceId": inference_id,
    }
    if spec.invocation_timeout_s is not None:
        kwargs["InvocationTimeoutSeconds"] = spec.invocation_timeout_s
    resp = runtime.invoke_endpoint_async(**kwargs)
    output, failure = resp.get("OutputLocation"), resp.get("FailureLocation")
    if not output:
        raise ValueError(f"InvokeEndpointAsync answered no OutputLocation ({sorted(resp)})")
    delay = ASYNC_POLL_S
    while True:
        got = _get_if_there(s3, output)
        if got is not None:
            return json.loads(got)
        if failure:
            err = _get_if_there(s3, failure)
            if err is not None:
                raise _AsyncFailed(f"failure object {failure}: {err.decode(errors='replace')[:500]}")
        if time.monotonic() + delay >= end:
            raise TimeoutError(f"no output at {output} (nor failure at {failure}) before the deadline")
        sleep(delay)
        delay = min(delay * 2, ASYNC_POLL_MAX_S)


def verify(spec: Spec, *, deadline: float | None = None, sleep: Any = time.sleep, log: Any = print) -> Report:
    """Invoke each checked model with its recorded request until it answers or the deadline passes."""
    runtime, s3, ssm = _clients()
    end = deadline if deadline is not None else time.monotonic() + spec.deadline_s
    report = Report(spec.endpoint_name)
    names: dict[str, str] = {}
    if spec.routing == ROUTE_TARGET_MODEL:
        try:
            names = target_model_map(ssm, str(spec.target_model_parameter_path))
        except (ClientError, BotoCoreError, ValueError) as exc:
            report.outcomes.append(
                Outcome(
                    "*",
                    False,
                    f"cannot read the TargetModel map at {spec.target_model_parameter_path}: {exc}",
                )
            )
            return report
    try:
        spec = stored_checks(s3, spec)
    except (ClientError, BotoCoreError, ValueError) as exc:
        report.outcomes.append(Outcome("*", False, f"cannot read the checks ({spec.checks_uri}): {exc}"))
        return report
    report.total = spec.total or len(spec.checks)
    report.skipped["not in the sample"] = spec.not_sampled
    samples = _read_samples(s3, spec, report, end)
    for name in spec.warm_up:  # load listed TargetModels before the checks time them
        if name in names and name in samples:
            try:
                _invoke(runtime, spec, samples[name][0], names[name])
            except (ClientError, BotoCoreError, ValueError) as exc:
                log(f"warm-up of {name}: {_error_text(exc)[0]}")
    if spec.routing == ROUTE_COMPONENT:
        report.outcomes += verify_components(runtime, ssm, spec, samples, end, sleep, log)
        return report

    def one(check: Check) -> Outcome:
        target = None
        if spec.routing == ROUTE_TARGET_MODEL:
            target = names.get(check.model)
            if target is None:
                return Outcome(
                    check.model,
                    False,
                    f"no TargetModel for {check.model} in {spec.target_model_parameter_path} "
                    f"(have {sorted(names)[:20]}{'...' if len(names) > 20 else ''})",
                )
        if spec.async_prefixes is not None:
            return _verify_async(runtime, s3, spec, check, samples[check.model], end, sleep, log)
        return _verify_one(runtime, spec, check, samples[check.model], target, end, sleep, log)

    todo = [c for c in spec.checks if c.model in samples]
    outcomes, late = run_parallel(todo, one, workers=spec.parallelism, end=end)
    report.outcomes += [o for o in outcomes if o is not None]
    report.skipped["deadline"] = late
    log(f"endpoint {spec.endpoint_name}: {report.coverage()}")
    return report


def _read_samples(s3: Any, spec: Spec, report: Report, end: float) -> dict[str, tuple[bytes, dict[str, Any]]]:
    """Each check's recorded request (as the body to send) and response, read in parallel."""

    def read(check: Check) -> tuple[bytes, dict[str, Any]] | Outcome:
        try:
            request = _read_s3_json(s3, check.request)
            return json.dumps(request).encode(), _read_s3_json(s3, check.response)
        except (ClientError, BotoCoreError, ValueError) as exc:
            return Outcome(check.model, False, f"cannot read the recorded sample ({check.request}): {exc}")

    found, _ = run_parallel(list(spec.checks), read, workers=spec.parallelism, end=math.inf)
    samples: dict[str, tuple[bytes, dict[str, Any]]] = {}
    for check, got in zip(spec.checks, found, strict=True):
        if isinstance(got, Outcome):
            report.outcomes.append(got)
        elif got is not None:
            samples[check.model] = got
    return samples


def _verify_one(
    runtime: Any,
    spec: Spec,
    check: Check,
    sample: tuple[bytes, dict[str, Any]],
    target: str | None,
    end: float,
    sleep: Any,
    log: Any,
    component: str | None = None,
) -> Outcome:
    body, expected = sample
    attempts, delay = 0, 1.0
    while True:
        attempts += 1
        try:
            got = _invoke(runtime, spec, body, target, component)
        except (ClientError, BotoCoreError, ValueError) as exc:
            text, retry = _error_text(exc)
            if not retry or time.monotonic() + delay >= end:
                why = "" if not retry else " (deadline reached)"
                return Outcome(check.model, False, f"{text}{why}", attempts, target, component)
            log(f"{check.model}: {text}; retrying in {delay:.0f} s")
            sleep(delay)
            delay = min(delay * 2, 15.0)
            continue
        diff = compare(got, expected, atol=check.atol, rtol=check.rtol)
        return Outcome(check.model, diff is None, diff or "answered as recorded", attempts, target, component)


def _verify_async(
    runtime: Any,
    s3: Any,
    spec: Spec,
    check: Check,
    sample: tuple[bytes, dict[str, Any]],
    end: float,
    sleep: Any,
    log: Any,
) -> Outcome:
    """One check of an asynchronous endpoint: invoke asynchronously (retrying what may pass), wait for the
    output object until ``end``, compare it as :func:`_verify_one` compares an answer."""
    body, expected = sample
    attempts, delay = 0, 1.0
    while True:
        attempts += 1
        try:
            got = _invoke_async(runtime, s3, spec, check.model, body, end, sleep)
        except _AsyncFailed as exc:
            return Outcome(check.model, False, str(exc), attempts)
        except TimeoutError as exc:
            return Outcome(check.model, False, f"{exc} (deadline reached)", attempts)
        except (ClientError, BotoCoreError, ValueError) as exc:
            text, retry = _error_text(exc)
            if not retry or time.monotonic() + delay >= end:
                why = "" if not retry else " (deadline reached)"
                return Outcome(check.model, False, f"{text}{why}", attempts)
            log(f"{check.model}: {text}; retrying in {delay:.0f} s")
            sleep(delay)
            delay = min(delay * 2, 15.0)
            continue
        diff = compare(got, expected, atol=check.atol, rtol=check.rtol)
        return Outcome(check.model, diff is None, diff or "answered as recorded (asynchronously)", attempts)


# ------------------------------------------------------------------------------- routing by inference component


def _sagemaker_client() -> Any:
    cfg = Config(retries={"max_attempts": 2, "mode": "standard"}, read_timeout=30, connect_timeout=5)
    return boto3.client("sagemaker", config=cfg)


def component_copies(sagemaker: Any, component: str) -> int | None:
    """The component's current copy count (``DescribeInferenceComponent``); None when it cannot be read."""
    try:
        resp = sagemaker.describe_inference_component(InferenceComponentName=component)
    except (ClientError, BotoCoreError) as exc:
        print(f"copy count of {component} unknown ({_error_text(exc)[0]}): invoking it")
        return None
    copies = (resp.get("RuntimeConfig") or {}).get("CurrentCopyCount")
    return int(copies) if isinstance(copies, int) else None


def verify_component(
    runtime: Any,
    sagemaker: Any,
    spec: Spec,
    check: Check,
    sample: tuple[bytes, dict[str, Any]],
    component: str,
    end: float,
    sleep: Any = time.sleep,
    log: Any = print,
) -> Outcome:
    """Invoke one inference component with its sample (``InferenceComponentName``) and compare; a
    component scaled in to zero copies is skipped and reported so (see the module docstring)."""
    if component_copies(sagemaker, component) == 0:
        detail = (
            f"skipped: component {component} is scaled in to 0 copies; not invoked (an invocation would "
            "start its scale-out from zero)"
        )
        log(f"{check.model}: {detail}")
        return Outcome(check.model, True, detail, 0, None, component, skipped=True)
    return _verify_one(runtime, spec, check, sample, None, end, sleep, log, component=component)


def verify_components(
    runtime: Any,
    ssm: Any,
    spec: Spec,
    samples: dict[str, tuple[bytes, dict[str, Any]]],
    end: float,
    sleep: Any,
    log: Any,
    sagemaker: Any = None,
) -> list[Outcome]:
    """Every check routed by inference component, each through :func:`verify_component`."""
    names = dict(spec.components)
    if spec.component_name_parameter_path:
        try:
            names.update(target_model_map(ssm, spec.component_name_parameter_path))
        except (ClientError, BotoCoreError, ValueError) as exc:
            where = spec.component_name_parameter_path
            return [Outcome("*", False, f"cannot read the component name map at {where}: {exc}")]
    sagemaker = sagemaker or _sagemaker_client()
    out = []
    for check in spec.checks:
        if check.model not in samples:
            continue
        component = names.get(check.model)
        if component is None:
            out.append(
                Outcome(
                    check.model, False, f"no inference component for {check.model} (have {sorted(names)})"
                )
            )
            continue
        out.append(
            verify_component(
                runtime, sagemaker, spec, check, samples[check.model], component, end, sleep, log
            )
        )
    return out


# -------------------------------------------------------------------------------- CloudFormation


def physical_id(spec_props: dict[str, Any], request_id: str) -> str:
    """A new physical id per verification: the endpoint, a digest of what is verified, the request."""
    digest = hashlib.sha256(json.dumps(spec_props, sort_keys=True, default=str).encode()).hexdigest()[:12]
    return f"verify/{spec_props.get('EndpointName', 'unknown')}/{digest}/{request_id[:8]}"


def custom_resource(event: dict[str, Any], context: Any, *, send: Any = None) -> dict[str, Any]:
    """Answer one CloudFormation request; returns the response document it sent (always sent)."""
    send = send or _send_response
    kind = event.get("RequestType")
    props = {k: v for k, v in (event.get("ResourceProperties") or {}).items() if k != "ServiceToken"}
    status, reason, data = "SUCCESS", "", {}
    pid = event.get("PhysicalResourceId") or physical_id(props, str(event.get("RequestId", "")))
    try:
        if kind == "Create":
            spec = parse_spec(props)
            remaining = _remaining_s(context)
            budget = (
                min(spec.deadline_s, remaining - ANSWER_RESERVE_S)
                if remaining is not None
                else spec.deadline_s
            )
            report = verify(spec, deadline=time.monotonic() + max(budget, 1.0))
            data = response_data(report)
            if not report.ok:
                status, reason = "FAILED", report.summary()
            else:
                reason = report.summary()
        elif kind in ("Update", "Delete"):
            reason = f"{kind}: nothing to verify (every verification is a Create); always succeeds"
        else:
            status, reason = "FAILED", f"unknown RequestType {kind!r}"
    except Exception as exc:  # always answer CloudFormation, never leave it waiting an hour
        status, reason = "FAILED", f"verification could not run: {type(exc).__name__}: {exc}"
    if kind == "Delete":
        status = "SUCCESS"
    doc = {
        "Status": status,
        "Reason": reason[:REASON_LIMIT] or status,
        "PhysicalResourceId": pid,
        "StackId": event.get("StackId"),
        "RequestId": event.get("RequestId"),
        "LogicalResourceId": event.get("LogicalResourceId"),
        "NoEcho": False,
        "Data": data,
    }
    send(event.get("ResponseURL", ""), doc)
    return doc


def response_data(report: Report) -> dict[str, str]:
    """The custom resource's ``Data`` (``Fn::GetAtt`` attributes; the response must stay under 4 KB)."""
    return {
        "Ok": str(report.ok).lower(),
        "Models": str(len(report.outcomes)),
        "Checked": str(len(report.outcomes)),
        "Total": str(max(report.total, len(report.outcomes))),
        "Coverage": report.coverage()[:400],
    }


def _remaining_s(context: Any) -> float | None:
    getter = getattr(context, "get_remaining_time_in_millis", None)
    return getter() / 1000.0 if callable(getter) else None


def _send_response(url: str, doc: dict[str, Any]) -> None:
    body = json.dumps(doc).encode()
    req = urllib.request.Request(
        url, data=body, method="PUT", headers={"Content-Type": "", "Content-Length": str(len(body))}
    )
    for attempt in range(3):
        try:
            with urllib.request.urlopen(req, timeout=10) as resp:  # noqa: S310 (the pre-signed S3 URL CloudFormation gave)
                resp.read()
            return
        except OSError as exc:
            print(f"could not send the response (attempt {attempt + 1}): {exc}")
            time.sleep(1 + attempt)


# ---------------------------------------------------------------------------------------- entry points


def handler(event: dict[str, Any], context: Any = None) -> dict[str, Any]:
    """Lambda entry point: a CloudFormation request, or a direct verification (pipeline step)."""
    if "RequestType" in event and "ResponseURL" in event:
        return custom_resource(event, context)
    report = verify(parse_spec(event))
    print(report.summary())
    if not report.ok:
        raise VerificationFailed(report.summary())
    return report.to_dict()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--spec", required=True, help="a JSON file with the verification spec")
    args = parser.parse_args(argv)
    with open(args.spec, encoding="utf-8") as fh:
        spec = parse_spec(json.load(fh))
    report = verify(spec)
    print(report.summary())
    print(json.dumps(report.to_dict(), indent=1))
    return 0 if report.ok else 1


if __name__ == "__main__":
    sys.exit(main())
