"""InferenceComponents: one inference component per model, each with its own archive and copies (IC)."""

from __future__ import annotations

from cdk_triton.config.modes.registry import ROUTE_COMPONENT, HostingMode, Refusal, register

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
        instance_pools=Refusal(code="ModeUnsupported", reason="instance pools are not built yet"),
        async_inference=Refusal(
            code="AsyncNeedsSingleModel",
            reason="InvokeEndpointAsync has no InferenceComponentName (botocore's sagemaker-runtime model), so an asynchronous endpoint cannot reach a component",
        ),
    )
)
