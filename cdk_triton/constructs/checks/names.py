"""SageMaker names: the endpoint, the production variant and the physical model name."""

from __future__ import annotations

import re

from cdk_triton.constructs._tokens import is_token
from cdk_triton.constructs.errors import catalogued
from cdk_triton.errors import TritonValidationError

NAME = re.compile(r"^[a-zA-Z0-9](-*[a-zA-Z0-9]){0,62}$")


_NAME_ALLOWED = "1-63 letters, digits and '-', starting and ending with a letter or digit"


def check_names(endpoint_name: str, variant_name: str) -> list[TritonValidationError]:
    """SageMaker's name pattern for the endpoint and the production variant (tokens skipped)."""
    errs = []
    if not is_token(endpoint_name) and not NAME.fullmatch(endpoint_name):
        errs.append(
            catalogued(
                "InvalidEndpointName",
                prop="endpoint_name",
                value=endpoint_name,
                problem="is not a SageMaker endpoint name",
                allowed=_NAME_ALLOWED,
                fix="drop the other characters, or leave endpoint_name unset for a generated name",
            )
        )
    if not is_token(variant_name) and not NAME.fullmatch(variant_name):
        errs.append(
            catalogued(
                "InvalidVariantName",
                prop="variant_name",
                value=variant_name,
                problem="is not a SageMaker production variant name",
                allowed=_NAME_ALLOWED,
                fix="use e.g. 'AllTraffic' and keep it stable across updates",
            )
        )
    return errs


def check_sagemaker_model_name(model_name: str | None) -> list[TritonValidationError]:
    """TritonModel's physical model_name: SageMaker's name pattern (as endpoint names)."""
    if model_name is None or is_token(model_name) or NAME.fullmatch(model_name):
        return []
    return [
        catalogued(
            "InvalidSageMakerModelName",
            prop="model_name",
            value=model_name,
            problem="is not a SageMaker model name",
            allowed=_NAME_ALLOWED,
            fix="drop the other characters, or leave model_name unset for a generated name",
        )
    ]
