"""The SageMaker front of one Triton release: what its SageMaker port does with ``--http-restricted-api`` and
``--http-max-input-size`` (passed in ``SAGEMAKER_TRITON_ADDITIONAL_ARGS``), what it answers an empty body,
and what SageMaker Runtime lets a client send it (``data/sagemaker-front.json``, each fact with its source).

From 26.03 (server PR #8686, cherry-picked by #8693) both flags apply to the SageMaker port: ``/invocations``
(the ``inference`` category) and the multi-model LIST/GET/LOAD/UNLOAD routes (``model-repository``) answer
403 without the restricted header, and a body over the maximum input size 400. Before 26.03 the flags
restrict only the HTTP port, which SageMaker does not use. ``check_front`` is the one rule the constructs
(synth) and the local endpoint (serve) apply; ``front_profile`` and ``enforcement`` are what the local
front answers as that release's container would. Standard library only.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Protocol

from cdk_triton.config import tables
from cdk_triton.config.server_options.release import NoEffect
from cdk_triton.errors import TritonValidationError

RESTRICTED_API_FLAG = "--http-restricted-api"
MAX_INPUT_SIZE_FLAG = "--http-max-input-size"
ADDITIONAL_ARGS = "SAGEMAKER_TRITON_ADDITIONAL_ARGS"
#: The restriction categories of ``--http-restricted-api`` the SageMaker port answers on.
INFERENCE, MODEL_REPOSITORY, HEALTH = "inference", "model-repository", "health"


class FrontOptions(Protocol):
    """The fields of ``ServerOptions`` the front rules read."""

    @property
    def multi_model(self) -> bool: ...

    @property
    def additional_args(self) -> tuple[str, ...]: ...


def _fact(name: str) -> dict[str, object]:
    return tables.front_facts()[name]


def _since(name: str, triton_version: str) -> bool:
    first = _fact(name).get("from")
    return isinstance(first, str) and tables.at_least(triton_version, first)


def custom_attributes_header() -> str:
    """The one header whose value an InvokeEndpoint caller chooses and the container receives."""
    return str(_fact("forwarded_headers")["header"])


def default_max_input_size() -> int:
    """``--http-max-input-size``'s default (64 MiB)."""
    return int(str(_fact("default_max_input_size")["bytes"]))


# ---------------------------------------------------------------------------- the flags


@dataclass(frozen=True, kw_only=True, slots=True)
class Restriction:
    """One ``--http-restricted-api=<categories>:<key>=<value>`` item."""

    categories: tuple[str, ...]
    key: str
    value: str
    arg: str

    def refusal(self, headers: Mapping[str, str]) -> tuple[int, bytes] | None:
        """The container's 403 (status, JSON body) when ``headers`` (lower-case names) lack the key's
        value, else None. Header names compare case-insensitively, values exactly."""
        if headers.get(self.key.lower()) == self.value:
            return None
        text = str(_fact("restricted_message")["text"]).format(key=self.key)
        return 403, json.dumps({"error": text}).encode()


@dataclass(frozen=True, kw_only=True, slots=True)
class FrontFlags:
    """The front flags among the additional arguments (the last item naming a category wins)."""

    restrictions: tuple[Restriction, ...] = ()
    max_input_size: int | None = None
    max_input_size_arg: str | None = None

    def restriction(self, category: str) -> Restriction | None:
        found = [r for r in self.restrictions if category in r.categories]
        return found[-1] if found else None


def _restriction(arg: str) -> Restriction | None:
    """``--http-restricted-api=inference,health:key=value`` (None when it is not of that form; tritonserver
    itself refuses it at start)."""
    apis, sep, header = arg.split("=", 1)[1].partition(":")
    key, eq, value = header.partition("=")
    if not sep or not eq or not key:
        return None
    cats = tuple(c.strip() for c in apis.split(",") if c.strip())
    return Restriction(categories=cats, key=key, value=value, arg=arg)


def front_flags(additional_args: Iterable[str]) -> FrontFlags:
    """The ``--http-restricted-api`` and ``--http-max-input-size`` items of ``additional_args``."""
    restrictions: list[Restriction] = []
    size, size_arg = None, None
    for arg in additional_args:
        flag = arg.split("=", 1)[0]
        if flag == RESTRICTED_API_FLAG and "=" in arg:
            found = _restriction(arg)
            if found is not None:
                restrictions.append(found)
        elif flag == MAX_INPUT_SIZE_FLAG and arg.split("=", 1)[-1].isdigit():
            size, size_arg = int(arg.split("=", 1)[1]), arg
    return FrontFlags(restrictions=tuple(restrictions), max_input_size=size, max_input_size_arg=size_arg)


