"""``LocalEndpoint``: one manifest endpoint served by a real Triton server behind a SageMaker Runtime front."""

from __future__ import annotations

import asyncio
import collections
import http.client
import logging
import os
import shutil
import tempfile
import threading
import time
import urllib.parse
from collections.abc import Callable, Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any

from cdk_triton.config import async_inference, layout
from cdk_triton.config.manifest import Manifest
from cdk_triton.config.server_options import ServerOptions, check_front, enforcement, hosting_options
from cdk_triton.config.server_options.front import MAX_INPUT_SIZE_FLAG, custom_attributes_header
from cdk_triton.config.tables import release
from cdk_triton.errors import TritonValidationError, raise_all
from cdk_triton.local.errors import LocalServerError
from cdk_triton.local.front import AsyncRoute, FrontServed, Reply, RuntimeFront, aws_error
from cdk_triton.local.mme import ModelLoadError, ModelManager, ModelNotReady, ModelServer, error_text
from cdk_triton.local.overlay import CpuOverlay, OverlayChange
from cdk_triton.local.repository import auto_complete_archives, prepare_sme_repository, uses_auto_complete
from cdk_triton.local.server import TritonServer
from cdk_triton.local.upstream import UpstreamPool

log = logging.getLogger("cdk_triton.local")

TARGET_MODEL_HEADER = "x-amzn-sagemaker-target-model"
#: Seconds a forwarded invocation may take (the synchronous path's server.request default).
UPSTREAM_TIMEOUT_S = 400.0


def forward_headers(headers: Mapping[str, str]) -> dict[str, str]:
    """The request headers the container sees: Content-Type (default JSON), Accept and CustomAttributes
    (``X-Amzn-SageMaker-Custom-Attributes``, the one header whose value the caller chooses)."""
    fwd = {"Content-Type": headers.get("content-type", "application/json")}
    for name in ("Accept", custom_attributes_header()):
        value = headers.get(name.lower())
        if value is not None:
            fwd[name] = value
    return fwd


def model_reply(
    status: int, headers: Mapping[str, str], body: bytes, *, endpoint: str, log: str, account: str
) -> Reply:
    """The container's answer as SageMaker Runtime returns it: a 2xx passed through (with the variant
    header), anything else ModelError 424 with OriginalStatusCode / OriginalMessage / LogStreamArn
    (``headers`` in lower case; ``log``: where the container's log is, for the message)."""
    if 200 <= status < 300:
        out = {
            "Content-Type": headers.get("content-type", "application/json"),
            "x-Amzn-Invoked-Production-Variant": "AllTraffic",
        }
        return status, out, body
    kind = "client" if status < 500 else "server"
    original = error_text(body)
    message = (
        f'Received {kind} error ({status}) from primary with message "{original}". '
        f"See the server log {log} for more information."
    )
    return aws_error(
        424,
        "ModelError",
        message,
        ErrorCode=f"{kind.upper()}_ERROR_FROM_MODEL",
        OriginalStatusCode=status,
        OriginalMessage=original,
        LogStreamArn=f"arn:aws:logs:local:{account}:log-group:"
        f"/aws/sagemaker/Endpoints/{endpoint}:log-stream:AllTraffic/local",
    )


def invoke_target_model(
    models: ModelManager,
    server: ModelServer,
    target: str,
    body: bytes,
    headers: dict[str, str],
    reply: Callable[[int, dict[str, str], bytes], Reply],
) -> Reply:
    """SageMaker's side of an MME invocation: the TargetModel loaded on demand (``models``), then
    ``POST /models/<name>/invoke``; an unknown TargetModel is SageMaker's download failure (400), a
    refused load the container's answer, a load still running ModelNotReadyException (429)."""
    try:
        with models.use(target) as tm:
            answer = server.request(
                "POST", f"/models/{urllib.parse.quote(tm.target_model, safe='')}/invoke", body, headers
            )
    except TritonValidationError:
        key = layout.target_model_uri(models.entry.s3_prefix or "", target)
        bucket, _, path = key.removeprefix("s3://").partition("/")
        return aws_error(
            400,
            "ValidationError",
            f"Failed to download model data(bucket: {bucket}, key: {path}). Please ensure that "
            "there is an object located at the URL and that the role passed to CreateModel has "
            "permissions to download the model.",
        )
    except ModelLoadError as exc:
        return reply(exc.status, {}, exc.server_message.encode())
    except ModelNotReady as exc:
        return aws_error(429, "ModelNotReadyException", str(exc))
    return reply(*answer)


