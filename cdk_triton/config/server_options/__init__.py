"""Triton server options (the SageMaker Triton container settings), split by concern.

| Module | What lives there |
|---|---|
| ``settings.py`` | ``PingMode``, ``InferenceType``, ``ENV_FIELDS``, the ``DEFAULT_*`` values, parsing each variable's value, ``check_raw_environment``, ``resolve_default_model`` |
| ``options.py`` | ``ServerOptions``: the value object and its env <-> argv mapping |
| ``checks.py`` | ``check_*`` and ``CHECKS``: what ``ServerOptions.validate`` runs |
| ``release.py`` | ``effective_environment``, ``NoEffect``: what the ``serve`` script of a given release makes of the variables |

Every name is importable from ``cdk_triton.config.server_options``.
"""

from cdk_triton.config.server_options.checks import (
    _CW_NAMESPACE,
    _LOG_GROUP,
    _MANAGED_FLAGS,
    CHECKS,
    Problems,
    _problem,
    check_additional_args,
    check_cloudwatch_names,
    check_cloudwatch_publishing,
    check_counts_and_sizes,
    check_default_model,
    check_ports,
    check_ports_distinct,
)
from cdk_triton.config.server_options.options import _KNOWN_FIELDS, ServerOptions
from cdk_triton.config.server_options.release import (
    NoEffect,
    effective_environment,
    first_release_reading,
    known_variables,
)
from cdk_triton.config.server_options.settings import (
    _BOOL_FIELDS,
    _ENV_ALLOWED,
    _FALSE,
    _INT_FIELDS,
    _TRUE,
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
    _bool,
    _parse_env_value,
    check_raw_environment,
    resolve_default_model,
)

__all__ = [
    "CHECKS",
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
    "ServerOptions",
    "_BOOL_FIELDS",
    "_CW_NAMESPACE",
    "_ENV_ALLOWED",
    "_FALSE",
    "_INT_FIELDS",
    "_KNOWN_FIELDS",
    "_LOG_GROUP",
    "_MANAGED_FLAGS",
    "_TRUE",
    "_bool",
    "_parse_env_value",
    "_problem",
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
