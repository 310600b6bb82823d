"""``cdk-triton serve | invoke | stop | bench``: the local endpoint from the command line.

``serve --detach`` writes one state file per endpoint (``.cdk-triton/local/<endpoint>.json``:
pid, front URL, manifest, log) that ``invoke``, ``bench`` and ``stop`` read.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import logging
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

from cdk_triton.config.manifest import read_manifest
from cdk_triton.config.server_options import ServerOptions
from cdk_triton.config.server_options.release import PING_MODE
from cdk_triton.errors import TritonValidationError
from cdk_triton.local.client import (
    FrontClient,
    build_request,
    invoke_sample,
    invoke_tensors,
    resolve_sample,
    tensors_from_kserve,
)
from cdk_triton.local.endpoint import LocalEndpoint
from cdk_triton.local.front import RuntimeFront
from cdk_triton.local.load import run_load_processes
from cdk_triton.local.overlay import CpuOverlay
from cdk_triton.local.server import private_file, write_private

DEFAULT_MANIFEST = "build/out/manifest.json"
DEFAULT_STATE_DIR = ".cdk-triton/local"


def register(subparsers: Any) -> None:
    """Add ``serve``, ``invoke``, ``stop`` and ``bench`` to the cdk-triton parser."""
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
    p.add_argument("--state-dir", default=DEFAULT_STATE_DIR, help=argparse.SUPPRESS)
    p.set_defaults(func=cmd_serve)

    p = subparsers.add_parser("invoke", help="invoke a local endpoint started with `serve --detach`")
    p.add_argument("--endpoint", required=True, metavar="NAME")
    p.add_argument("--target-model", default=None, help="MME: logical name or TargetModel value")
    src = p.add_mutually_exclusive_group()
    src.add_argument("--input", default=None, metavar="FILE", help="KServe v2 JSON request body")
    src.add_argument("--sample", action="store_true", help="send the manifest's sample (the default)")
    p.add_argument("--binary", action="store_true", help="send binary+json instead of JSON")
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


# ---------------------------------------------------------------------------- serve


def _state_path(state_dir: str, endpoint: str) -> Path:
    return Path(state_dir) / f"{endpoint}.json"


def _read_state(state_dir: str, endpoint: str) -> dict[str, Any]:
    path = _state_path(state_dir, endpoint)
    if not path.is_file():
        raise TritonValidationError(
            "LocalEndpointNotRunning",
            prop="endpoint",
            value=endpoint,
            problem=f"has no state file {path}",
            allowed="an endpoint started with `cdk-triton serve --detach`",
            fix=f"run `cdk-triton serve --endpoint {endpoint} --detach` first",
        )
    state = json.loads(path.read_text())
    if not _alive(int(state["pid"])):
        path.unlink(missing_ok=True)
        raise TritonValidationError(
            "LocalEndpointNotRunning",
            prop="endpoint",
            value=endpoint,
            problem=f"was started by process {state['pid']}, which is gone",
            allowed="a running endpoint",
            fix=f"start it again with `cdk-triton serve --endpoint {endpoint} --detach` (log: {state.get('log')})",
        )
    return state


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    with contextlib.suppress(OSError):
        if Path(f"/proc/{pid}/stat").read_text().split(")")[-1].split()[0] == "Z":
            return False
    return True


def _container_environment(pairs: list[str]) -> dict[str, str]:
    """``--env NAME=VALUE`` items as a container environment."""
    env: dict[str, str] = {}
    for pair in pairs:
        name, sep, value = pair.partition("=")
        if not sep or not name:
            raise TritonValidationError(
                "InvalidEnvironmentValue",
                prop="--env",
                value=pair,
                problem="is not NAME=VALUE",
                allowed="NAME=VALUE, e.g. SAGEMAKER_TRITON_LOG_VERBOSE=0",
                fix="write the variable as NAME=VALUE",
            )
        env[name] = value
    return env


def cmd_serve(args: argparse.Namespace) -> int:
    manifest = read_manifest(args.manifest)
    names = args.endpoints or sorted(manifest.endpoints)
    for name in names:
        manifest.endpoint(name)  # validate every name before starting anything
    env = _container_environment(args.env)
    options = ServerOptions.from_environment(env, path="--env")
    if args.detach:
        return _serve_detached(args, names)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s")
    front = RuntimeFront(port=args.port).start()
    endpoints: list[LocalEndpoint] = []
    stop = threading.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda *_: stop.set())
    try:
        for name in names:
            ep = LocalEndpoint(
                manifest,
                name,
                front=front,
                overlay=CpuOverlay(instance_count=args.instance_count),
                memory_budget_bytes=args.memory_budget_mb * 2**20 if args.memory_budget_mb else None,
                start_timeout=args.start_timeout,
                server_options=options,
                ping_mode_inherited=PING_MODE in env,
            )
            endpoints.append(ep)
            for note in ep.settings_without_effect:
                print(f"warning: endpoint {name}: {note.message} [SettingHasNoEffect]", flush=True)
            ep.start()
            info = ep.describe()
            print(f"endpoint {name} ({info['mode']}): {front.url}/endpoints/{name}/invocations", flush=True)
            if info["target_models"]:
                for logical, header in info["target_models"].items():
                    print(f"  TargetModel {logical} = {header}", flush=True)
            print(f"  server log: {info['log']}", flush=True)
            if args.state_dir and os.environ.get("CDK_TRITON_SERVE_STATE"):
                state = {
                    "pid": os.getpid(),
                    "url": front.url,
                    "endpoint": name,
                    "manifest": str(Path(args.manifest).resolve()),
                    "log": info["log"],
                    "mode": info["mode"],
                    "server_pgid": ep.server.proc.pid if ep.server and ep.server.proc else None,
                    "started": time.time(),
                }
                path = _state_path(args.state_dir, name)
                _private_dir(path.parent)
                tmp = path.with_suffix(".tmp")
                write_private(tmp, json.dumps(state, indent=1))
                tmp.rename(path)
        print(
            f"boto3.client('sagemaker-runtime', endpoint_url='{front.url}', region_name='us-east-1', "
            "aws_access_key_id='x', aws_secret_access_key='x')",
            flush=True,
        )
        while not stop.wait(
            0.5
        ):  # crashed servers restart (LocalEndpoint); one that keeps crashing ends serve
            for ep in endpoints:
                if ep.failed is not None:
                    print(f"{ep.failed}; stopping", file=sys.stderr)
                    return 1
        return 0
    finally:
        for ep in endpoints:
            ep.stop()
            with contextlib.suppress(FileNotFoundError):
                if os.environ.get("CDK_TRITON_SERVE_STATE"):
                    _state_path(args.state_dir, ep.name).unlink()
        front.stop()


def _private_dir(path: Path) -> None:
    """The state directory: created for its owner only (0700); state files and logs in it are 0600."""
    path.mkdir(mode=0o700, parents=True, exist_ok=True)
    with contextlib.suppress(OSError):
        path.chmod(0o700)


def _serve_detached(args: argparse.Namespace, names: list[str]) -> int:
    state_dir = Path(args.state_dir)
    _private_dir(state_dir)
    for name in names:
        path = _state_path(args.state_dir, name)
        if path.exists():
            try:
                state = _read_state(args.state_dir, name)
                print(
                    f"endpoint {name} is already served at {state['url']} (pid {state['pid']})",
                    file=sys.stderr,
                )
                return 2
            except TritonValidationError:
                pass
    log_path = state_dir / ("serve-" + "-".join(names) + ".log")
    argv = [
        sys.executable,
        "-m",
        "cdk_triton.cli",
        "serve",
        "--manifest",
        args.manifest,
        "--start-timeout",
        str(args.start_timeout),
        "--state-dir",
        str(args.state_dir),
    ]
    for name in names:
        argv += ["--endpoint", name]
    if args.port:
        argv += ["--port", str(args.port)]
    if args.memory_budget_mb:
        argv += ["--memory-budget-mb", str(args.memory_budget_mb)]
    if args.instance_count:
        argv += ["--instance-count", str(args.instance_count)]
    for pair in args.env:
        argv += ["--env", pair]
    env = dict(os.environ, CDK_TRITON_SERVE_STATE="1", PYTHONDONTWRITEBYTECODE="1")
    with os.fdopen(private_file(log_path), "ab") as log:
        proc = subprocess.Popen(
            argv,
            stdout=log,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            start_new_session=True,
            env=env,
        )
    deadline = time.monotonic() + args.start_timeout * len(names) + 10
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            print(
                f"serve failed (exit {proc.returncode}); log {log_path}:\n"
                + "\n".join(log_path.read_text(errors="replace").splitlines()[-20:]),
                file=sys.stderr,
            )
            return 1
        if all(_state_path(args.state_dir, n).exists() for n in names):
            for n in names:
                state = json.loads(_state_path(args.state_dir, n).read_text())
                print(f"endpoint {n}: {state['url']}/endpoints/{n}/invocations (pid {state['pid']})")
            print(f"log: {log_path}; stop with `cdk-triton stop`")
            return 0
        time.sleep(0.2)
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGTERM)
    print(f"serve did not become ready in time; log {log_path}", file=sys.stderr)
    return 1


# ---------------------------------------------------------------------------- invoke / bench / stop


def _front_client(args: argparse.Namespace) -> FrontClient:
    state = (
        {}
        if (getattr(args, "url", None) and getattr(args, "manifest", None))
        else _read_state(args.state_dir, args.endpoint)
    )
    manifest = read_manifest(getattr(args, "manifest", None) or state["manifest"])
    return FrontClient(manifest, args.endpoint, getattr(args, "url", None) or state["url"])


def cmd_invoke(args: argparse.Namespace) -> int:
    client = _front_client(args)
    target = args.target_model
    if args.input:
        doc = json.loads(Path(args.input).read_text())
        header = None
        if target is not None and client.entry.is_multi_model:
            tm = client.entry.target_models.get(target)
            header = tm.target_model if tm else target
        result = invoke_tensors(
            client,
            tensors_from_kserve(doc),
            target_model=header,
            binary=args.binary,
            outputs=[o["name"] for o in doc.get("outputs", [])] or None,
        )
    else:
        result = invoke_sample(client, target_model=target, binary=args.binary)
    print(f"status {result.status} in {result.latency_s * 1e3:.1f} ms ({result.content_type})")
    if result.error:
        print(result.error)
        return 1
    for name, arr in result.outputs.items():
        flat = arr.ravel()
        shown = ", ".join(f"{v:.5g}" if arr.dtype.kind == "f" else str(v) for v in flat[:8])
        print(f"  {name} {arr.dtype} {list(arr.shape)}: [{shown}{', ...' if flat.size > 8 else ''}]")
    for name, top in result.top_k(args.top_k).items():
        print(f"  top-{len(top)} {name}: " + ", ".join(f"{i}:{s:.4f}" for i, s in top))
    if result.matched is not None:
        print(
            f"  sample response {'matches' if result.matched else 'DIFFERS'} (max |diff| {result.max_abs_diff:.3g})"
        )
    return 0 if result.ok else 1


def cmd_bench(args: argparse.Namespace) -> int:
    client = _front_client(args)
    sample, header = resolve_sample(client, args.target_model)
    body, ctype = build_request(
        tensors_from_kserve(json.loads(client.manifest.resolve(sample.request).read_text())),
        binary=args.binary,
    )
    result = run_load_processes(
        client.url,
        args.endpoint,
        body,
        ctype,
        target_model=header,
        concurrency=args.concurrency,
        requests=args.requests,
    )
    print(json.dumps(result.summary()))
    if result.first_error:
        print(f"first error: {result.first_error}", file=sys.stderr)
    return 0 if result.errors == 0 else 1


def cmd_stop(args: argparse.Namespace) -> int:
    state_dir = Path(args.state_dir)
    names = args.endpoints or sorted(p.stem for p in state_dir.glob("*.json"))
    pids: set[int] = set()
    server_groups: set[int] = set()
    for name in names:
        path = _state_path(args.state_dir, name)
        if not path.exists():
            print(f"endpoint {name} is not running", file=sys.stderr)
            continue
        state = json.loads(path.read_text())
        pids.add(int(state["pid"]))
        if state.get("server_pgid"):
            server_groups.add(int(state["server_pgid"]))
    for pid in pids:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(pid, signal.SIGTERM)
    deadline = time.monotonic() + 30
    while pids and time.monotonic() < deadline:
        pids = {p for p in pids if _alive(p)}
        time.sleep(0.1)
    if pids:  # a serve that did not stop in time: kill it and its servers' process groups
        for pgid in pids | server_groups:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(pgid, signal.SIGKILL)
    for name in names:
        _state_path(args.state_dir, name).unlink(missing_ok=True)
        print(f"stopped {name}")
    return 0
