"""``ComponentsEndpoint``: an InferenceComponents endpoint served locally the way SageMaker routes it.

SageMaker runs each inference component in containers of its own and routes an ``InvokeEndpoint`` by
its ``InferenceComponentName`` (the ``X-Amzn-SageMaker-Inference-Component`` header). Here each
component runs in its own ``tritonserver`` (its own process group, network namespace and
shared-memory prefix): a single-model server whose repository is the component's archive (the MME
archive of the model with its ensemble steps) and whose ``SAGEMAKER_TRITON_DEFAULT_MODEL_NAME`` is the
archive's top model, as the component's container is started. The front routes to it by the header:
the component's logical name or the manifest's component name. A request without the header, or
naming no component of the endpoint, is a ``ValidationError`` 400 (:data:`MISSING_COMPONENT_MESSAGE`
is SageMaker's text, :func:`unknown_component_message` ours).

Before any server starts, every component's compute requirements are checked against the endpoint's
instance type (``config.sizing.component_fit_problems``, the rule build and synth apply): what would never fit a SageMaker instance is
refused with ``ComponentDoesNotFit``.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from cdk_triton.config import components as rules
from cdk_triton.config import sizing
from cdk_triton.config.manifest import SINGLE_MODEL, ComponentEntry, EndpointEntry, Manifest
from cdk_triton.errors import raise_all
from cdk_triton.local.endpoint import TARGET_MODEL_HEADER, LocalEndpoint
from cdk_triton.local.errors import LocalServerError
from cdk_triton.local.front import FrontServed, Reply, RuntimeFront, aws_error

log = logging.getLogger("cdk_triton.local")

#: The header boto3 sends for ``invoke_endpoint(..., InferenceComponentName=...)`` (lower case).
COMPONENT_HEADER = "x-amzn-sagemaker-inference-component"
#: SageMaker's answer to an InvokeEndpoint without InferenceComponentName on a components endpoint
#: (``data/inference-components.json``: its source).
MISSING_COMPONENT_MESSAGE = rules.limits()["invoke_errors"]["missing_component"]["message"]


def unknown_component_message(component: str, endpoint: str) -> str:
    """The ValidationError text for an InferenceComponentName the endpoint does not host (cdk-triton's
    text: SageMaker's was not found in a source; ``data/inference-components.json``)."""
    template: str = rules.limits()["invoke_errors"]["unknown_component"]["message"]
    return template.format(component=component, endpoint=endpoint)


def required_memory_mb(manifest: Manifest, entry: EndpointEntry, component: ComponentEntry) -> int | None:
    """The component's memory requirement: ``config.sizing.component_min_memory_mb`` (as declared, else
    derived from its models' recorded memory as synth derives it); None when neither is known."""
    target = entry.target_models[component.target_model]
    models = [manifest.models[m] for m in target.models if m in manifest.models]
    return sizing.component_min_memory_mb(component.min_memory_mb, models)


def check_components_fit(manifest: Manifest, entry: EndpointEntry, instance_type: str | None = None) -> None:
    """Raise ``ComponentDoesNotFit`` for every component one instance of ``instance_type`` (default: the
    endpoint's first instance type) cannot hold, as the deployment would meet it
    (``config.sizing.component_fit_problems``: the rule of build and synth)."""
    raise_all(sizing.component_fit_problems(manifest.models, entry, instance_type))


def single_model_entry(entry: EndpointEntry, component: ComponentEntry) -> EndpointEntry:
    """What the component's own container serves: a single-model endpoint whose repository is the
    component's archive and whose default model is the archive's top model."""
    target = entry.target_models[component.target_model]
    return EndpointEntry(
        name=component.component_name,
        mode=SINGLE_MODEL,
        instance_types=list(entry.instance_types),
        gpu_architectures=list(entry.gpu_architectures),
        default_model=target.model,
        models=list(target.models),
        packaging="tar.gz",
        local_path=target.local_path,
        s3_uri=target.s3_uri,
        sha256=target.sha256,
        size_bytes=target.size_bytes,
        sample=target.sample,
        inference_ami_version=entry.inference_ami_version,
    )


class _Unrouted:
    """The front of a component's server: never listened on (the endpoint's front routes to it)."""

    def __init__(self, front: RuntimeFront | None) -> None:
        self._front = front

    @property
    def account(self) -> str:
        return self._front.account if self._front is not None else "000000000000"

    @property
    def url(self) -> str:
        return self._front.url if self._front is not None else ""

    def add(self, endpoint: object) -> None:
        return None

    def remove(self, name: str) -> None:
        return None


class ComponentsEndpoint(FrontServed):
    """An InferenceComponents endpoint of a build manifest: one local server per component behind one
    SageMaker Runtime route. The interface of :class:`~cdk_triton.local.endpoint.LocalEndpoint`
    (``start``, ``stop``, ``url``, ``invoke``, ``describe``, ``healthy``, ``failed``).

    Args:
        manifest: the build manifest.
        endpoint: the manifest's endpoint key (an InferenceComponents endpoint).
        instance_type: the instance type the fit check uses. Default: the endpoint's first.
        port: port of the 127.0.0.1 front. Default: a free port.
        front: a shared RuntimeFront. Default: its own.
        **server_kwargs: passed to each component's server (``LocalEndpoint``'s keywords:
            ``server_options``, ``overlay``, ``start_timeout``, ``namespace``, ...).

    Raises:
        TritonValidationError: ``ComponentDoesNotFit`` (before anything starts).
    """

    def __init__(
        self,
        manifest: Manifest,
        endpoint: str,
        *,
        instance_type: str | None = None,
        port: int | None = None,
        front: RuntimeFront | None = None,
        **server_kwargs: Any,
    ) -> None:
        self.manifest = manifest
        self.entry = manifest.endpoint(endpoint)
        self.name = endpoint
        self.port = port
        if not self.entry.hosting_mode.components:
            raise ValueError(f"endpoint {endpoint} is {self.entry.mode}, not InferenceComponents")
        check_components_fit(manifest, self.entry, instance_type)
        self._front_arg = front
        self.front: RuntimeFront | None = None
        self.server = None  # no single server: one per component (state files record none)
        self.components: dict[str, LocalEndpoint] = {}
        for logical, c in sorted(self.entry.components.items()):
            sme = single_model_entry(self.entry, c)
            sub = replace(manifest, endpoints={sme.name: sme})
            self.components[logical] = LocalEndpoint(sub, sme.name, front=_Unrouted(None), **server_kwargs)  # type: ignore[arg-type]
            if c.copies == 0:
                log.warning(
                    "endpoint %s: component %s is declared with 0 copies; served locally as one copy",
                    endpoint,
                    logical,
                )
        self.settings_without_effect = next(iter(self.components.values())).settings_without_effect

    # ------------------------------------------------------------------ lifecycle
    def start(self) -> ComponentsEndpoint:
        """Start every component's server, then route the endpoint on the front."""
        try:
            self.front = self._front_arg or RuntimeFront(port=self.port).start()
            for ep in self.components.values():
                ep._front_arg = _Unrouted(self.front)  # type: ignore[assignment]
                ep.start()
            self.front.add(self)
        except BaseException:
            self.stop()
            raise
        log.info("local components endpoint %s ready at %s", self.name, self.url)
        return self

    def stop(self) -> None:
        """Stop routing, every component's server and the front (if owned)."""
        if self.front is not None:
            self.front.remove(self.name)
        for ep in self.components.values():
            ep.stop()
        if self.front is not None and self._front_arg is None:
            self.front.stop()
        self.front = None

    @property
    def healthy(self) -> bool:
        return all(ep.healthy for ep in self.components.values())

    @property
    def failed(self) -> LocalServerError | None:
        return next((ep.failed for ep in self.components.values() if ep.failed is not None), None)

    @property
    def log_path(self) -> str:
        return ", ".join(str(ep.log_path) for ep in self.components.values())

    # ------------------------------------------------------------------ calls
    def component(self, name: str | None) -> LocalEndpoint | None:
        """The server of a component named by its logical name or its component name."""
        found = self.entry.find_component(name) if name else None
        return self.components.get(found.logical_name) if found is not None else None

    def _route(self, headers: Mapping[str, str]) -> LocalEndpoint | Reply:
        """The component the headers name, or SageMaker's ValidationError."""
        if headers.get(TARGET_MODEL_HEADER) is not None:
            return aws_error(
                400,
                "ValidationError",
                f"Endpoint {self.name} hosts inference components: TargetModel is not supported",
            )
        name = headers.get(COMPONENT_HEADER)
        if not name:
            return aws_error(
                400,
                "ValidationError",
                MISSING_COMPONENT_MESSAGE,
                ErrorCode="INFERENCE_COMPONENT_NAME_MISSING",
            )
        ep = self.component(name)
        if ep is None:
            return aws_error(400, "ValidationError", unknown_component_message(name, self.name))
        return ep

    def handle_invocation(self, body: bytes, headers: dict[str, str]) -> Reply:
        routed = self._route(headers)
        if isinstance(routed, tuple):
            return routed
        return routed.handle_invocation(body, {k: v for k, v in headers.items() if k != COMPONENT_HEADER})

    async def handle_invocation_async(self, body: bytes, headers: Mapping[str, str]) -> Reply | None:
        routed = self._route(headers)
        if isinstance(routed, tuple):
            return routed
        return await routed.handle_invocation_async(body, headers)

    def describe(self) -> dict[str, Any]:
        """What is served: mode, URL, components (logical name -> component name), logs."""
        return {
            "endpoint": self.name,
            "mode": self.entry.mode,
            "url": self.url if self.front else None,
            "components": self.entry.component_map(),
            "target_models": {},
            "log": self.log_path,
            "servers": {k: ep.describe() for k, ep in self.components.items()},
        }
