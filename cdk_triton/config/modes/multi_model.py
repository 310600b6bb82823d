"""MultiModel: one archive per model under one S3 prefix, loaded on demand by ``TargetModel`` (MME)."""

from __future__ import annotations

from cdk_triton.config.modes.table import ROUTE_TARGET_MODEL, HostingMode, Refusal, register

MULTI_MODEL = register(
    HostingMode(
        name="MultiModel",
        abbreviation="MME",
        label="multi-model",
        aliases=("multi", "mme"),
        manifest_fields=("models", "packaging", "s3_prefix", "target_models"),
        per_model_archives=True,
        loads_on_demand=True,
        routing=ROUTE_TARGET_MODEL,
        components=False,
        construct="TritonEndpoint",
        metrics=(
            "LoadedModelCount",
            "ModelCacheHit",
            "ModelLoadingWaitTime",
            "ModelLoadingTime",
            "ModelDownloadingTime",
            "ModelUnloadingTime",
        ),
        scaling_dimension="sagemaker:variant:DesiredInstanceCount",
        shadow=Refusal(
            code="ShadowOnMultiModel", reason="is a shadow on a multi-model endpoint, which SageMaker refuses"
        ),
        # https://docs.aws.amazon.com/sagemaker/latest/dg/realtime-endpoints-heterogeneous.html (read
        # 2026-11-27): pools are documented for single-model endpoints and inference components only
        instance_pools=Refusal(
            code="InstancePoolsOnMultiModel",
            reason="SageMaker's instance pools guide "
            "(https://docs.aws.amazon.com/sagemaker/latest/dg/realtime-endpoints-heterogeneous.html, read "
            "2026-11-27) documents pools for single-model endpoints and inference components, not multi-model "
            "endpoints",
        ),
        async_inference=Refusal(
            code="AsyncNeedsSingleModel",
            reason="InvokeEndpointAsync has no TargetModel (botocore's sagemaker-runtime model), so an asynchronous endpoint cannot pick one of a multi-model endpoint's archives",
        ),
        # https://docs.aws.amazon.com/sagemaker/latest/dg/multi-model-endpoints.html (read 2026-11-27): each
        # TargetModel is loaded on demand from its own archive and may be unloaded at any time
        business_logic=Refusal(
            code="BusinessLogicOnPerModelArchives",
            reason="calls other models, but a multi-model endpoint loads each TargetModel from its own archive, on "
            "demand, and unloads it when idle (SageMaker's multi-model endpoints guide, "
            "https://docs.aws.amazon.com/sagemaker/latest/dg/multi-model-endpoints.html, read 2026-11-27): its "
            "callees may not be loaded beside it",
        ),
    )
)
