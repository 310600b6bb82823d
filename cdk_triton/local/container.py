"""``cdk-triton serve --runtime container``: the release's SageMaker Triton image, run as SageMaker runs it.

What this rung adds over the CPU stand-in (``serve``, the bundled ``tritonserver`` 2.51 with python-based
backends): the image the constructs deploy (``config.tables.image_uri`` of the manifest's ``triton_version``,
the region of ``--region`` / ``AWS_REGION``), so its real backends, libraries and ``serve`` script. The
container gets:

- the model repository where SageMaker puts it: a checked copy (``repository.prepare_sme_repository``,
  the manifest's hashes) at ``/opt/ml/model`` (single model), or a staging directory at
  ``/opt/ml/models`` where each TargetModel's archive is extracted to ``<alnum>/model`` on its first
  request and loaded with ``POST /models``, as SageMaker's host agent does (``mme.ModelManager``);
- the environment the constructs write into the Model (``config.server_options.hosting_options`` and
  ``sagemaker_environment``: one author), with ``--env`` items read as ``ServerOptions``;
- ``serve`` as its command, its port 8080 published on a free 127.0.0.1 port, ``--gpus all`` when
  ``nvidia-smi -L`` lists a GPU; without one, each ``KIND_GPU`` instance group of the copy becomes
  ``KIND_CPU`` (said aloud, one line per model, and recorded in ``gpu-to-cpu.json``).

The SageMaker Runtime front (``front.RuntimeFront``) routes ``/endpoints/<name>/invocations`` to the
container (:class:`ContainerEndpoint`), so boto3 works as with the stand-in. The image is pulled after an
ECR login (``ecr.get_authorization_token`` with the image's registry id, ``docker login
--password-stdin``) when ``docker image inspect`` does not find it. ``--dry-run`` prints the ``docker
run`` command line and calls neither docker nor AWS.
"""

from __future__ import annotations

import argparse
import base64
import contextlib
import http.client
import json
import logging
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Self

from cdk_triton.config import tables
from cdk_triton.config.manifest import EndpointEntry, Manifest, TargetModel, read_manifest
from cdk_triton.config.server_options import (
    DEFAULT_PORT,
    ENV_FIELDS,
    MME_MODELS_DIR,
    SME_MODEL_DIR,
    ServerOptions,
    hosting_options,
    sagemaker_environment,
)
from cdk_triton.errors import TritonValidationError, raise_all
from cdk_triton.local.detached import container_environment
from cdk_triton.local.endpoint import (
    TARGET_MODEL_HEADER,
    async_route,
    forward_headers,
    invoke_target_model,
    model_reply,
)
from cdk_triton.local.errors import LocalServerError
from cdk_triton.local.front import FrontServed, Reply, RuntimeFront, aws_error
from cdk_triton.local.mme import ModelManager
from cdk_triton.local.overlay import OverlayChange, describe_moves, gpu_only_models, move_gpu_groups_to_cpu
from cdk_triton.local.repository import prepare_sme_repository, prepare_target_model
from cdk_triton.local.server import free_port

log = logging.getLogger("cdk_triton.local")

#: The region of the image when neither ``--region``, AWS_REGION nor AWS_DEFAULT_REGION names one.
DEFAULT_REGION = "us-east-1"
#: The container's command: the image's SageMaker entry (``docker/sagemaker/serve``).
SERVE_COMMAND = "serve"
#: /dev/shm of the container: the python backend's regions (Docker's default 64 MB is too small for a few).
SHM_SIZE = "1g"
#: The label every container started here carries (``docker ps --filter label=...``).
LABEL = "cdk-triton.endpoint"
#: Seconds the container may take to answer ``/ping`` (an image's first start reads every backend).
START_TIMEOUT_S = 300.0
#: The record of the KIND_GPU -> KIND_CPU moves beside the served copy.
MOVES_FILE = "gpu-to-cpu.json"

RUNTIME_FIX = (
    "install Docker (https://docs.docker.com/engine/install/) and start its daemon, or serve on this "
    "CPU with `cdk-triton serve --runtime stand-in` (or `--runtime target`)"
)


# ---------------------------------------------------------------------------- host facts


def visible_gpus(nvidia_smi: str | None = None) -> list[str]:
    """The GPUs ``nvidia-smi -L`` lists (``GPU 0: ...`` lines); none without ``nvidia-smi`` or on failure."""
    exe = nvidia_smi or shutil.which("nvidia-smi")
    if exe is None:
        return []
    try:
        out = _run([exe, "-L"], timeout=20)
    except (OSError, subprocess.TimeoutExpired):
        return []
    return (
        [line.strip() for line in out.stdout.splitlines() if line.startswith("GPU ")]
        if out.returncode == 0
        else []
    )


