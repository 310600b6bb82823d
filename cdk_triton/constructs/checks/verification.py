"""The deploy verification's spec: each check's sample URIs and tolerances, the warm-up names, the key.

Pure functions of plain values returning the errors they found without a path
(``TritonVerification`` locates them at its construct path and raises them all at once).
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from typing import Any

from cdk_triton.constructs._tokens import is_token
from cdk_triton.constructs.checks.artifacts import check_kms_key_arn
from cdk_triton.constructs.errors import catalogued
from cdk_triton.errors import TritonValidationError

#: ``s3://<bucket>/<key>`` of an object; the bucket's naming rules are not checked (an offline example
#: carries a placeholder bucket, ``...-ACCOUNT``, that the build replaces), as in ``artifacts.S3_URI``.
S3_OBJECT = re.compile(r"^s3://[^/\s]{3,}/\S*[^/\s]$")


def _bad(prop: str, value: Any, problem: str, allowed: str, fix: str) -> TritonValidationError:
    return catalogued(
        "InvalidVerificationCheck", prop=prop, value=value, problem=problem, allowed=allowed, fix=fix
    )


def check_verification_spec(
    checks: Sequence[Any], *, warm_up: Sequence[str], artifacts_key_arn: str | None
) -> list[TritonValidationError]:
    """Each ``VerificationCheck``: a model, two ``s3://bucket/key`` objects, tolerances >= 0 and finite;
    each warm-up name non-empty; the artifacts key a KMS key ARN (tokens skipped)."""
    errs: list[TritonValidationError] = []
    for i, c in enumerate(checks):
        here = f"checks[{i}]"
        if not isinstance(c.model, str) or not c.model.strip():
            errs.append(
                _bad(
                    f"{here}.model",
                    c.model,
                    "is empty",
                    "the model's name (MME: its logical name)",
                    "name the model the sample belongs to",
                )
            )
        for name in ("request_s3_uri", "response_s3_uri"):
            uri = getattr(c, name)
            if isinstance(uri, str) and (is_token(uri) or S3_OBJECT.fullmatch(uri)):
                continue
            errs.append(
                _bad(
                    f"{here}.{name}",
                    uri,
                    "is not an S3 object the function can read",
                    "s3://<bucket>/<key> of a sample file",
                    "use the URIs `cdk-triton build --upload` recorded",
                )
            )
        for name in ("atol", "rtol"):
            tol = getattr(c, name)
            if tol is None or (
                isinstance(tol, int | float) and not isinstance(tol, bool) and math.isfinite(tol) and tol >= 0
            ):
                continue
            errs.append(
                _bad(
                    f"{here}.{name}",
                    tol,
                    "is not a tolerance",
                    "a finite number >= 0 (or None: the default)",
                    f"pass e.g. {name}=1e-4",
                )
            )
    for j, name in enumerate(warm_up):
        if not isinstance(name, str) or not name.strip():
            errs.append(_bad(f"warm_up[{j}]", name, "is empty", "a TargetModel logical name", "remove it"))
    errs += check_kms_key_arn(artifacts_key_arn, prop="artifacts_key_arn")
    return errs


def check_verification_sample(sample: Any) -> list[TritonValidationError]:
    """A ``VerificationSample``: others_percent 0..100, max_checks 1..5000, parallelism 1..64."""
    errs: list[TritonValidationError] = []
    bounds = {"others_percent": (0, 100), "max_checks": (1, 5000), "parallelism": (1, 64)}
    for name, (low, high) in bounds.items():
        value = getattr(sample, name)
        number = isinstance(value, int | float) and not isinstance(value, bool) and low <= value <= high
        if number and (name == "others_percent" or isinstance(value, int)):
            continue
        errs.append(
            catalogued(
                "InvalidVerificationSample",
                prop=f"sample.{name}",
                value=value,
                problem="is out of range",
                allowed=f"{low}..{high}" + ("" if name == "others_percent" else " (a whole number)"),
                fix=f"pass VerificationSample({name}=...) within {low}..{high}",
            )
        )
    return errs
