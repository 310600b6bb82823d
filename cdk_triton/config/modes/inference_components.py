"""InferenceComponents: one inference component per model, each with its own archive and copies (IC)."""

from __future__ import annotations

from cdk_triton.config.modes.table import ROUTE_COMPONENT, HostingMode, Refusal, register

INFERENCE_COMPONENTS = register(
    HostingMode(
        name="InferenceComponents",
        abbreviation="IC",
        label="inference components",
        aliases=("components", "inference_components", "inferencecomponents"),
        manifest_fields=(
            "models",
            "packaging",
            "s3_prefix",
            "target_models",
            "components",
            "min_instances",
            "max_instances",
            "instance_pools",
        ),
        per_model_archives=True,
        loads_on_demand=False,
        routing=ROUTE_COMPONENT,
        components=True,
        construct="TritonComponentsEndpoint",
        metrics=(
            "NoCapacityInvocationFailures",
            "CPUUtilizationNormalized",
            "MemoryUtilizationNormalized",
            "GPUUtilizationNormalized",
            "GPUMemoryUtilizationNormalized",
        ),
        scaling_dimension="sagemaker:inference-component:DesiredCopyCount",
        auto_scale=Refusal(
            code="AutoScaleOnComponentsEndpoint",
            reason="would register the variant's instances with Application Auto Scaling, fighting the "
            "managed instance scaling that places the components' copies",
        ),
        shadow=Refusal(code="ModeUnsupported", reason="a components endpoint takes no shadow variant"),
        # instance pools: supported (no refusal). SageMaker's guide
        # https://docs.aws.amazon.com/sagemaker/latest/dg/realtime-endpoints-heterogeneous.html (read
        # 2026-11-27), "Real-time endpoint with inference components": a component's single Specification
        # applies on every pool's instance type ("when the model can run on any of the provisioned instance
        # types with the same resource requirements"); TritonComponentsEndpoint emits that one Specification
        # with requirements that fit the smallest pool (config.instance_pools.smallest)
        async_inference=Refusal(
            code="AsyncNeedsSingleModel",
            reason="InvokeEndpointAsync has no InferenceComponentName (botocore's sagemaker-runtime model), so an asynchronous endpoint cannot reach a component",
        ),
        # https://docs.aws.amazon.com/sagemaker/latest/APIReference/API_CreateInferenceComponent.html (read
        # 2026-11-27): "each inference component contains one model and the resource utilization needs for that
        # individual model"; its copies are placed and scaled on their own
        business_logic=Refusal(
            code="BusinessLogicOnPerModelArchives",
            reason="calls other models, but each inference component holds one model whose copies SageMaker "
            "places and scales on their own (SageMaker's inference components guide, "
            "https://docs.aws.amazon.com/sagemaker/latest/APIReference/API_CreateInferenceComponent.html, read "
            "2026-11-27): its callees may not run in the same container",
        ),
    )
)
