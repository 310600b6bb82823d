"""Triton server options: one typed value object rendered two ways.

``ServerOptions.to_environment()`` gives the SageMaker container environment (what the constructs
set on the Model); ``ServerOptions.to_argv()`` gives the ``tritonserver`` arguments the container's
``serve`` script derives from that environment (what the local endpoint runs). Keeping both in one
place is what makes the local endpoint start the server the way SageMaker does.
Standard library only.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, fields, replace

from cdk_triton.config.server_options.checks import CHECKS
from cdk_triton.config.server_options.release import (
    OVERRIDE_PING_MODE,
    PING_MODE,
    NoEffect,
    effective_environment,
)
from cdk_triton.config.server_options.settings import (
    DEFAULT_GRPC_PORT,
    DEFAULT_METRICS_PORT,
    DEFAULT_PORT,
    DEFAULT_SHM_DEFAULT_BYTE_SIZE,
    DEFAULT_SHM_GROWTH_BYTE_SIZE,
    DEFAULT_THREAD_COUNT,
    ENV_ALLOWED,
    ENV_FIELDS,
    InferenceType,
    PingMode,
    check_raw_environment,
    flag_text,
    parse_env_value,
    resolve_default_model,
)
from cdk_triton.errors import TritonValidationError, raise_all

#: the ``tritonserver`` flag that loads one model at start in explicit model control (repeatable)
LOAD_MODEL_FLAG = "--load-model"


@dataclass(frozen=True, kw_only=True, slots=True)
class ServerOptions:
    """Every option of the SageMaker Triton container. ``None`` means the container's default.

    Attributes:
        multi_model: MME (``SAGEMAKER_MULTI_MODEL=true``). Default: False (single model).
        default_model_name: SME model behind ``/invocations`` (for an ensemble, the ensemble).
            Default: the only top-level model directory.
        ping_mode: what ``/ping`` checks. Default: ready (SME) / live (MME).
        model_namespacing: ``--model-namespacing``. Default: True. Rendered to
            SAGEMAKER_TRITON_DISABLE_MODEL_NAMESPACING whose value is passed through as is, so
            ``false`` disables namespacing (the variable's name is inverted).
        port: SageMaker HTTP port. Default: 8080.
        safe_port_range: ``(lo, hi)`` for ``--sagemaker-safe-port-range``. Default: none.
        allow_grpc / grpc_port: Default: off / 8001.
        allow_metrics / metrics_port: Prometheus metrics. Default: off / 8002.
        thread_count: ``--sagemaker-thread-count``. Default: 8.
        buffer_manager_thread_count: Default: 0.
        log_verbose: verbosity level (0 = off). Default: verbose on (level 1).
        log_info / log_warning / log_error: Default: on.
        shm_default_byte_size / shm_growth_byte_size: python backend shared memory.
            Default: 16 MiB / 1 MiB.
        tensorflow_version: Default: none.
        model_load_gpu_limit: fraction (0, 1] of each GPU's memory models may take. Default: none.
        inference_type: Default: infer.
        response_cache_byte_size: enables Triton's local response cache of this size (rendered into
            the additional arguments as ``--cache-config=local,size=N``). Default: no cache.
        load_models: SME: models loaded at start beside ``default_model_name``, each rendered into the
            additional arguments as ``--load-model=<name>`` (the ``serve`` script's ``--load-model`` of the
            default model loads an ensemble's steps, not the models a python model calls: business logic
            scripting). Filled from the manifest's ``load_models`` by ``ModelArtifacts.from_manifest``.
            Default: none.
        additional_args: extra ``tritonserver`` arguments. Default: none.
        publish_metrics_to_cloudwatch / cloudwatch_log_group / cloudwatch_metric_namespace:
            CloudWatch publishing of Triton's metrics (AWS images 23.07+). Default: off.
    """

    multi_model: bool = False
    default_model_name: str | None = None
    ping_mode: PingMode | None = None
    model_namespacing: bool | None = None
    port: int | None = None
    safe_port_range: tuple[int, int] | None = None
    allow_grpc: bool | None = None
    grpc_port: int | None = None
    allow_metrics: bool | None = None
    metrics_port: int | None = None
    thread_count: int | None = None
    buffer_manager_thread_count: int | None = None
    log_verbose: int | None = None
    log_info: bool | None = None
    log_warning: bool | None = None
    log_error: bool | None = None
    shm_default_byte_size: int | None = None
    shm_growth_byte_size: int | None = None
    tensorflow_version: str | None = None
    model_load_gpu_limit: float | None = None
    inference_type: InferenceType | None = None
    response_cache_byte_size: int | None = None
    load_models: tuple[str, ...] = ()
    additional_args: tuple[str, ...] = ()
    publish_metrics_to_cloudwatch: bool = False
    cloudwatch_log_group: str | None = None
    cloudwatch_metric_namespace: str | None = None

    # ------------------------------------------------------------------ validation
    def validate(self, *, path: str | None = None) -> list[TritonValidationError]:
        """Every problem with these options (empty when valid): each of ``CHECKS`` in order."""
        return [e if path is None else e.at(path) for check in CHECKS for e in check(self)]

    def validated(self, *, path: str | None = None) -> ServerOptions:
        """Return self, or raise every problem at once."""
        raise_all(self.validate(path=path))
        return self

    # ------------------------------------------------------------------ environment
    def to_environment(self) -> dict[str, str]:
        """The container environment for these options (only what differs from unset)."""
        env: dict[str, str] = {}
        if self.multi_model:
            env["SAGEMAKER_MULTI_MODEL"] = "true"
        if self.default_model_name is not None:
            env["SAGEMAKER_TRITON_DEFAULT_MODEL_NAME"] = self.default_model_name
        if self.ping_mode is not None:
            env["SAGEMAKER_TRITON_OVERRIDE_PING_MODE"] = PingMode(self.ping_mode).value
        if self.model_namespacing is not None:
            env["SAGEMAKER_TRITON_DISABLE_MODEL_NAMESPACING"] = flag_text(self.model_namespacing)
        if self.port is not None:
            env["SAGEMAKER_BIND_TO_PORT"] = str(self.port)
        if self.safe_port_range is not None:
            env["SAGEMAKER_SAFE_PORT_RANGE"] = f"{self.safe_port_range[0]}-{self.safe_port_range[1]}"
        allow_metrics = self.allow_metrics
        if self.publish_metrics_to_cloudwatch and allow_metrics is None:
            allow_metrics = True
        for name, value in (
            ("SAGEMAKER_TRITON_ALLOW_GRPC", self.allow_grpc),
            ("SAGEMAKER_TRITON_ALLOW_METRICS", allow_metrics),
            ("SAGEMAKER_TRITON_LOG_INFO", self.log_info),
            ("SAGEMAKER_TRITON_LOG_WARNING", self.log_warning),
            ("SAGEMAKER_TRITON_LOG_ERROR", self.log_error),
        ):
            if value is not None:
                env[name] = flag_text(value)
        metrics_port = self.metrics_port
        if self.publish_metrics_to_cloudwatch and metrics_port is None:
            metrics_port = DEFAULT_METRICS_PORT
        for name, ivalue in (
            ("SAGEMAKER_TRITON_GRPC_PORT", self.grpc_port),
            ("SAGEMAKER_TRITON_METRICS_PORT", metrics_port),
            ("SAGEMAKER_TRITON_THREAD_COUNT", self.thread_count),
            ("SAGEMAKER_TRITON_BUFFER_MANAGER_THREAD_COUNT", self.buffer_manager_thread_count),
            ("SAGEMAKER_TRITON_LOG_VERBOSE", self.log_verbose),
            ("SAGEMAKER_TRITON_SHM_DEFAULT_BYTE_SIZE", self.shm_default_byte_size),
            ("SAGEMAKER_TRITON_SHM_GROWTH_BYTE_SIZE", self.shm_growth_byte_size),
        ):
            if ivalue is not None:
                env[name] = str(ivalue)
        if self.tensorflow_version is not None:
            env["SAGEMAKER_TRITON_TENSORFLOW_VERSION"] = self.tensorflow_version
        if self.model_load_gpu_limit is not None:
            env["SAGEMAKER_TRITON_MODEL_LOAD_GPU_LIMIT"] = repr(float(self.model_load_gpu_limit))
        if self.inference_type is not None:
            env["SAGEMAKER_TRITON_INFERENCE_TYPE"] = InferenceType(self.inference_type).value
        extra = self._all_additional_args()
        if extra:
            env["SAGEMAKER_TRITON_ADDITIONAL_ARGS"] = " ".join(extra)
        if self.publish_metrics_to_cloudwatch:
            env["SAGEMAKER_TRITON_PUBLISH_METRICS_TO_CLOUDWATCH"] = "true"
            if self.cloudwatch_log_group is not None:
                env["SAGEMAKER_TRITON_CLOUDWATCH_LOG_GROUP"] = self.cloudwatch_log_group
            if self.cloudwatch_metric_namespace is not None:
                env["SAGEMAKER_TRITON_CLOUDWATCH_METRIC_NAMESPACE"] = self.cloudwatch_metric_namespace
        return env

    def _all_additional_args(self) -> list[str]:
        extra = [f"{LOAD_MODEL_FLAG}={name}" for name in self.load_models] + list(self.additional_args)
        if self.response_cache_byte_size is not None:
            extra.insert(0, f"--cache-config=local,size={self.response_cache_byte_size}")
        return extra

    @classmethod
    def from_environment(
        cls, env: Mapping[str, str], *, path: str | None = None, triton_version: str | None = None
    ) -> ServerOptions:
        """Parse a container environment back into options.

        Variables that are not SageMaker Triton settings are ignored; an unknown
        ``SAGEMAKER_TRITON_*`` name is an error naming the closest valid one.

        Args:
            env: the container environment.
            path: the construct path or file the errors name. Default: none.
            triton_version: read ``env`` as the ``serve`` script of this release does
                (``effective_environment``): a variable that release does not pass on to
                ``tritonserver`` leaves its field at the container's default. Default: every
                variable is read (the newest script).
        """
        raise_all(check_raw_environment(env, path=path))
        if triton_version is not None:
            env = effective_environment(env, triton_version)[0]
        kwargs: dict[str, object] = {}
        errs: list[TritonValidationError] = []
        for name, value in env.items():
            field = ENV_FIELDS.get(name)
            if field is None:
                continue
            try:
                kwargs[field] = parse_env_value(field, value)
            except ValueError:
                errs.append(
                    TritonValidationError(
                        "InvalidEnvironmentValue",
                        prop=name,
                        value=value,
                        problem="cannot be parsed",
                        allowed=ENV_ALLOWED.get(field, "a valid value"),
                        fix=f"set {name} to {ENV_ALLOWED.get(field, 'a valid value')}",
                        path=path,
                    )
                )
        raise_all(errs)
        extra = kwargs.get("additional_args")
        if isinstance(extra, tuple):
            rest, loads = [], []
            for arg in extra:
                if arg.startswith("--cache-config=local,size="):
                    kwargs["response_cache_byte_size"] = int(arg.rsplit("=", 1)[1])
                elif arg.startswith(f"{LOAD_MODEL_FLAG}="):
                    loads.append(arg.split("=", 1)[1])
                else:
                    rest.append(arg)
            kwargs["additional_args"] = tuple(rest)
            if loads:
                kwargs["load_models"] = tuple(loads)
        return cls(**kwargs)  # type: ignore[arg-type]

    # ------------------------------------------------------------------ argv
    def to_argv(
        self,
        *,
        model_repository: str,
        model_dirs: list[str] | None = None,
        gpu_count: int = 0,
    ) -> list[str]:
        """The ``tritonserver`` arguments the container's ``serve`` script builds from this environment.

        Args:
            model_repository: the SME repository (or an empty directory for MME).
            model_dirs: the top-level model directories of an SME repository, to apply the
                serve script's default-model rule when ``default_model_name`` is unset.
            gpu_count: GPUs on the host (``--model-load-gpu-limit`` is repeated per GPU).
        """
        argv = [
            "--allow-sagemaker=true",
            "--allow-http=false",
            "--model-control-mode=explicit",
            f"--model-repository={model_repository}",
            f"--model-namespacing={flag_text(self.model_namespacing is not False)}",
            f"--sagemaker-port={self.port if self.port is not None else DEFAULT_PORT}",
        ]
        if self.safe_port_range is not None:
            argv.append(f"--sagemaker-safe-port-range={self.safe_port_range[0]}-{self.safe_port_range[1]}")
        argv.append(f"--allow-grpc={flag_text(bool(self.allow_grpc))}")
        if self.allow_grpc:
            argv.append(f"--grpc-port={self.grpc_port or DEFAULT_GRPC_PORT}")
        allow_metrics = bool(self.allow_metrics) or (
            self.publish_metrics_to_cloudwatch and self.allow_metrics is None
        )
        argv.append(f"--allow-metrics={flag_text(allow_metrics)}")
        if allow_metrics:
            argv.append(f"--metrics-port={self.metrics_port or DEFAULT_METRICS_PORT}")
        if self.buffer_manager_thread_count is not None:
            argv.append(f"--buffer-manager-thread-count={self.buffer_manager_thread_count}")
        argv.append(f"--sagemaker-thread-count={self.thread_count or DEFAULT_THREAD_COUNT}")
        argv.append(f"--log-verbose={1 if self.log_verbose is None else self.log_verbose}")
        for flag, value in (
            ("--log-info", self.log_info),
            ("--log-warning", self.log_warning),
            ("--log-error", self.log_error),
        ):
            if value is not None:
                argv.append(f"{flag}={flag_text(value)}")
        argv.append(
            "--backend-config=python,shm-default-byte-size="
            f"{self.shm_default_byte_size or DEFAULT_SHM_DEFAULT_BYTE_SIZE}"
        )
        argv.append(
            "--backend-config=python,shm-growth-byte-size="
            f"{self.shm_growth_byte_size or DEFAULT_SHM_GROWTH_BYTE_SIZE}"
        )
        if self.tensorflow_version is not None:
            argv.append(f"--backend-config=tensorflow,version={self.tensorflow_version}")
        if self.model_load_gpu_limit is not None:
            for gpu in range(gpu_count):
                argv += ["--model-load-gpu-limit", f"{gpu}:{self.model_load_gpu_limit}"]
        if not self.multi_model:
            name = self.default_model_name
            if name is None and model_dirs is not None:
                name = resolve_default_model(model_dirs)
            if name is not None:
                argv.append(f"--load-model={name}")
        argv += self._all_additional_args()
        return argv

    def server_environment(self, *, model_dirs: list[str] | None = None) -> dict[str, str]:
        """Variables the ``tritonserver`` binary itself reads (the serve script exports these).

        Args:
            model_dirs: SME top-level model directories. With ``default_model_name`` unset and a
                single directory, the serve script exports SAGEMAKER_TRITON_DEFAULT_MODEL_NAME for
                it (the binary's ``/invocations`` needs it), as ``to_argv`` adds ``--load-model``.
        """
        env: dict[str, str] = {}
        if not self.multi_model:
            name = self.default_model_name
            if name is None and model_dirs is not None:
                name = resolve_default_model(model_dirs)
            if name is not None:
                env["SAGEMAKER_TRITON_DEFAULT_MODEL_NAME"] = name
        mode = self.ping_mode
        if mode is not None:
            env["SAGEMAKER_TRITON_PING_MODE"] = PingMode(mode).value
        if self.inference_type is not None:
            env["SAGEMAKER_TRITON_INFERENCE_TYPE"] = InferenceType(self.inference_type).value
        return env

    def for_release(
        self, triton_version: str | None, *, ping_mode_inherited: bool = False
    ) -> tuple[ServerOptions, list[NoEffect]]:
        """These options as the ``serve`` script of ``triton_version`` passes them on, and the settings
        that have no effect there (each a ``NoEffect`` naming the variable and why).

        Args:
            triton_version: the image's release. None (a custom image): unchanged, no notes.
            ping_mode_inherited: SAGEMAKER_TRITON_PING_MODE is also in the container environment
                (the only way ``ping_mode`` reaches ``tritonserver`` from 23.07). Default: False.
        """
        env = self.to_environment()
        if ping_mode_inherited:
            env[PING_MODE] = env.get(OVERRIDE_PING_MODE, "")
        effective, notes = effective_environment(env, triton_version)
        if not notes and effective == env:
            return self, []
        return ServerOptions.from_environment(effective), notes

    def with_defaults_for(self, *, multi_model: bool) -> ServerOptions:
        return replace(self, multi_model=multi_model)


_KNOWN_FIELDS = {f.name for f in fields(ServerOptions)}
assert set(ENV_FIELDS.values()) <= _KNOWN_FIELDS


# ---------------------------------------------------------------------- the hosting mode's container
#: Where SageMaker puts a single-model endpoint's model repository in the container.
SME_MODEL_DIR = "/opt/ml/model"
#: Where SageMaker stages a multi-model endpoint's archives (``<dir>/<alnum>/model``).
MME_MODELS_DIR = "/opt/ml/models"


def hosting_options(
    options: ServerOptions,
    *,
    multi_model: bool,
    default_model: str | None,
    models: Sequence[str] = (),
    load_models: Sequence[str] = (),
) -> ServerOptions:
    """The options the hosting mode and the artifacts imply: the one author of what the constructs render
    into the Model's ``Environment`` and ``cdk-triton serve --runtime container`` passes to ``docker run``.

    ``multi_model`` comes from the hosting mode; for a single-model endpoint the model behind
    ``/invocations`` (``default_model``, else the only entry of ``models``: the binary reads
    SAGEMAKER_TRITON_DEFAULT_MODEL_NAME even where ``serve`` could pick the only model) and the models loaded
    beside it (``load_models``: the callees of a python model) fill what ``options`` leaves unset.
    """
    opts = replace(options, multi_model=multi_model)
    if not multi_model and load_models and not opts.load_models:
        opts = replace(opts, load_models=tuple(load_models))
    if not multi_model and opts.default_model_name is None:
        default = default_model or (models[0] if len(models) == 1 else None)
        if default is not None:
            opts = replace(opts, default_model_name=default)
    return opts


def sagemaker_environment(
    options: ServerOptions,
    *,
    cloudwatch_log_group: str | None = None,
    extra: Mapping[str, str] | None = None,
) -> dict[str, str]:
    """The container ``Environment`` of a Triton Model: the options' variables, then CloudWatch publishing
    to ``cloudwatch_log_group`` (a log group the construct defines), then ``extra`` (raw variables the
    options do not manage). The constructs write it into the template; the local container gets it."""
    env = options.to_environment()
    if cloudwatch_log_group is not None:
        env["SAGEMAKER_TRITON_PUBLISH_METRICS_TO_CLOUDWATCH"] = "true"
        env["SAGEMAKER_TRITON_CLOUDWATCH_LOG_GROUP"] = cloudwatch_log_group
    env.update(extra or {})
    return env
