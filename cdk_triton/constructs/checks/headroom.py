"""A stack's CloudFormation resources against the per-stack limit."""

from __future__ import annotations

from cdk_triton.constructs.errors import catalogued
from cdk_triton.errors import TritonValidationError

#: CloudFormation's resource limit per stack.
CFN_RESOURCE_LIMIT = 500


def check_headroom(
    resources: int, *, endpoint_resources: int, endpoint_id: str, limit: int = CFN_RESOURCE_LIMIT
) -> tuple[list[TritonValidationError], bool]:
    """A stack's CloudFormation resources after an endpoint: (errors over the limit, warn at >= 80 %)."""
    errs = []
    if resources > limit:
        mine = max(endpoint_resources, 1)
        errs.append(
            catalogued(
                "StackResourceLimit",
                prop="stack",
                value=f"{resources} resources",
                problem=f"exceeds CloudFormation's limit of {limit} resources per stack",
                allowed=f"at most {limit} resources; this endpoint defines {endpoint_resources}, so one stack "
                f"holds about {max(1, limit // mine)} such endpoints",
                fix=f"split the endpoints into stacks of at most {max(1, (limit * 4 // 5) // mine)} "
                f"endpoints each (e.g. one Stack per group of endpoints) and create {endpoint_id} in a new stack",
            )
        )
    return errs, resources / limit >= 0.8