def image_region(region: str | None = None) -> str:
    """``region``, else AWS_REGION, else AWS_DEFAULT_REGION (as boto3 and the CDK CLI read them), else us-east-1."""
    return region or os.environ.get("AWS_REGION") or os.environ.get("AWS_DEFAULT_REGION") or DEFAULT_REGION


def find_docker() -> str:
    """The ``docker`` CLI whose daemon answers (``DockerUnavailable`` naming what is missing otherwise)."""
    exe = shutil.which("docker")
    if exe is None:
        raise LocalServerError(
            f"--runtime container needs Docker: there is no `docker` on PATH; {RUNTIME_FIX}",
            code="DockerUnavailable",
        )
    try:
        out = _run([exe, "version", "--format", "{{.Server.Version}}"], timeout=30)
    except (OSError, subprocess.TimeoutExpired) as exc:
        out = subprocess.CompletedProcess([exe], 1, "", str(exc))
    if out.returncode != 0:
        said = (out.stderr or out.stdout).strip().splitlines()[-1:] or ["no answer"]
        raise LocalServerError(
            f"--runtime container needs Docker: `{exe} version` cannot reach the Docker daemon ({said[0]}); "
            f"start the daemon (and check that this user may use its socket), or {RUNTIME_FIX.split(', or ', 1)[1]}",
            code="DockerUnavailable",
        )
    return exe


# ---------------------------------------------------------------------------- the served copy


def stage_target_model(
    manifest: Manifest, target: TargetModel, dest: Path, *, gpus: bool, say: Callable[[str], object]
) -> list[OverlayChange]:
    """One MME archive as SageMaker stages it (``<alnum>/model``): checked and extracted as built
    (``repository.prepare_target_model``); without GPUs its KIND_GPU groups moved to KIND_CPU (said aloud)."""
    prepare_target_model(manifest, target, dest, None)
    if gpus:
        return []
    moves = move_gpu_groups_to_cpu(dest)
    for line in describe_moves(moves, gpu_only_models(dest), where=target.target_model):
        say(line)
    return moves


# ---------------------------------------------------------------------------- the setup


@dataclass(frozen=True, kw_only=True, slots=True)
class ContainerSetup:
    """What ``docker run`` gets for one endpoint (``command_line()`` is what ``--dry-run`` prints).

    Attributes:
        endpoint: the manifest's endpoint key.
        multi_model: MME (staging at ``/opt/ml/models``) or SME (the repository at ``/opt/ml/model``).
        image: the SageMaker Triton image URI (the constructs' ``tables.image_uri``).
        registry_id: the AWS account of the image's ECR registry.
        region: the image's region.
        port: the 127.0.0.1 port the container's 8080 is published on.
        gpus: pass every GPU (``--gpus all``).
        mount: the host directory mounted at ``mount_target``.
        environment: the container environment (as the constructs write it into the Model).
        moves: the KIND_GPU -> KIND_CPU moves made in the copy (no GPU visible).
        notes: lines said aloud before the start (the moves, GPU-only models).
    """

    endpoint: str
    multi_model: bool
    image: str
    registry_id: str
    region: str
    port: int
    gpus: bool
    mount: Path
    environment: dict[str, str]
    moves: tuple[OverlayChange, ...] = ()
    notes: tuple[str, ...] = ()

    @property
    def mount_target(self) -> str:
        return MME_MODELS_DIR if self.multi_model else SME_MODEL_DIR

    @property
    def name(self) -> str:
        """The container's name: ``cdk-triton-<endpoint>-<port>`` (docker's name characters)."""
        return "cdk-triton-" + re.sub(r"[^a-zA-Z0-9_.-]", "-", self.endpoint) + f"-{self.port}"

    def docker_run(self, docker: str = "docker") -> list[str]:
        """The ``docker run`` argv: detached, named, labelled, 8080 on 127.0.0.1:port, the mount, the
        environment, then the image and ``serve``."""
        argv = [docker, "run", "--detach", "--name", self.name, "--label", f"{LABEL}={self.endpoint}"]
        argv += ["--publish", f"127.0.0.1:{self.port}:{DEFAULT_PORT}", "--shm-size", SHM_SIZE]
        if self.gpus:
            argv += ["--gpus", "all"]
        argv += ["--volume", f"{self.mount.resolve()}:{self.mount_target}:ro"]
        for name, value in self.environment.items():
            argv += ["--env", f"{name}={value}"]
        return [*argv, self.image, SERVE_COMMAND]

    def command_line(self, docker: str = "docker") -> str:
        """:meth:`docker_run`, shell-quoted on one line."""
        return shlex.join(self.docker_run(docker))


