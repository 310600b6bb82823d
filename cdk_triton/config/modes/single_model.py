"""SingleModel: one Triton model repository behind ``/invocations`` (SME)."""

from __future__ import annotations

from cdk_triton.config.modes.table import ROUTE_DEFAULT_MODEL, HostingMode, Refusal, register

SINGLE_MODEL = register(
    HostingMode(
        name="SingleModel",
        abbreviation="SME",
        label="single-model",
        aliases=("single", "sme"),
        manifest_fields=(
            "default_model",
            "load_models",
            "models",
            "packaging",
            "local_path",
            "s3_uri",
            "sha256",
            "size_bytes",
            "async_inference",
            "instance_pools",
        ),
        per_model_archives=False,
        loads_on_demand=False,
        routing=ROUTE_DEFAULT_MODEL,
        components=False,
        construct="TritonEndpoint",
        metrics=(),
        scaling_dimension="sagemaker:variant:DesiredInstanceCount",
        capacity=Refusal(
            code="ModeUnsupported",
            reason="nothing loads on demand",
        ),
        tune=Refusal(
            code="ModeUnsupported",
            reason="tune serves its variants side by side, one archive each (a multi-model or components endpoint)",
        ),
    )
)
