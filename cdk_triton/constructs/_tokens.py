"""Pseudo-parameter tokens, fetched once per process (each jsii property read is a round trip)."""

from __future__ import annotations

import contextlib
from dataclasses import dataclass, field
from functools import cache
from typing import Any

import aws_cdk as cdk
from constructs import IConstruct, Node


@cache
def _pseudo_token(name: str) -> str:
    """``cdk.Aws.<name>`` (one jsii read per process and name)."""
    token: str = getattr(cdk.Aws, name)
    return token


class Pseudo:
    """``AWS::Partition``, ``AWS::Region``, ``AWS::AccountId`` and ``AWS::URLSuffix`` as tokens, each read
    the first time it is used."""

    __slots__ = ()

    @property
    def partition(self) -> str:
        return _pseudo_token("PARTITION")

    @property
    def region(self) -> str:
        return _pseudo_token("REGION")

    @property
    def account(self) -> str:
        return _pseudo_token("ACCOUNT_ID")

    @property
    def url_suffix(self) -> str:
        return _pseudo_token("URL_SUFFIX")


@cache
def pseudo() -> Pseudo:
    """The pseudo-parameter tokens (``Pseudo``)."""
    return Pseudo()


@cache
def _camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(part[:1].upper() + part[1:] for part in rest)


def props(**fields: Any) -> dict[str, Any]:
    """An L1 property struct as the plain mapping jsii passes (camelCase keys, ``None`` left out).

    The same template as ``CfnX.YProperty(**fields)``, without building the struct class in Python
    (its runtime type checks cost more than the call it feeds: about 0.1 ms per struct).
    """
    return {_camel(k): v for k, v in fields.items() if v is not None}


def assume_role_document(service: str) -> dict[str, Any]:
    """The trust policy of a role that only ``service`` (e.g. ``sagemaker.amazonaws.com``) may assume."""
    return {
        "Version": "2012-10-17",
        "Statement": [{"Effect": "Allow", "Principal": {"Service": service}, "Action": "sts:AssumeRole"}],
    }


def is_token(value: object) -> bool:
    """Whether ``value`` is a string holding an unresolved token."""
    return isinstance(value, str) and "${Token[" in value


@dataclass(frozen=True, slots=True)
class StackInfo:
    stack: cdk.Stack
    region: str
    account: str
    node: Node
    #: manifests already reported as not uploaded in this stack (one warning per manifest, not per model)
    warned_manifests: set[str] = field(default_factory=set)


_STACK_INFO = "_cdk_triton_stack_info"


def stack_info(scope: IConstruct) -> StackInfo:
    """The stack of ``scope`` with its region and account, read through jsii once per stack.

    Cached on the stack object (and on cdk-triton constructs, which pass it to their children): each
    ``Stack.of`` and property read is a round trip to the jsii kernel, and synth time is dominated by them.
    """
    info: StackInfo | None = getattr(scope, _STACK_INFO, None)
    if info is not None:
        return info
    stack = scope if isinstance(scope, cdk.Stack) else cdk.Stack.of(scope)
    info = getattr(stack, _STACK_INFO, None)
    if info is None:
        info = StackInfo(stack=stack, region=stack.region, account=stack.account, node=stack.node)
        with contextlib.suppress(AttributeError):  # a proxy that refuses attributes: no cache
            setattr(stack, _STACK_INFO, info)
    return info


def remember_stack_info(construct: IConstruct, scope: IConstruct) -> StackInfo:
    """The stack info of ``construct`` (defined in ``scope``), cached on it for its own children."""
    info = stack_info(scope)
    setattr(construct, _STACK_INFO, info)
    return info


#: Durations whose length is known without asking jsii (the constructs' own defaults).
_KNOWN_SECONDS: dict[int, tuple[cdk.Duration, int]] = {}


def known_duration(duration: cdk.Duration, secs: int) -> cdk.Duration:
    """Register a module-level default so ``seconds`` answers it without a jsii round trip."""
    _KNOWN_SECONDS[id(duration)] = (duration, secs)
    return duration


def seconds(duration: cdk.Duration) -> int:
    """Whole seconds of ``duration`` (one jsii call, none for a registered default)."""
    known = _KNOWN_SECONDS.get(id(duration))
    if known is not None and known[0] is duration:
        return known[1]
    return int(duration.to_seconds())