# ---------------------------------------------------------------------------- the release's profile


@dataclass(frozen=True, kw_only=True, slots=True)
class FrontProfile:
    """What the SageMaker port of ``triton_version`` does (each from ``data/sagemaker-front.json``).

    Attributes:
        restrictions_enforced: ``--http-restricted-api`` reaches ``/invocations`` and the MME
            LIST/GET/LOAD/UNLOAD routes (26.03+).
        max_input_size_enforced: ``--http-max-input-size`` reaches the SageMaker port (26.03+).
        mme_invoke_restricted: the MME invoke route applies the inference restriction (PR #8833; its
            first release unconfirmed: no recorded release).
        sme_empty_body_status / mme_empty_body_status: what a whitespace-only body gets from
            single-model ``/invocations`` (500, issue #8762) and the MME invoke route (400).
        zero_length_parsed: a zero-length body answers as a whitespace-only one (26.03+, unconfirmed
            release); otherwise the server's own answer (24.10: the model's input check, 400).
    """

    triton_version: str
    restrictions_enforced: bool
    max_input_size_enforced: bool
    mme_invoke_restricted: bool
    sme_empty_body_status: int
    mme_empty_body_status: int
    zero_length_parsed: bool

    def empty_body_status(self, *, multi_model: bool) -> int:
        return self.mme_empty_body_status if multi_model else self.sme_empty_body_status


@functools.cache
def front_profile(triton_version: str) -> FrontProfile:
    """The SageMaker front of ``triton_version`` (a release string such as ``'26.05'``)."""
    empty = _fact("empty_body_status")
    return FrontProfile(
        triton_version=triton_version,
        restrictions_enforced=_since("restrictions_enforced", triton_version),
        max_input_size_enforced=_since("max_input_size_enforced", triton_version),
        mme_invoke_restricted=_since("mme_invoke_restricted", triton_version),
        sme_empty_body_status=int(str(empty["sme"])),
        mme_empty_body_status=int(str(empty["mme"])),
        zero_length_parsed=_since("zero_length_body", triton_version),
    )


@dataclass(frozen=True, kw_only=True, slots=True)
class Enforcement:
    """What the SageMaker port checks before it answers (None: nothing), for the local front to apply."""

    invocations: Restriction | None = None
    mme_invoke: Restriction | None = None
    model_repository: Restriction | None = None
    max_input_size: int | None = None
    empty_body: FrontProfile | None = None

    def refusal(
        self, body: bytes, headers: Mapping[str, str], *, multi_model: bool
    ) -> tuple[int, bytes] | None:
        """The container's answer to an invocation it refuses (restriction first, then size, then a
        zero-length body where the release parses it), else None: the server answers."""
        restriction = self.mme_invoke if multi_model else self.invocations
        refused = restriction.refusal(headers) if restriction is not None else None
        if refused is None and self.max_input_size is not None and len(body) > self.max_input_size:
            text = str(_fact("oversized_message")["text"]).format(size=len(body), limit=self.max_input_size)
            refused = 400, json.dumps({"error": text}).encode()
        if refused is None and not body and self.empty_body is not None:
            text = str(_fact("zero_length_body")["text"])
            refused = (
                self.empty_body.empty_body_status(multi_model=multi_model),
                json.dumps({"error": text}).encode(),
            )
        return refused


def enforcement(options: FrontOptions, triton_version: str) -> Enforcement:
    """What the SageMaker port of ``triton_version`` enforces of ``options``' front flags."""
    flags, profile = front_flags(options.additional_args), front_profile(triton_version)
    inference = flags.restriction(INFERENCE) if profile.restrictions_enforced else None
    return Enforcement(
        empty_body=profile if profile.zero_length_parsed else None,
        invocations=inference,
        mme_invoke=inference if profile.mme_invoke_restricted else None,
        model_repository=flags.restriction(MODEL_REPOSITORY) if profile.restrictions_enforced else None,
        max_input_size=(flags.max_input_size or default_max_input_size())
        if profile.max_input_size_enforced
        else None,
    )


# ---------------------------------------------------------------------------- the rule


