"""Raw container variables against SageMaker's Environment map."""

from __future__ import annotations

import re

from cdk_triton.constructs._tokens import is_token
from cdk_triton.constructs.errors import catalogued
from cdk_triton.errors import TritonValidationError

#: SageMaker's container Environment: at most 100 entries, keys [a-zA-Z_][a-zA-Z0-9_]*, 1024 characters each.
ENV_KEY = re.compile(r"^[a-zA-Z_][a-zA-Z0-9_]{0,1023}$")


ENV_MAX_ENTRIES = 100


ENV_VALUE_MAX = 1024


def check_environment_values(env: dict[str, str]) -> list[TritonValidationError]:
    """Raw container variables against SageMaker's Environment map: names, value lengths, count."""
    errs = []
    for key, value in sorted(env.items()):
        bad_key = not is_token(key) and not ENV_KEY.fullmatch(key)
        bad_value = not isinstance(value, str) or (not is_token(value) and len(value) > ENV_VALUE_MAX)
        if bad_key or bad_value:
            errs.append(
                catalogued(
                    "InvalidEnvironmentVariable",
                    prop=f"environment[{key!r}]",
                    value=key if bad_key else f"{str(value)[:40]}... ({len(str(value))} characters)",
                    problem="is not a container variable name SageMaker accepts"
                    if bad_key
                    else f"is not a string of at most {ENV_VALUE_MAX} characters",
                    allowed=f"names of [a-zA-Z_][a-zA-Z0-9_]* and string values of at most {ENV_VALUE_MAX} "
                    "characters",
                    fix="rename the variable, or pass long values through a file in the model repository",
                )
            )
    if len(env) > ENV_MAX_ENTRIES:
        errs.append(
            catalogued(
                "InvalidEnvironmentVariable",
                prop="environment",
                value=f"{len(env)} variables",
                problem="exceeds SageMaker's limit of container variables",
                allowed=f"at most {ENV_MAX_ENTRIES} variables (ServerOptions adds its own)",
                fix="drop variables, or move settings into ServerOptions / config.pbtxt",
            )
        )
    return errs
