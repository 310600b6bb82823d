"""``cdk-triton serve | invoke | stop | bench``: parse, make one call into the local endpoint, print.

The lifecycle of ``serve --detach`` (state files, start, status, stop) lives in ``detached.py``, the
foreground serve in ``serving.py``, invoke and load in ``client.py`` and ``load.py``. Only the
standard library and ``detached`` load at import (``cdk-triton --help`` stays light); the rest loads
inside the command that needs it.
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from cdk_triton.local import detached
from cdk_triton.local.detached import DEFAULT_MANIFEST, DEFAULT_STATE_DIR

if TYPE_CHECKING:
    from cdk_triton.local.client import FrontClient, InvokeResult


def register(subparsers: Any) -> None:
    """Add ``serve``, ``invoke``, ``stop`` and ``bench`` to the cdk-triton parser."""
    _register_serve(subparsers)
    _register_clients(subparsers)


def _register_serve(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "serve",
        help="serve built endpoints with a real Triton server on this CPU",
        description="Serve manifest endpoints locally behind a SageMaker Runtime front.",
    )
    p.add_argument(
        "--manifest", default=DEFAULT_MANIFEST, help=f"build manifest (default: {DEFAULT_MANIFEST})"
    )
    p.add_argument(
        "--endpoint",
        action="append",
        dest="endpoints",
        metavar="NAME",
        help="manifest endpoint key; repeat for several (default: every endpoint)",
    )
    p.add_argument(
        "--port", type=int, default=None, help="port of the 127.0.0.1 front (default: a free port)"
    )
    p.add_argument(
        "--detach", action="store_true", help="run in the background; write state files for invoke/stop"
    )
    p.add_argument(
        "--memory-budget-mb",
        type=int,
        default=None,
        help="MME: unload least-recently-used models above this resident memory (default: none)",
    )
    p.add_argument(
        "--instance-count", type=int, default=None, help="CPU instances per model (default: cores)"
    )
    p.add_argument("--start-timeout", type=float, default=120.0, help="seconds (default: 120)")
    p.add_argument(
        "--env",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="a SAGEMAKER_* container variable, read as the manifest's Triton release reads it; repeat "
        "for several (default: the container's defaults)",
    )
    p.add_argument(
        "--async-location",
        default=None,
        metavar="DIR|s3://BUCKET/PREFIX/",
        help="asynchronous endpoints: where async/<endpoint>/output/ and failure/ are written "
        "(default: the manifest's folder)",
    )
    p.add_argument(
        "--runtime",
        choices=RUNTIMES,
        default="stand-in",
        help="what runs the models: stand-in (the CPU stand-ins with the libraries beside cdk-triton, the "
        "default), target (the same stand-ins in the release's own libtorch / ONNX Runtime, an environment "
        "created once from the package index), container (the release's SageMaker Triton image under Docker, "
        "as SageMaker runs it)",
    )
    p.add_argument(
        "--dry-run",
        action="store_true",
        help="with --runtime container: print the docker run command and exit (no docker, no AWS)",
    )
    p.add_argument(
        "--region",
        default=None,
        help="with --runtime container: the image's region (default: AWS_REGION, AWS_DEFAULT_REGION, "
        "else us-east-1)",
    )
    p.add_argument("--state-dir", default=DEFAULT_STATE_DIR, help=argparse.SUPPRESS)
    p.set_defaults(func=cmd_serve)


def _register_clients(subparsers: Any) -> None:
    p = subparsers.add_parser("invoke", help="invoke a local endpoint started with `serve --detach`")
    p.add_argument("--endpoint", required=True, metavar="NAME")
    p.add_argument("--target-model", default=None, help="MME: logical name or TargetModel value")
    p.add_argument(
        "--component",
        default=None,
        metavar="NAME",
        help="InferenceComponents: the component's logical name or component name (the manifest's)",
    )
    src = p.add_mutually_exclusive_group()
    src.add_argument("--input", default=None, metavar="FILE", help="KServe v2 JSON request body")
    src.add_argument("--sample", action="store_true", help="send the manifest's sample (the default)")
    p.add_argument("--binary", action="store_true", help="send binary+json instead of JSON")
    p.add_argument(
        "--async",
        dest="use_async",
        action="store_true",
        help="an asynchronous endpoint: put the request under async/<endpoint>/input/, call "
        "InvokeEndpointAsync, wait for the output and print it",
    )
    p.add_argument(
        "--async-location",
        default=None,
        metavar="DIR|s3://BUCKET/PREFIX/",
        help="with --async: the location `serve` was given (default: the manifest's folder)",
    )
    p.add_argument("--top-k", type=int, default=5)
    p.add_argument("--url", default=None, help="front URL (default: from the state file)")
    p.add_argument("--manifest", default=None, help="manifest (default: the one `serve` used)")
    p.add_argument("--state-dir", default=DEFAULT_STATE_DIR, help=argparse.SUPPRESS)
    p.set_defaults(func=cmd_invoke)

    p = subparsers.add_parser("stop", help="stop local endpoints started with `serve --detach`")
    p.add_argument("--endpoint", action="append", dest="endpoints", metavar="NAME", help="default: all")
    p.add_argument("--state-dir", default=DEFAULT_STATE_DIR, help=argparse.SUPPRESS)
    p.set_defaults(func=cmd_stop)

    p = subparsers.add_parser("bench", help="load-test a detached local endpoint with its sample")
    p.add_argument("--endpoint", required=True, metavar="NAME")
    p.add_argument("--target-model", default=None)
    p.add_argument("--concurrency", type=int, default=16)
    p.add_argument("--requests", type=int, default=2000)
    p.add_argument("--binary", action="store_true")
    p.add_argument("--state-dir", default=DEFAULT_STATE_DIR, help=argparse.SUPPRESS)
    p.set_defaults(func=cmd_bench)


# ---------------------------------------------------------------------------- serve / stop


#: serve flag -> (lowest, highest or None, allowed in words).
_SERVE_RANGES: dict[str, tuple[float, float | None, str]] = {
    "port": (1, 65535, "1..65535"),
    "instance_count": (1, None, "an integer >= 1"),
    "memory_budget_mb": (1, None, "megabytes >= 1"),
    "start_timeout": (1, None, "seconds >= 1"),
}


def _check_serve_flags(args: argparse.Namespace) -> None:
    """Every serve flag in range, before a server or a state file is made (``InvalidServeFlag``)."""
    from cdk_triton.errors import TritonValidationError, raise_all

    errs = []
    for name, (lo, hi, allowed) in _SERVE_RANGES.items():
        value = getattr(args, name, None)
        if value is None or (value >= lo and (hi is None or value <= hi)):
            continue
        flag = "--" + name.replace("_", "-")
        errs.append(
            TritonValidationError(
                "InvalidServeFlag",
                prop=flag,
                value=value,
                problem="is out of range",
                allowed=allowed,
                fix=f"pass {flag} within {allowed}, or leave it out for the default",
                path=f"cdk-triton serve {flag}",
            )
        )
    raise_all(errs)


def _serve_request(args: argparse.Namespace) -> detached.ServeRequest:
    _check_serve_flags(args)
    return detached.ServeRequest(
        manifest=args.manifest,
        endpoints=tuple(args.endpoints or ()),
        port=args.port,
        instance_count=args.instance_count,
        memory_budget_mb=args.memory_budget_mb,
        start_timeout=args.start_timeout,
        env=tuple(args.env),
        async_location=args.async_location,
    )


#: TargetModels `serve` lists at start (a fleet-sized MME lists the first ones and a count).
LISTED_TARGET_MODELS = 20


#: What `serve --runtime` runs the endpoints on.
RUNTIMES = ("stand-in", "target", "container")


#: serve flag -> (the --runtime values that take it, why another runtime does not).
_RUNTIME_FLAGS: dict[str, tuple[tuple[str, ...], str]] = {
    "detach": (
        ("stand-in", "target"),
        "the container runs in the foreground of `serve` (stop it with Ctrl-C)",
    ),
    "instance_count": (("stand-in", "target"), "the container serves the instance groups as built"),
    "memory_budget_mb": (
        ("stand-in", "target"),
        "the container has the memory of this machine, not a budget",
    ),
    "dry_run": (("container",), "only a container's docker command can be printed"),
    "region": (("container",), "the region names the container image"),
}


def _check_runtime_flags(args: argparse.Namespace) -> None:
    """Each flag given that belongs to another --runtime (``ContainerServeFlag``), at once."""
    from cdk_triton.errors import TritonValidationError, raise_all

    errs = []
    for name, (runtimes, why) in _RUNTIME_FLAGS.items():
        value = getattr(args, name, None)
        if not value or args.runtime in runtimes:
            continue
        runtime = " or ".join(runtimes)
        flag = "--" + name.replace("_", "-")
        errs.append(
            TritonValidationError(
                "ContainerServeFlag",
                prop=flag,
                value=value,
                problem=f"does not go with --runtime {args.runtime}: {why}",
                allowed=f"{flag} with --runtime {runtime}",
                fix=f"leave {flag} out, or serve with --runtime {runtime}",
                path=f"cdk-triton serve --runtime {args.runtime} {flag}",
            )
        )
    raise_all(errs)


def cmd_serve(args: argparse.Namespace) -> int:
    _check_runtime_flags(args)
    runtime = args.runtime
    if runtime == "container":
        from cdk_triton.local.container import serve_container

        return serve_container(args)
    request = _serve_request(args)
    if runtime == "target":
        from cdk_triton.local.target import use_target_runtime

        env = use_target_runtime(args.manifest)
        print(f"runtime: {' '.join(env.requirements)} ({env.path})", flush=True)
    from cdk_triton.local.server import warn_advisories_once

    warn_advisories_once(lambda text: print(f"warning: {text}", flush=True))
    if args.detach:
        started = detached.start(request, state_dir=args.state_dir)
        for state in started.states:
            print(f"endpoint {state.endpoint}: {state.invocations_url} (pid {state.pid})")
        print(f"log: {started.log}; stop with `cdk-triton stop`")
        return 0
    from cdk_triton.local.serving import Serving

    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s")
    with Serving(request, state_dir=detached.child_state_dir(args.state_dir)) as serving:
        for name, message in serving.notes:
            print(f"warning: endpoint {name}: {message} [SettingHasNoEffect]", flush=True)
        for ep in serving.start_each():
            print(f"endpoint {ep.name} ({ep.mode}): {ep.url}", flush=True)
            shown = list(ep.target_models.items())[:LISTED_TARGET_MODELS]
            for logical, header in shown:
                print(f"  TargetModel {logical} = {header}", flush=True)
            for logical, component in ep.components.items():
                print(f"  InferenceComponentName {logical} = {component}", flush=True)
            if len(ep.target_models) > len(shown):  # a fleet: the rest loads on its first request too
                print(f"  ... and {len(ep.target_models) - len(shown)} more TargetModels", flush=True)
            if ep.async_output:
                print(
                    f"  async: POST {ep.url.rsplit('/', 1)[0]}/async-invocations -> {ep.async_output}",
                    flush=True,
                )
            print(f"  server log: {ep.log}", flush=True)
        print(
            f"boto3.client('sagemaker-runtime', endpoint_url='{serving.url}', region_name='us-east-1', "
            "aws_access_key_id='x', aws_secret_access_key='x')",
            flush=True,
        )
        failed = serving.wait()
    if failed is not None:
        print(f"{failed}; stopping", file=sys.stderr)
        return 1
    return 0


def cmd_stop(args: argparse.Namespace) -> int:
    result = detached.stop(args.state_dir, args.endpoints or ())
    for name in result.not_running:
        print(f"endpoint {name} is not running", file=sys.stderr)
    for name in result.stopped:
        print(f"stopped {name}")
    return 0


# ---------------------------------------------------------------------------- invoke / bench


def _front_client(args: argparse.Namespace) -> FrontClient:
    """The client of a detached endpoint (``--url`` and ``--manifest`` given: no state file needed)."""
    from cdk_triton.local.client import FrontClient

    return FrontClient.detached(
        args.endpoint,
        state_dir=args.state_dir,
        url=getattr(args, "url", None),
        manifest=getattr(args, "manifest", None),
    )


def cmd_invoke(args: argparse.Namespace) -> int:
    from cdk_triton.local.client import invoke_file, invoke_sample

    client: Any = _front_client(args)
    if getattr(args, "use_async", False):
        from cdk_triton.local.client import AsyncClient

        client = AsyncClient(client, location=args.async_location)
    component = getattr(args, "component", None)
    if args.input:
        result = invoke_file(
            client, Path(args.input), target_model=args.target_model, binary=args.binary, component=component
        )
    else:
        result = invoke_sample(
            client, target_model=args.target_model, binary=args.binary, component=component
        )
    if getattr(client, "last", None):
        print(f"InferenceId {client.last['InferenceId']}: output {client.last['OutputLocation']}")
    _print_result(result, top_k=args.top_k)
    return 0 if result.ok else 1


def _print_result(result: InvokeResult, *, top_k: int) -> None:
    print(f"status {result.status} in {result.latency_s * 1e3:.1f} ms ({result.content_type})")
    if result.error:
        print(result.error)
        return
    for name, arr in result.outputs.items():
        flat = arr.ravel()
        shown = ", ".join(f"{v:.5g}" if arr.dtype.kind == "f" else str(v) for v in flat[:8])
        print(f"  {name} {arr.dtype} {list(arr.shape)}: [{shown}{', ...' if flat.size > 8 else ''}]")
    for name, top in result.top_k(top_k).items():
        print(f"  top-{len(top)} {name}: " + ", ".join(f"{i}:{s:.4f}" for i, s in top))
    if result.matched is not None:
        print(
            f"  sample response {'matches' if result.matched else 'DIFFERS'} (max |diff| {result.max_abs_diff:.3g})"
        )


def cmd_bench(args: argparse.Namespace) -> int:
    from cdk_triton.local.load import bench_sample

    result = bench_sample(
        _front_client(args),
        target_model=args.target_model,
        binary=args.binary,
        concurrency=args.concurrency,
        requests=args.requests,
    )
    print(json.dumps(result.summary()))
    if result.first_error:
        print(f"first error: {result.first_error}", file=sys.stderr)
    return 0 if result.errors == 0 else 1