def _unreachable(arg: str, why: str, fix: str) -> TritonValidationError:
    return TritonValidationError(
        "RestrictedApiUnreachable",
        prop="server_options.additional_args",
        value=arg,
        problem=why,
        allowed=f"restrictions a SageMaker caller can satisfy: inference with the header {custom_attributes_header()}",
        fix=fix,
    )


def _restriction_errors(r: Restriction, multi_model: bool) -> list[TritonValidationError]:
    header = custom_attributes_header()
    out = []
    if HEALTH in r.categories:
        out.append(
            _unreachable(
                r.arg,
                "restricts 'health': SageMaker's /ping health check carries no user header, so the restriction "
                "either fails every health check (the endpoint never becomes InService) or restricts nothing "
                "SageMaker reaches (whether this release's /ping applies it is unconfirmed)",
                "drop 'health' from --http-restricted-api",
            )
        )
    if MODEL_REPOSITORY in r.categories and multi_model:
        out.append(
            _unreachable(
                r.arg,
                "restricts 'model-repository' on a multi-model endpoint: SageMaker's model loads and unloads "
                "carry no user header, so every load gets 403 and no TargetModel can be invoked",
                "drop 'model-repository' from --http-restricted-api",
            )
        )
    if INFERENCE in r.categories and r.key.lower() != header.lower():
        out.append(
            _unreachable(
                r.arg,
                f"restricts 'inference' with the header '{r.key}', which InvokeEndpoint cannot send (it "
                f"forwards only its modelled headers; the one a caller fills freely is {header})",
                f"use --http-restricted-api=inference:{header}=<value> and send CustomAttributes='<value>' "
                "with InvokeEndpoint",
            )
        )
    return out


def _note(arg: str, triton_version: str, reason: str, read_from: str | None) -> NoEffect:
    return NoEffect(
        variable=ADDITIONAL_ARGS, value=arg, triton_version=triton_version, reason=reason, read_from=read_from
    )


def check_front(
    options: FrontOptions, triton_version: str | None
) -> tuple[list[TritonValidationError], list[NoEffect]]:
    """The front flags of ``options`` against the SageMaker port of ``triton_version``: the errors
    (``RestrictedApiUnreachable``, 26.03+) and the flags without effect there (before 26.03; the MME
    invoke route's inference restriction until a recorded release carries PR #8833).

    ``options`` as the release's serve script passes them on (``ServerOptions.for_release``). None (a
    custom image): nothing is known, nothing reported.
    """
    if triton_version is None:
        return [], []
    flags, profile = front_flags(options.additional_args), front_profile(triton_version)
    errors: list[TritonValidationError] = []
    notes: list[NoEffect] = []
    first = str(_fact("restrictions_enforced")["from"])
    for r in flags.restrictions:
        if profile.restrictions_enforced:
            errors += _restriction_errors(r, options.multi_model)
            if INFERENCE in r.categories and options.multi_model and not profile.mme_invoke_restricted:
                notes.append(
                    _note(
                        r.arg,
                        triton_version,
                        "the multi-model invoke route of this release does not apply the inference restriction "
                        "(server PR #8833 adds it; its first release is unconfirmed)",
                        None,
                    )
                )
        else:
            notes.append(
                _note(
                    r.arg,
                    triton_version,
                    "this release applies it to the HTTP port only, not the SageMaker port",
                    first,
                )
            )
    if flags.max_input_size_arg is not None and not profile.max_input_size_enforced:
        first_size = str(_fact("max_input_size_enforced")["from"])
        notes.append(
            _note(
                flags.max_input_size_arg,
                triton_version,
                "this release's SageMaker port does not receive the setting",
                first_size,
            )
        )
    return errors, notes


def async_input_size_warning(options: FrontOptions, triton_version: str | None) -> str | None:
    """An asynchronous endpoint (payloads up to 1 GB) on a 26.03+ release without ``--http-max-input-size``:
    bodies over the 64 MiB default get 400. None when that does not apply."""
    if triton_version is None or not front_profile(triton_version).max_input_size_enforced:
        return None
    if front_flags(options.additional_args).max_input_size is not None:
        return None
    limit = default_max_input_size()
    return (
        f"an asynchronous endpoint accepts payloads up to 1 GB, but the SageMaker port of Triton {triton_version} "
        f"refuses a body over --http-max-input-size (default {limit} bytes = {limit >> 20} MiB) with 400; "
        f"pass --http-max-input-size=<bytes> in server_options additional_args "
        f"({ADDITIONAL_ARGS}) sized for the largest payload"
    )
