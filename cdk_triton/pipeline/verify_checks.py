"""The deploy-verification checks of one endpoint, written at synth from the build manifest (pure).

The spec is what ``lambda/verify/index.py --spec <file>`` reads (see lambda/README.md). Its sample
URIs are where ``cdk-triton build --upload`` put the samples: recorded in the manifest, else derived
from the files beside it (``<artifact location>samples/<sha12>/<model>.request.json``, content-addressed:
``cdk_triton.config.layout.sample_s3_uris``, the build's own rule).
"""

from __future__ import annotations

from typing import Any

from cdk_triton.config import layout, modes
from cdk_triton.config.layout import sample_s3_uris
from cdk_triton.config.manifest import Manifest, Sample
from cdk_triton.errors import TritonValidationError

DEFAULT_DEADLINE_S = 900


def target_model_parameter_path(endpoint_name: str) -> str:
    """The SSM path under which the endpoint stack publishes the TargetModel map of an MME."""
    return f"/cdk-triton/{endpoint_name}/target-models"


def _check(manifest: Manifest, model: str, sample: Sample | None) -> dict[str, Any] | None:
    if sample is None or not sample.response:
        return None
    uris = sample_s3_uris(manifest, sample)
    if uris is None:
        return None
    check: dict[str, Any] = {"Model": model, "Request": uris[0], "Response": uris[1]}
    if sample.atol is not None:
        check["Atol"] = sample.atol
    if sample.rtol is not None:
        check["Rtol"] = sample.rtol
    return check


def verify_checks(
    manifest: Manifest, endpoint: str, *, endpoint_name: str, deadline_seconds: int = DEFAULT_DEADLINE_S
) -> dict[str, Any]:
    """The spec that verifies the deployed ``endpoint_name`` built from the manifest's ``endpoint``.

    Raises TritonValidationError(NoRecordedSamples) when none of its models has a recorded sample with
    a response, and the manifest's own error for an unknown endpoint.
    """
    entry = manifest.endpoint(endpoint)
    checks: list[dict[str, Any]] = []
    spec: dict[str, Any] = {"EndpointName": endpoint_name, "Mode": entry.mode}
    row = entry.hosting_mode
    if row.per_model_archives:
        for logical, target in sorted(entry.target_models.items()):
            model = manifest.models.get(target.model)
            c = _check(manifest, logical, target.sample or (model.sample if model else None))
            if c:
                checks.append(c)
        if row.routing == modes.ROUTE_TARGET_MODEL:
            spec["TargetModelParameterPath"] = target_model_parameter_path(endpoint_name)
        else:  # the constructs' names: layout.component_name(<deployed endpoint name>, <model>)
            spec["Components"] = {
                logical: layout.component_name(endpoint_name, logical)
                for logical in sorted(entry.target_models)
            }
    else:
        default = entry.default_model or (entry.models[0] if entry.models else "")
        model = manifest.models.get(default)
        c = _check(manifest, default, entry.sample or (model.sample if model else None))
        if c:
            checks.append(c)
    if not checks:
        raise TritonValidationError(
            "NoRecordedSamples",
            prop="verify",
            value=endpoint,
            problem="has no model with a recorded sample request and response, so there is nothing to verify",
            allowed="endpoints whose models the build recorded samples for (deterministic models with a seed)",
            fix="add 'seed: 0' to the model's source so the build records a sample, or drop the verification",
            path=manifest.path,
        )
    spec["Checks"] = checks
    spec["DeadlineSeconds"] = deadline_seconds
    return spec