def target_release_environment(triton_version: str) -> dict[str, str]:
    """The target release's ONNX Runtime limits, for the local onnxruntime backend to enforce."""
    try:
        rel = release(triton_version)
    except TritonValidationError:
        return {}
    env = {
        "CDK_TRITON_TARGET_ONNXRUNTIME": f"ONNX Runtime {rel.onnxruntime.value} of Triton {triton_version}"
    }
    if rel.onnx_max_opset is not None:
        env["CDK_TRITON_TARGET_ONNX_MAX_OPSET"] = str(rel.onnx_max_opset)
    if rel.onnx_max_ir_version is not None:
        env["CDK_TRITON_TARGET_ONNX_MAX_IR_VERSION"] = str(rel.onnx_max_ir_version)
    return env


def async_base(manifest: Manifest, location: str | None) -> str:
    """Where a local asynchronous endpoint's ``async/<endpoint>/...`` folders are: ``location`` (a folder,
    or ``s3://bucket/prefix/``, S3 through boto3: moto in tests) else the manifest's folder (``build/out``),
    the local stand-in of the artifact location the deployed endpoint's ``S3OutputPath`` is under."""
    if location:
        return location if location.endswith("/") else location + "/"
    return str(Path(manifest.path).parent if manifest.path else Path.cwd()) + "/"


def async_route(manifest: Manifest, entry: Any, location: str | None = None) -> AsyncRoute | None:
    """The front's async route of an endpoint with an ``async:`` block: output and failure under the
    layout's keys (``config.layout.async_output_key`` / ``async_failure_key``) below :func:`async_base`,
    and the block's ``invocation_timeout_s`` (else SageMaker's 15 minutes). None: a real-time endpoint."""
    values = getattr(entry, "async_inference", None)
    if values is None:
        return None
    base = async_base(manifest, location)
    timeout = values.invocation_timeout_s
    return AsyncRoute(
        output_location=base + layout.async_output_key(entry.name),
        failure_location=base + layout.async_failure_key(entry.name),
        invocation_timeout_s=timeout if timeout is not None else async_inference.DEFAULT_INVOCATION_TIMEOUT_S,
    )