def container_options(entry: EndpointEntry, env_pairs: Sequence[str]) -> tuple[ServerOptions, dict[str, str]]:
    """The endpoint's server options (``--env`` items read as the constructs read ``server_options``, then
    the hosting mode's: ``hosting_options``) and the raw variables the options do not manage."""
    raw = container_environment(env_pairs)
    options = ServerOptions.from_environment(raw, path="--env")
    extra = {name: value for name, value in raw.items() if name not in ENV_FIELDS}
    options = hosting_options(
        options,
        multi_model=entry.hosting_mode.loads_on_demand,
        default_model=entry.default_model,
        models=entry.models,
        load_models=entry.load_models or (),
    )
    raise_all(options.validate(path="--env"))
    return options, extra


def setup_container(
    manifest: Manifest,
    endpoint: str,
    *,
    workdir: Path,
    region: str | None = None,
    port: int | None = None,
    gpus: bool = False,
    env_pairs: Sequence[str] = (),
) -> ContainerSetup:
    """Plan one endpoint's container and prepare what it mounts (no docker, no AWS).

    SME: the checked copy of the repository at ``workdir/model`` (KIND_GPU moved to KIND_CPU without
    ``gpus``); MME: the empty staging directory ``workdir/models``.
    """
    entry = manifest.endpoint(endpoint)
    if entry.hosting_mode.components:
        raise TritonValidationError(
            "ContainerServeFlag",
            prop="--endpoint",
            value=endpoint,
            problem="is an InferenceComponents endpoint, which --runtime container does not serve",
            allowed="a SingleModel or MultiModel endpoint of the manifest",
            fix="serve it with `cdk-triton serve --runtime stand-in`, or name another endpoint",
        )
    options, extra = container_options(entry, env_pairs)
    where = image_region(region)
    image = tables.image_uri(manifest.triton_version, where)
    account = tables.image_account(manifest.triton_version, where)
    workdir.mkdir(parents=True, exist_ok=True, mode=0o700)
    multi = entry.hosting_mode.loads_on_demand
    moves: list[OverlayChange] = []
    notes: list[str] = []
    if multi:
        mount = workdir / "models"
        if mount.exists():
            shutil.rmtree(mount)
        mount.mkdir()
    else:
        mount = workdir / "model"
        prepare_sme_repository(manifest, entry, mount, None)
        if not gpus:
            moves = move_gpu_groups_to_cpu(mount)
            notes = describe_moves(moves, gpu_only_models(mount), where=f"endpoint {endpoint}")
        (workdir / MOVES_FILE).write_text(json.dumps([asdict(m) for m in moves], indent=1))
    return ContainerSetup(
        endpoint=endpoint,
        multi_model=multi,
        image=image,
        registry_id=account,
        region=where,
        port=port or free_port(),
        gpus=gpus,
        mount=mount,
        environment=sagemaker_environment(options, extra=extra),
        moves=tuple(moves),
        notes=tuple(notes),
    )


# ---------------------------------------------------------------------------- docker and ECR


def _run(
    argv: Sequence[str], *, input: str | None = None, timeout: float = 120.0
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        list(argv), input=input, capture_output=True, text=True, timeout=timeout, check=False
    )


def _tail(out: subprocess.CompletedProcess[str], lines: int = 20) -> str:
    return "\n".join((out.stderr or out.stdout or "").strip().splitlines()[-lines:])


def ecr_client(region: str) -> Any:
    """The boto3 ECR client of ``region`` (tests give ``ensure_image`` a stubbed one)."""
    import boto3

    return boto3.client("ecr", region_name=region)


