"""Pseudo-parameter tokens, fetched once per process (each jsii property read is a round trip)."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

import aws_cdk as cdk


@dataclass(frozen=True, slots=True)
class Pseudo:
    partition: str
    region: str
    account: str
    url_suffix: str


@cache
def pseudo() -> Pseudo:
    """``AWS::Partition``, ``AWS::Region``, ``AWS::AccountId`` and ``AWS::URLSuffix`` as tokens."""
    return Pseudo(
        partition=cdk.Aws.PARTITION,
        region=cdk.Aws.REGION,
        account=cdk.Aws.ACCOUNT_ID,
        url_suffix=cdk.Aws.URL_SUFFIX,
    )


def is_token(value: object) -> bool:
    """Whether ``value`` is a string holding an unresolved token."""
    return isinstance(value, str) and "${Token[" in value
