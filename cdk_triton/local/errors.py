"""Errors of the local endpoint, and the catalogue of their codes.

Bad input (a manifest entry, a request, a built artifact that changed) raises
:class:`~cdk_triton.errors.TritonValidationError` (exit code 2) with one of :data:`VALIDATION_ERRORS`;
a server that cannot start, answer or load raises :class:`LocalServerError` (exit code 1) with one of
:data:`SERVER_ERRORS`. The SageMaker Runtime front answers HTTP errors typed like SageMaker's
(:data:`FRONT_ERRORS`, the ``x-amzn-ErrorType`` header). Every code is tested in
``tests/unit/local/test_local_errors.py``.
"""

from __future__ import annotations

from cdk_triton.config.errors import pick
from cdk_triton.errors import CdkTritonError

#: Input errors (TritonValidationError): code -> what it means.
VALIDATION_ERRORS: dict[str, str] = {
    "InvalidServeFlag": "a `cdk-triton serve` flag out of range (--port outside 1..65535; --instance-count, "
    "--memory-budget-mb or --start-timeout not positive), refused before anything starts",
    "UnsupportedDatatype": "a request tensor's datatype or an input's numpy dtype that KServe v2 / Triton does not have",
    "TargetModelOnSingleModelEndpoint": "a target model given for a single-model endpoint",
    "UnknownTargetModel": "a target model that is neither a logical name of the endpoint nor its hashed TargetModel value",
    "TargetModelRequired": "a multi-model endpoint invoked with its sample but no target model",
    "ComponentOnOtherEndpoint": "`invoke --component` (a component) given for an endpoint that is not InferenceComponents",
    "ComponentRequired": "an InferenceComponents endpoint invoked with its sample but no component",
    "UnknownInferenceComponent": "a component that is neither a logical name of the endpoint nor its component name",
    "NoSample": "the manifest has no sample request for the endpoint or target model",
    "LocalEndpointNotRunning": "invoke/bench of an endpoint with no state file, or whose `serve` process is gone",
    "LocalEndpointAlreadyServed": "`serve --detach` of an endpoint a running detached serve already serves",
    "ArtifactMissing": "a repository, archive or model file the manifest lists does not exist",
    "LocalPythonEnvMissing": "a python model's environment is packed for another Python than the local stub's "
    "and the build left no variant for this one",
    "ArtifactHashMismatch": "a built artifact's sha256 differs from the manifest's (it changed after the build)",
    "UnsafeArchiveMember": "an archive member that is not a file, directory or link inside the archive root",
    "InvalidModelConfig": "a config.pbtxt that does not parse as a Triton ModelConfig",
    "ContainerServeFlag": "a `cdk-triton serve` flag that does not go with its --runtime (--detach, --instance-count "
    "or --memory-budget-mb with container; --dry-run or --region without it), or an InferenceComponents endpoint "
    "named for --runtime container",
}

#: Codes of ``cdk_triton.config.errors`` the local endpoint raises (rules it checks as synth does).
SURFACED: dict[str, str] = pick(
    (
        "ResponseCacheNotConfigured",
        "InvalidEnvironmentValue",
        "ComponentDoesNotFit",
        "RestrictedApiUnreachable",
        "ImageNotInRegion",
    )
)

#: Server errors (LocalServerError): code -> what it means.
SERVER_ERRORS: dict[str, str] = {
    "TritonNotInstalled": "nvidia-pytriton is not installed, or its install lacks tritonserver or the stub",
    "TritonStubBroken": "the python backend stub has unresolved libraries (it would hang the server)",
    "TargetRuntimeUnavailable": "`serve --runtime target` where the release's runtime environment cannot be "
    "created (no package index, no wheel for this Python)",
    "InvalidShmPrefix": "CDK_TRITON_SHM_PREFIX holds characters other than letters, digits and '_'",
    "NamespaceUnavailable": "a private namespace is required (namespace=True, or a multi-model endpoint) and none can be made",
    "ServerStartFailed": "tritonserver exited before it was ready (the message holds the log tail)",
    "ServerStartTimeout": "tritonserver was not ready within start_timeout (its process group is killed)",
    "DetachedServeFailed": "the `serve --detach` process exited before its endpoints were ready (the message holds "
    "its log's tail)",
    "DetachedServeTimeout": "the `serve --detach` process did not publish every endpoint within start_timeout per "
    "endpoint plus 10 s (its process group is stopped)",
    "ModelLoadFailed": "the server refused to load a TargetModel (after unloading idle models on a 507)",
    "ServerCrashed": "tritonserver crashed more than 3 times within 60 s (each crash is restarted after 1, 2, 4 s); "
    "the message names the log",
    "ModelNotReady": "a TargetModel another request is loading is still not loaded after load_wait_timeout",
    "DockerUnavailable": "`serve --runtime container` without Docker: no `docker` on PATH, or its daemon does not "
    "answer (fixes: install or start Docker, or --runtime stand-in / target)",
    "ImagePullFailed": "`serve --runtime container` could not make the SageMaker Triton image local: "
    "ecr:GetAuthorizationToken, `docker login` or `docker pull` failed (the message names which)",
    "ContainerStartFailed": "`serve --runtime container`: `docker run` failed, or the container exited or did not "
    "answer /ping within the start timeout (the message holds its log's tail)",
}

#: The front's HTTP errors, typed like SageMaker Runtime's (``x-amzn-ErrorType``): code -> when.
FRONT_ERRORS: dict[str, str] = {
    "ValidationError": "400: unknown endpoint or TargetModel, TargetModel on an SME or missing on an MME, "
    "no or several Host headers; on an InferenceComponents endpoint a missing InferenceComponentName (SageMaker's "
    "text: 'Inference Component Name header is required for endpoints to which you plan to deploy inference "
    "components. Please include Inference Component Name header or consider using SageMaker models.') or an "
    "unknown one ('Inference Component <name> of endpoint <endpoint> not found.', cdk-triton's text) or a "
    "TargetModel; 413: a body over 6 MiB (answered unread)",
    "ModelError": "424: the container answered non-2xx (OriginalStatusCode, OriginalMessage, LogStreamArn)",
    "ModelNotReadyException": "429: the TargetModel is still loading after load_wait_timeout",
    "InternalFailure": "500: the local endpoint raised while handling the request",
    "ServiceUnavailable": "503: the endpoint's server is not running",
    "UnknownOperationException": "404: a route other than POST /endpoints/<name>/invocations and GET /ping; "
    "405 (with Allow): another method on one of those routes",
    "AccessDeniedException": "403: a Host other than 127.0.0.1:PORT, localhost:PORT or [::1]:PORT, a non-local "
    "Origin, or Sec-Fetch-Site cross-site / same-site (DNS rebinding, a web page's cross-origin POST)",
    "RequestTimeout": "408: the request body did not arrive within the front's body_timeout (60 s)",
}

#: The codes the local endpoint owns (TritonValidationError or LocalServerError).
ALL_CODES: dict[str, str] = {**VALIDATION_ERRORS, **SERVER_ERRORS}


class LocalServerError(CdkTritonError, RuntimeError):
    """The local Triton server could not start, answer or stop. ``log_path`` names the server log."""

    def __init__(self, message: str, *, code: str = "LocalServerFailed", log_path: str | None = None):
        self.code = code
        self.log_path = log_path
        text = f"{message} [{code}]"
        if log_path:
            text += f" (server log: {log_path})"
        super().__init__(text)