def ecr_login(setup: ContainerSetup, docker: str, client: Any) -> None:
    """``docker login`` to the image's registry with a token of ``ecr.get_authorization_token``."""
    from botocore.exceptions import BotoCoreError, ClientError

    try:
        answer = client.get_authorization_token(registryIds=[setup.registry_id])
        data = answer["authorizationData"][0]
    except (BotoCoreError, ClientError, KeyError, IndexError) as exc:
        raise LocalServerError(
            f"ecr:GetAuthorizationToken for registry {setup.registry_id} in {setup.region} failed ({exc}); "
            f"give this machine AWS credentials allowed ecr:GetAuthorizationToken (any account may pull the "
            f"SageMaker images), or `docker pull {setup.image}` yourself",
            code="ImagePullFailed",
        ) from exc
    user, _, password = base64.b64decode(data["authorizationToken"]).decode().partition(":")
    out = _run(
        [docker, "login", "--username", user, "--password-stdin", data["proxyEndpoint"]], input=password
    )
    if out.returncode != 0:
        raise LocalServerError(
            f"`docker login {data['proxyEndpoint']}` failed: {_tail(out)}; check the Docker daemon's access "
            "to the registry (proxy, DNS), then retry",
            code="ImagePullFailed",
        )


def ensure_image(setup: ContainerSetup, docker: str, *, client: Any = None) -> str:
    """The image present locally: ``local`` when ``docker image inspect`` finds it, else ``pulled``
    after an ECR login (``ImagePullFailed`` naming the step that failed)."""
    if _run([docker, "image", "inspect", setup.image]).returncode == 0:
        return "local"
    ecr_login(setup, docker, client if client is not None else ecr_client(setup.region))
    out = _run([docker, "pull", setup.image], timeout=3600)
    if out.returncode != 0:
        raise LocalServerError(
            f"`docker pull {setup.image}` failed: {_tail(out)}; check the disk space the daemon has (the image "
            "is about 15 GB) and its network, then retry",
            code="ImagePullFailed",
        )
    return "pulled"


class ContainerServer:
    """HTTP to the container's SageMaker port (published on 127.0.0.1): what ``mme.ModelManager`` calls."""

    def __init__(self, port: int, *, timeout: float = 400.0) -> None:
        self.port = port
        self.timeout = timeout
        self._local = threading.local()

    def request(
        self, method: str, path: str, body: bytes | None = None, headers: dict[str, str] | None = None
    ) -> Reply:
        """One request on this thread's kept-alive connection (one retry on a fresh one)."""
        for attempt in (0, 1):
            conn = getattr(self._local, "conn", None)
            if conn is None or attempt:
                conn = self._local.conn = http.client.HTTPConnection(
                    "127.0.0.1", self.port, timeout=self.timeout
                )
            try:
                conn.request(method, path, body, headers or {})
                resp = conn.getresponse()
                return resp.status, {k.lower(): v for k, v in resp.getheaders()}, resp.read()
            except (OSError, http.client.HTTPException):
                conn.close()
                self._local.conn = None
                if attempt:
                    raise
        raise AssertionError("unreachable")

    def rss_bytes(self) -> int:
        """Not measured: ``--memory-budget-mb`` is a stand-in flag (the container has SageMaker's memory)."""
        return 0

    def protect_shared_memory(self) -> None:
        """Nothing to do: the container's /dev/shm is its own."""


# ---------------------------------------------------------------------------- the endpoint


