"""A model served from an endpoint in another stack: one account and one region."""

from __future__ import annotations

from cdk_triton.constructs._tokens import is_token
from cdk_triton.constructs.errors import catalogued
from cdk_triton.errors import TritonValidationError


def check_model_environment(
    model_path: str, model_env: tuple[str, str], endpoint_env: tuple[str, str]
) -> list[TritonValidationError]:
    """The model's (account, region) against the endpoint's; unresolved values are CDK's to judge."""
    pairs = zip(("account", "region"), model_env, endpoint_env, strict=True)
    differ = [(k, a, b) for k, a, b in pairs if not is_token(a) and not is_token(b) and a != b]
    if not differ:
        return []
    return [
        catalogued(
            "ModelInOtherEnvironment",
            prop="model",
            value=model_path,
            problem="is in "
            + ", ".join(f"{k} {a}" for k, a, _ in differ)
            + ", and the endpoint in "
            + ", ".join(f"{k} {b}" for k, _, b in differ)
            + "; SageMaker serves a model only from an endpoint of its own account and region",
            allowed="a TritonModel in the endpoint's stack, or in a stack of the same account and region",
            fix="define the model in a stack of the endpoint's environment, or give the endpoint the "
            "model's props (artifacts=...) instead of model=",
        )
    ]
