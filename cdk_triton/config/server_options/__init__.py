"""Triton server options (the SageMaker Triton container settings), split by concern.

| Module | What lives there |
|---|---|
| ``settings.py`` | ``PingMode``, ``InferenceType``, ``ENV_FIELDS``, the ``DEFAULT_*`` values, parsing each variable's value, ``check_raw_environment``, ``resolve_default_model`` |
| ``options.py`` | ``ServerOptions``: the value object and its env <-> argv mapping; ``hosting_options`` / ``sagemaker_environment``: the container environment of a hosting mode (constructs and the local container) |
| ``checks.py`` | ``check_*`` and ``CHECKS``: what ``ServerOptions.validate`` runs |
| ``release.py`` | ``effective_environment``, ``NoEffect``: what the ``serve`` script of a given release makes of the variables |
| ``front.py`` | ``front_profile``, ``check_front``, ``enforcement``: what the SageMaker port of a given release does with ``--http-restricted-api`` / ``--http-max-input-size`` and an empty body |

Every public name is importable from ``cdk_triton.config.server_options``; private helpers stay in their module.
"""

from cdk_triton.config.server_options.checks import (
    CHECKS,
    Problems,
    check_additional_args,
    check_cloudwatch_names,
    check_cloudwatch_publishing,
    check_counts_and_sizes,
    check_default_model,
    check_ports,
    check_ports_distinct,
)
from cdk_triton.config.server_options.front import (
    Enforcement,
    FrontProfile,
    Restriction,
    async_input_size_warning,
    check_front,
    enforcement,
    front_flags,
    front_profile,
)
from cdk_triton.config.server_options.options import (
    MME_MODELS_DIR,
    SME_MODEL_DIR,
    ServerOptions,
    hosting_options,
    sagemaker_environment,
)
from cdk_triton.config.server_options.release import (
    NoEffect,
    effective_environment,
    first_release_reading,
    known_variables,
)
from cdk_triton.config.server_options.settings import (
    CONTAINER_ONLY_VARIABLES,
    DEFAULT_GRPC_PORT,
    DEFAULT_METRICS_PORT,
    DEFAULT_PORT,
    DEFAULT_SHM_DEFAULT_BYTE_SIZE,
    DEFAULT_SHM_GROWTH_BYTE_SIZE,
    DEFAULT_THREAD_COUNT,
    ENV_FIELDS,
    InferenceType,
    PingMode,
    check_raw_environment,
    resolve_default_model,
)

__all__ = [
    "CHECKS",
    "Enforcement",
    "FrontProfile",
    "Restriction",
    "async_input_size_warning",
    "check_front",
    "enforcement",
    "front_flags",
    "front_profile",
    "CONTAINER_ONLY_VARIABLES",
    "NoEffect",
    "effective_environment",
    "first_release_reading",
    "known_variables",
    "DEFAULT_GRPC_PORT",
    "DEFAULT_METRICS_PORT",
    "DEFAULT_PORT",
    "DEFAULT_SHM_DEFAULT_BYTE_SIZE",
    "DEFAULT_SHM_GROWTH_BYTE_SIZE",
    "DEFAULT_THREAD_COUNT",
    "ENV_FIELDS",
    "InferenceType",
    "PingMode",
    "Problems",
    "MME_MODELS_DIR",
    "SME_MODEL_DIR",
    "ServerOptions",
    "hosting_options",
    "sagemaker_environment",
    "check_additional_args",
    "check_cloudwatch_names",
    "check_cloudwatch_publishing",
    "check_counts_and_sizes",
    "check_default_model",
    "check_ports",
    "check_ports_distinct",
    "check_raw_environment",
    "resolve_default_model",
]