class ContainerEndpoint(FrontServed):
    """One manifest endpoint served by the SageMaker Triton container behind the SageMaker Runtime front.

    Args:
        manifest: the build manifest.
        setup: the container's setup (:func:`setup_container`).
        docker: the ``docker`` CLI (:func:`find_docker`).
        front: a shared RuntimeFront (several endpoints behind one URL). Default: own front on a free port.
        start_timeout: seconds the container may take to answer ``/ping``. Default: 300.
        ecr: the ECR client for the login. Default: boto3's of the setup's region.
        say: where the lines said aloud go (MME moves at staging). Default: the log.
        async_location: an asynchronous endpoint's output folder or ``s3://`` prefix. Default: the
            manifest's folder (``endpoint.async_base``).
    """

    def __init__(
        self,
        manifest: Manifest,
        setup: ContainerSetup,
        *,
        docker: str = "docker",
        front: RuntimeFront | None = None,
        start_timeout: float = START_TIMEOUT_S,
        ecr: Any = None,
        say: Callable[[str], object] | None = None,
        async_location: str | None = None,
    ) -> None:
        self.manifest = manifest
        self.async_location = async_location
        self.setup = setup
        self.name = setup.endpoint
        self.entry = manifest.endpoint(setup.endpoint)
        self.docker = docker
        self.start_timeout = start_timeout
        self._ecr = ecr
        self._say = say or log.warning
        self._front_arg = front
        self.front: RuntimeFront | None = None
        self.server = ContainerServer(setup.port)
        self.models: ModelManager | None = None
        self.container_id: str | None = None
        self.image_source: str | None = None
        self.running = False

    @property
    def healthy(self) -> bool:
        """The container runs (the front's ``/ping`` reads this; :meth:`poll` refreshes it)."""
        return self.running

    @property
    def log_path(self) -> str:
        """Where the container's log is: ``docker logs <name>``."""
        return f"`docker logs {self.setup.name}`"

    def start(self) -> Self:
        """Make the image local, start the container, wait for ``/ping``, route the front to it."""
        try:
            self.image_source = ensure_image(self.setup, self.docker, client=self._ecr)
            self.container_id = (
                self.setup.name
            )  # from here on, stop removes it (a failed run may leave it created)
            out = _run(self.setup.docker_run(self.docker), timeout=300)
            if out.returncode != 0:
                raise LocalServerError(
                    f"`docker run` of endpoint {self.name} failed: {_tail(out)}",
                    code="ContainerStartFailed",
                )
            self.container_id = out.stdout.strip().splitlines()[-1] if out.stdout.strip() else self.setup.name
            self._wait_ready()
            if self.setup.multi_model:
                self.models = ModelManager(
                    server=self.server,
                    manifest=self.manifest,
                    entry=self.entry,
                    staging=self.setup.mount,
                    overlay=None,  # staged by _stage: as built, KIND_GPU moved without a GPU
                    prepare=self._stage,
                )
            self.front = self._front_arg or RuntimeFront().start()
            route = async_route(self.manifest, self.entry, self.async_location)
            if route is not None:
                self.front.add_async(self, route)
            else:
                self.front.add(self)
        except BaseException:
            self.stop()
            raise
        return self

    def _stage(self, target: TargetModel, dest: Path) -> list[OverlayChange]:
        return stage_target_model(self.manifest, target, dest, gpus=self.setup.gpus, say=self._say)

    def _wait_ready(self) -> None:
        deadline = time.monotonic() + self.start_timeout
        while time.monotonic() < deadline:
            if not self.poll():
                logs = _tail(_run([self.docker, "logs", "--tail", "40", self.setup.name]), 40)
                raise LocalServerError(
                    f"the container of endpoint {self.name} ({self.setup.image}) exited before /ping answered; "
                    f"its log ends:\n{logs}",
                    code="ContainerStartFailed",
                )
            with contextlib.suppress(OSError, http.client.HTTPException):
                if self.server.request("GET", "/ping")[0] == 200:
                    return
            time.sleep(0.5)
        raise LocalServerError(
            f"the container of endpoint {self.name} did not answer /ping within {self.start_timeout:g} s "
            f"(see {self.log_path}); raise --start-timeout for a large repository",
            code="ContainerStartFailed",
        )

    def poll(self) -> bool:
        """Whether the container still runs (``docker inspect``); sets :attr:`running`."""
        out = _run([self.docker, "inspect", "--format", "{{.State.Running}}", self.setup.name], timeout=30)
        self.running = out.returncode == 0 and out.stdout.strip() == "true"
        return self.running

    def stop(self) -> None:
        """Stop routing, then remove the container (``docker rm --force``)."""
        if self.front is not None:
            self.front.remove(self.name)
            if self._front_arg is None:
                self.front.stop()
            self.front = None
        if self.container_id is not None:
            _run([self.docker, "rm", "--force", self.setup.name], timeout=60)
            self.container_id = None
        self.running = False

    # ------------------------------------------------------------------ SageMaker's side of InvokeEndpoint
    def handle_invocation(self, body: bytes, headers: dict[str, str]) -> Reply:
        """Forward an invocation to the container as SageMaker does (called by the front)."""
        if not self.running:
            return aws_error(503, "ServiceUnavailable", f"endpoint {self.name} is not running")
        fwd = forward_headers(headers)
        target = headers.get(TARGET_MODEL_HEADER)
        try:
            if not self.setup.multi_model:
                if target is not None:
                    return aws_error(
                        400,
                        "ValidationError",
                        f"Endpoint {self.name} is not a multi-model endpoint: TargetModel is not supported",
                    )
                return self._reply(*self.server.request("POST", "/invocations", body, fwd))
            if not target:
                return aws_error(
                    400,
                    "ValidationError",
                    f"Endpoint {self.name} is a multi-model endpoint: TargetModel must be specified",
                )
            assert self.models is not None
            return invoke_target_model(self.models, self.server, target, body, fwd, self._reply)
        except (OSError, http.client.HTTPException) as exc:
            log.debug("endpoint %s: %s", self.name, exc)
            return aws_error(503, "ServiceUnavailable", f"endpoint {self.name} is not running")

    def _reply(self, status: int, headers: dict[str, str], body: bytes) -> Reply:
        account = self.front.account if self.front else "000000000000"
        return model_reply(status, headers, body, endpoint=self.name, log=self.log_path, account=account)