class LocalEndpoint(FrontServed):
    """One endpoint of a build manifest, served locally by the real ``tritonserver`` on CPU.

    SME: the built repository (checked against the manifest's hashes, CPU overlay applied) is
    loaded with its default model. MME: the server starts empty and TargetModel archives load on
    demand, are evicted under ``memory_budget_bytes`` and after a 507.
    Use as a context manager, or call :meth:`start` / :meth:`stop`.

    Args:
        manifest: the build manifest.
        endpoint: the manifest's endpoint key.
        port: port of the 127.0.0.1 SageMaker Runtime front. Default: a free port.
        server_options: the same ServerOptions the constructs render to the container environment.
            Default: ``ServerOptions()`` (the container's defaults). ``multi_model`` and, for SME,
            ``default_model_name`` and ``load_models`` (from the manifest) are filled in. They are read as the ``serve``
            script of the manifest's ``triton_version`` passes them on: a setting without effect on
            that release is logged and dropped (:attr:`settings_without_effect`). A model with
            ``response_cache`` and no cache on the server raises ResponseCacheNotConfigured.
        overlay: the CPU overlay. Default: ``CpuOverlay()`` (one instance per core, one thread each).
        memory_budget_bytes: MME only: resident memory above which idle models are unloaded. Default: none.
        workdir: where the served copy, the backends and the server log go. Default: a temporary
            directory removed by :meth:`stop`.
        start_timeout: seconds before a start that is not ready fails. Default: 120.
        namespace: require (True), forbid (False) or prefer (None) a private network namespace. Default: None.
        front: a shared RuntimeFront to register with (several endpoints behind one URL). Default: own front.
        load_wait_timeout: MME: seconds to wait for a model another request is loading. Default: 60.
        max_restarts: restarts of a crashed server allowed within ``restart_window`` seconds; one more
            crash stops the endpoint (:attr:`failed`). Default: 3 within 60 s.
        restart_backoff: seconds before the 1st, 2nd, 3rd... restart of a window. Default: 1, 2, 4.
        ping_mode_inherited: SAGEMAKER_TRITON_PING_MODE is in the container environment too, so
            ``ping_mode`` reaches tritonserver (23.07+). Default: False.
    """

    def __init__(
        self,
        manifest: Manifest,
        endpoint: str,
        *,
        port: int | None = None,
        server_options: ServerOptions | None = None,
        overlay: CpuOverlay | None = None,
        memory_budget_bytes: int | None = None,
        workdir: str | os.PathLike[str] | None = None,
        start_timeout: float = 120.0,
        namespace: bool | None = None,
        front: RuntimeFront | None = None,
        load_wait_timeout: float = 60.0,
        max_restarts: int = 3,
        restart_window: float = 60.0,
        restart_backoff: tuple[float, ...] = (1.0, 2.0, 4.0),
        ping_mode_inherited: bool = False,
        async_location: str | None = None,
    ) -> None:
        self.manifest = manifest
        self.async_location = async_location
        self.entry = manifest.endpoint(endpoint)
        if self.entry.hosting_mode.components:
            raise ValueError(
                f"endpoint {endpoint} is InferenceComponents: serve it with cdk_triton.local.ComponentsEndpoint"
            )
        self.name = endpoint
        self.port = port
        self.overlay = overlay or CpuOverlay()
        self.memory_budget_bytes = memory_budget_bytes
        self.start_timeout = start_timeout
        self.namespace = namespace
        self.load_wait_timeout = load_wait_timeout
        # the mode, the default model and a python model's callees, as the constructs render them
        options = hosting_options(
            server_options or ServerOptions(),
            multi_model=self.entry.hosting_mode.loads_on_demand,
            default_model=self.entry.default_model,
            models=self.entry.models,
            load_models=self.entry.load_models or (),
        )
        options, self.settings_without_effect = options.validated().for_release(
            manifest.triton_version, ping_mode_inherited=ping_mode_inherited
        )
        front_errors, front_notes = check_front(options, manifest.triton_version)  # as at synth
        raise_all(front_errors)
        self.settings_without_effect += front_notes
        for note in self.settings_without_effect:
            log.warning("endpoint %s: %s", endpoint, note.message)
        #: what the SageMaker port of the manifest's release checks before it answers (the front applies it)
        self.enforcement = enforcement(options, manifest.triton_version)
        self.server_options = self._local_argv(options).validated()
        self._check_response_cache()
        self._workdir_arg = Path(workdir) if workdir is not None else None
        self.workdir: Path | None = None
        self._front_arg = front
        self.front: RuntimeFront | None = None
        self.server: TritonServer | None = None
        self.async_route: AsyncRoute | None = None
        self.models: ModelManager | None = None
        self.overlay_changes: list[OverlayChange] = []
        self.max_restarts = max_restarts
        self.restart_window = restart_window
        self.restart_backoff = restart_backoff
        #: monotonic times of the restarts after a crash (the most recent ``max_restarts + 1``)
        self.restarts: collections.deque[float] = collections.deque(maxlen=max_restarts + 1)
        #: set when the server crashed more than ``max_restarts`` times within ``restart_window``
        self.failed: LocalServerError | None = None
        self._restarting = False
        self._stopping = threading.Event()
        self._supervisor: threading.Thread | None = None
        self._upstream: UpstreamPool | None = None  # the front's kept-alive connections (SME fast path)

    def _local_argv(self, options: ServerOptions) -> ServerOptions:
        """``options`` without ``--http-max-input-size``: the local tritonserver 2.51 (24.10) does not know
        the flag, so the front enforces it (from 26.03, as that release's SageMaker port does)."""
        kept = tuple(a for a in options.additional_args if a.split("=", 1)[0] != MAX_INPUT_SIZE_FLAG)
        if kept == options.additional_args:
            return options
        limit = self.enforcement.max_input_size
        log.warning(
            "endpoint %s: %s is left off the local tritonserver's command line (tritonserver 2.51 does not know "
            "it); %s",
            self.name,
            MAX_INPUT_SIZE_FLAG,
            f"the local front refuses bodies over {limit} bytes as Triton {self.manifest.triton_version}'s "
            "SageMaker port does"
            if limit is not None
            else f"Triton {self.manifest.triton_version}'s SageMaker port does not apply it either",
        )
        return replace(options, additional_args=kept)

    def _refused(self, body: bytes, headers: Mapping[str, str]) -> Reply | None:
        """The container's refusal of an invocation (restricted header, body size, zero-length body) as
        the manifest's release answers it, surfaced as SageMaker does (ModelError 424); None: forward it."""
        seen = {k.lower(): v for k, v in forward_headers(headers).items()}
        refused = self.enforcement.refusal(body, seen, multi_model=self.entry.hosting_mode.loads_on_demand)
        if refused is None:
            return None
        return self._model_reply(refused[0], {"content-type": "application/json"}, refused[1])

    def _check_response_cache(self) -> None:
        """Models that enable response_cache need a cache on the server, as at synth (ResponseCacheNotConfigured)."""
        names = set(self.entry.models)
        for target in self.entry.target_models.values():
            names.update(target.models)
        cached = sorted(
            n
            for n in names
            if n in self.manifest.models
            and (self.manifest.models[n].config.get("response_cache") or {}).get("enable")
        )
        opts = self.server_options
        if not cached or opts.response_cache_byte_size is not None:
            return
        if any(a.startswith("--cache-config") for a in opts.additional_args):
            return
        raise TritonValidationError(
            "ResponseCacheNotConfigured",
            prop="server_options.response_cache_byte_size",
            value=None,
            problem=f"gives the Triton {self.manifest.triton_version} server no response cache (unset, or "
            f"a setting that release does not read), and {', '.join(cached)} enable response_cache: "
            "every request would run uncached",
            allowed="a cache size in bytes when a model sets response_cache: true",
            fix="pass server_options=ServerOptions(response_cache_byte_size=...) (cdk-triton serve: "
            "--env SAGEMAKER_TRITON_ADDITIONAL_ARGS=--cache-config=local,size=N) or drop response_cache",
        )

    # ------------------------------------------------------------------ lifecycle
    def start(self) -> LocalEndpoint:
        """Prepare the served copy, start the server (ready-checked) and the front."""
        self.workdir = self._workdir_arg or Path(tempfile.mkdtemp(prefix=f"cdk-triton-{self.name}-"))
        self.workdir.mkdir(parents=True, exist_ok=True)
        try:
            env = target_release_environment(self.manifest.triton_version)
            if self.entry.hosting_mode.loads_on_demand:
                repo = self.workdir / "empty-repository"
                repo.mkdir(exist_ok=True)
                staging = self.workdir / "opt-ml-models"
                staging.mkdir(exist_ok=True)
                self.server = TritonServer(
                    options=self.server_options,
                    model_repository=repo,
                    workdir=self.workdir,
                    mme_staging=staging,
                    extra_env=env,
                    start_timeout=self.start_timeout,
                    namespace=self.namespace,
                    auto_complete_config=uses_auto_complete(archives=self._archives()),
                )
                self.server.start()
                self.models = ModelManager(
                    server=self.server,
                    manifest=self.manifest,
                    entry=self.entry,
                    staging=staging,
                    overlay=self.overlay,
                    memory_budget_bytes=self.memory_budget_bytes,
                    load_wait_timeout=self.load_wait_timeout,
                )
            else:
                repo = self.workdir / "repository"
                self.overlay_changes = prepare_sme_repository(self.manifest, self.entry, repo, self.overlay)
                dirs = sorted(p.name for p in repo.iterdir() if p.is_dir())
                self.server = TritonServer(
                    options=self.server_options,
                    model_repository=repo,
                    workdir=self.workdir,
                    model_dirs=dirs,
                    extra_env=env,
                    start_timeout=self.start_timeout,
                    namespace=self.namespace,
                    auto_complete_config=uses_auto_complete(repo),
                )
                self.server.start()
            self.front = self._front_arg or RuntimeFront(port=self.port).start()
            self.front.add(self)
            self.async_route = async_route(self.manifest, self.entry, self.async_location)
            if self.async_route is not None:
                self.front.add_async(self, self.async_route)
            self._stopping.clear()
            self._supervisor = threading.Thread(
                target=self._supervise, name=f"cdk-triton-supervise-{self.name}", daemon=True
            )
            self._supervisor.start()
        except BaseException:
            self.stop()
            raise
        log.info("local endpoint %s ready at %s/endpoints/%s/invocations", self.name, self.url, self.name)
        return self

    def _archives(self) -> tuple[Path, ...]:
        """The MME archives whose python files decide auto-complete: one per distinct file (the
        manifest's sha256s), not every archive (5,000 TargetModels of one model.py: one read)."""
        return auto_complete_archives(self.manifest, self.entry)

    def stop(self) -> None:
        """Stop the front (if owned) and the server's whole process group; remove the temporary workdir."""
        self._stopping.set()
        if self._supervisor is not None and self._supervisor is not threading.current_thread():
            self._supervisor.join(timeout=150)
        self._supervisor = None
        if self.front is not None:
            self.front.remove(self.name)
            if self._front_arg is None:
                self.front.stop()
            self.front = None
        if self.server is not None:
            self.server.stop()
            self.server = None
        if (
            self.workdir is not None
            and self._workdir_arg is None
            and not os.environ.get("CDK_TRITON_KEEP_WORKDIR")
        ):
            shutil.rmtree(self.workdir, ignore_errors=True)
        self.workdir = None

    # ------------------------------------------------------------------ crash restart
    @property
    def healthy(self) -> bool:
        """The server runs and answers (False while a crashed server restarts, and after giving up)."""
        return (
            self.server is not None and self.server.running and not self._restarting and self.failed is None
        )

    def _supervise(self) -> None:
        """Restart a crashed server like SageMaker replaces a failed container (bounded, with backoff)."""
        while not self._stopping.wait(0.2):
            server = self.server
            if server is None or server.running:
                continue
            self._restarting = True
            now = time.monotonic()
            recent = [t for t in self.restarts if now - t < self.restart_window]
            if len(recent) >= self.max_restarts:
                self.failed = LocalServerError(
                    f"tritonserver of endpoint {self.name} crashed {len(recent) + 1} times within "
                    f"{self.restart_window:g} s; not restarting it again",
                    code="ServerCrashed",
                    log_path=str(server.log_path),
                )
                log.error("%s", self.failed)
                return
            delay = self.restart_backoff[min(len(recent), len(self.restart_backoff) - 1)]
            log.warning(
                "tritonserver of endpoint %s exited; restart %d in %g s (log %s)",
                self.name,
                len(recent) + 1,
                delay,
                server.log_path,
            )
            if self._stopping.wait(delay):
                return
            self.restarts.append(time.monotonic())
            try:
                server.stop()
                if self.models is not None:
                    self.models.reset()
                server.start()
            except (LocalServerError, OSError) as exc:  # counted: the next turn sees it not running
                # (an OSError preparing the restart, e.g. a file a leftover stub holds, must not end the
                # supervisor: the bounded restarts decide when to give up)
                log.error("restarting tritonserver of endpoint %s failed: %s", self.name, exc)
                continue
            self._restarting = False
            log.warning("tritonserver of endpoint %s restarted", self.name)

    @property
    def log_path(self) -> Path | None:
        return self.server.log_path if self.server else None

    # ------------------------------------------------------------------ calls (invoke: FrontInvoke)
    def container(
        self, method: str, path: str, body: bytes | None = None, headers: dict[str, str] | None = None
    ) -> Reply:
        """A raw call to Triton's SageMaker routes (``/ping``, ``/invocations``, ``/models...``)."""
        if self.server is None:
            raise RuntimeError("the local endpoint is not started")
        return self.server.request(method, path, body, headers)

    def handle_invocation(self, body: bytes, headers: dict[str, str]) -> Reply:
        """SageMaker's side of InvokeEndpoint for this endpoint (called by the front)."""
        server = self.server
        if server is None or not self.healthy:
            return aws_error(503, "ServiceUnavailable", f"endpoint {self.name} is not running")
        try:
            return self._forward(server, body, headers)
        except (OSError, http.client.HTTPException) as exc:  # the server died under this request
            log.debug("endpoint %s: %s", self.name, exc)
            return aws_error(503, "ServiceUnavailable", f"endpoint {self.name} is not running")

    async def handle_invocation_async(self, body: bytes, headers: Mapping[str, str]) -> Reply | None:
        """The single-model path on the front's event loop (no thread hop); None: use handle_invocation.

        ``headers`` is looked up in lower case (the front passes aiohttp's case-insensitive headers).
        Multi-model requests (loads may block) and every error path go to :meth:`handle_invocation`.
        """
        server = self.server
        if self.entry.hosting_mode.loads_on_demand or server is None or not self.healthy:
            return None
        if headers.get(TARGET_MODEL_HEADER) is not None:
            return None
        refused = self._refused(body, headers)
        if refused is not None:
            return refused
        pool = self._upstream
        if pool is None or pool.path != server.socket_path:
            pool = self._upstream = UpstreamPool(server.socket_path)
        try:
            async with asyncio.timeout(UPSTREAM_TIMEOUT_S):
                reply = await pool.request("POST", "/invocations", body, forward_headers(headers))
        except (OSError, asyncio.IncompleteReadError, asyncio.LimitOverrunError, ValueError) as exc:
            log.debug("endpoint %s: %s", self.name, exc)  # the server died under this request
            return aws_error(503, "ServiceUnavailable", f"endpoint {self.name} is not running")
        return self._model_reply(*reply)

    def _forward(self, server: TritonServer, body: bytes, headers: dict[str, str]) -> Reply:
        fwd = forward_headers(headers)
        target = headers.get(TARGET_MODEL_HEADER)
        if not self.entry.hosting_mode.loads_on_demand:
            if target is not None:
                return aws_error(
                    400,
                    "ValidationError",
                    f"Endpoint {self.name} is not a multi-model endpoint: TargetModel is not supported",
                )
            return self._refused(body, headers) or self._model_reply(
                *server.request("POST", "/invocations", body, fwd)
            )
        if not target:
            return aws_error(
                400,
                "ValidationError",
                f"Endpoint {self.name} is a multi-model endpoint: TargetModel must be specified",
            )
        refused = self._refused(body, headers)
        if refused is not None:
            return refused
        assert self.models is not None
        return invoke_target_model(self.models, server, target, body, fwd, self._model_reply)

    def _model_reply(self, status: int, headers: dict[str, str], body: bytes) -> Reply:
        return model_reply(
            status,
            headers,
            body,
            endpoint=self.name,
            log=str(self.log_path),
            account=self.front.account if self.front else "000000000000",
        )

    def describe(self) -> dict[str, Any]:
        """What is served: mode, URL, models, overlay changes, log."""
        return {
            "endpoint": self.name,
            "mode": self.entry.mode,
            "url": self.url if self.front else None,
            "default_model": self.server_options.default_model_name,
            "target_models": self.entry.target_model_map(),
            "log": str(self.log_path),
            "overlay": [f"{c.model} {c.field}: {c.before} -> {c.after}" for c in self.overlay_changes],
            "namespace": bool(self.server and self.server.namespace),
        }
