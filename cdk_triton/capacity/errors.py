"""The catalogue of error codes ``cdk-triton capacity`` raises (TritonValidationError, exit code 2)."""

from __future__ import annotations

#: code -> what it means.
ALL_CODES: dict[str, str] = {
    "CapacityInvalid": "a capacity option out of range (the message names the option and its range)",
    "CapacityEndpoint": "an endpoint the report cannot size: not in the manifest, or neither a multi-model or "
    "inference-components endpoint nor one with instance_pools, or several to choose from without --endpoint",
    "CapacityInstanceType": "an instance type the instance table does not know (its GPU and host memory)",
    "InvalidTraffic": "a traffic file that is not YAML/JSON of the documented shape (rps or share per model)",
    "UnknownTrafficModel": "a traffic file naming a model that is not a TargetModel of the endpoint",
}

#: Codes of ``cdk_triton.config.errors`` capacity raises.
SURFACED: dict[str, str] = {}