# ---------------------------------------------------------------------------- cdk-triton serve --runtime container


def _endpoint_names(manifest: Manifest, named: Sequence[str], say: Callable[[str], object]) -> list[str]:
    if named:
        return list(named)
    names = []
    for name in sorted(manifest.endpoints):
        if manifest.endpoint(name).hosting_mode.components:
            say(
                f"note: endpoint {name} (InferenceComponents) is left out: --runtime container does not serve it"
            )
            continue
        names.append(name)
    return names


def read_endpoints(args: argparse.Namespace, say: Callable[[str], object]) -> tuple[Manifest, list[str]]:
    """The manifest and the endpoints to serve (each name checked; the flags are ``commands``')."""
    manifest = read_manifest(args.manifest)
    names = _endpoint_names(manifest, args.endpoints or (), say)
    for name in names:
        manifest.endpoint(name)  # UnknownManifestEndpoint, before any copy is made
    return manifest, names


def setup_all(
    manifest: Manifest, names: Sequence[str], args: argparse.Namespace, say: Callable[[str], object]
) -> list[ContainerSetup]:
    """Plan every endpoint's container: its copy made, its notes said aloud."""
    gpus = bool(visible_gpus())
    root = Path(args.state_dir) / "container"
    setups = []
    for name in names:
        setup = setup_container(
            manifest,
            name,
            workdir=root / name,
            region=getattr(args, "region", None),
            gpus=gpus,
            env_pairs=args.env,
        )
        for note in setup.notes:
            say(note)
        setups.append(setup)
    return setups


def serve_container(args: argparse.Namespace) -> int:
    """``cdk-triton serve --runtime container``: setup, then print (``--dry-run``) or run and serve."""

    def say(line: str) -> None:
        print(line, file=sys.stderr, flush=True)

    manifest, names = read_endpoints(args, say)
    dry_run = bool(getattr(args, "dry_run", False))
    docker = "docker" if dry_run else find_docker()  # before any copy is made
    setups = setup_all(manifest, names, args, say)
    if dry_run:
        for setup in setups:
            say(
                f"note: endpoint {setup.endpoint}: without --dry-run, `docker image inspect {setup.image}` first; "
                f"when it is not local, an ECR login to registry {setup.registry_id} ({setup.region}) and "
                "`docker pull`"
            )
            print(setup.command_line(), flush=True)
        return 0
    front = RuntimeFront(port=args.port).start()
    served: list[ContainerEndpoint] = []
    stop = threading.Event()
    previous = signal.signal(signal.SIGTERM, lambda *_: stop.set())
    try:
        for setup in setups:
            timeout = max(args.start_timeout, START_TIMEOUT_S)
            ep = ContainerEndpoint(
                manifest,
                setup,
                docker=docker,
                front=front,
                start_timeout=timeout,
                say=say,
                async_location=getattr(args, "async_location", None),
            )
            print(f"endpoint {setup.endpoint}: {setup.command_line()}", flush=True)
            served.append(ep.start())
            print(
                f"endpoint {ep.name} ({ep.entry.mode}, image {ep.image_source}): "
                f"{front.url}/endpoints/{ep.name}/invocations -> 127.0.0.1:{setup.port}",
                flush=True,
            )
        print(
            f"boto3.client('sagemaker-runtime', endpoint_url='{front.url}', region_name='us-east-1', "
            "aws_access_key_id='x', aws_secret_access_key='x')",
            flush=True,
        )
        return _wait(served, stop)
    except KeyboardInterrupt:
        return 0
    finally:
        signal.signal(signal.SIGTERM, previous)
        for ep in served:
            ep.stop()
        front.stop()


def _wait(served: Sequence[ContainerEndpoint], stop: threading.Event, every: float = 2.0) -> int:
    """Until SIGTERM / Ctrl-C (0) or a container exits (1, its log's tail on stderr)."""
    while not stop.wait(every):
        for ep in served:
            if not ep.poll():
                logs = _tail(_run([ep.docker, "logs", "--tail", "40", ep.setup.name]), 40)
                print(f"the container of endpoint {ep.name} exited; its log ends:\n{logs}", file=sys.stderr)
                return 1
    return 0
