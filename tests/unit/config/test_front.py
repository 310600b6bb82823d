"""The SageMaker front per release (``config.server_options.front``, ``data/sagemaker-front.json``)."""

from __future__ import annotations

import json

import pytest

from cdk_triton.config import tables
from cdk_triton.config.server_options import (
    ServerOptions,
    async_input_size_warning,
    check_front,
    enforcement,
    front_flags,
    front_profile,
)

HEADER = "X-Amzn-SageMaker-Custom-Attributes"


def test_every_fact_has_a_source_a_date_and_a_confirmed_flag() -> None:
    for name, fact in tables.front_facts().items():
        assert fact["sources"] and fact["read"] == "2026-11-27" and isinstance(fact["confirmed"], bool), name


@pytest.mark.parametrize(
    ("release", "enforced", "zero_length_parsed"),
    [
        ("23.02", False, False),
        ("24.09", False, False),
        ("25.09", False, False),
        ("26.03", True, True),
        ("26.05", True, True),
    ],
)
def test_the_profile_follows_the_release(release: str, enforced: bool, zero_length_parsed: bool) -> None:
    p = front_profile(release)
    assert (p.restrictions_enforced, p.max_input_size_enforced) == (enforced, enforced)
    assert p.zero_length_parsed is zero_length_parsed
    assert p.mme_invoke_restricted is False  # PR #8833: no recorded release carries it
    assert (p.empty_body_status(multi_model=False), p.empty_body_status(multi_model=True)) == (500, 400)


def test_flags_parse_apis_key_and_value() -> None:
    flags = front_flags(("--http-restricted-api=inference,health:K=a=b", "--http-max-input-size=10", "--x=1"))
    [r] = flags.restrictions
    assert (r.categories, r.key, r.value, flags.max_input_size) == (("inference", "health"), "K", "a=b", 10)
    assert front_flags(("--http-restricted-api=inference",)).restrictions == ()


@pytest.mark.parametrize(
    ("arg", "multi_model", "why"),
    [
        ("health:" + HEADER + "=s", False, "/ping"),
        ("model-repository:" + HEADER + "=s", True, "loads"),
        ("inference:x-api-key=s", False, "InvokeEndpoint cannot send"),
    ],
)
def test_unreachable_restrictions_are_errors_from_26_03(arg: str, multi_model: bool, why: str) -> None:
    opts = ServerOptions(multi_model=multi_model, additional_args=(f"--http-restricted-api={arg}",))
    [err], _ = check_front(opts, "26.05")
    assert err.code == "RestrictedApiUnreachable" and why in str(err) and "fix:" in str(err)
    errors, [note] = check_front(opts, "24.09")
    assert errors == [] and note.read_from == "26.03"
    assert check_front(opts, None) == ([], [])


def test_a_reachable_restriction_passes_and_mme_invoke_is_noted() -> None:
    arg = f"--http-restricted-api=inference:{HEADER}=s"
    assert check_front(ServerOptions(additional_args=(arg,)), "26.05") == ([], [])
    assert (
        check_front(ServerOptions(additional_args=("--http-restricted-api=model-repository:k=v",)), "26.05")[
            0
        ]
        == []
    )
    errors, [note] = check_front(ServerOptions(multi_model=True, additional_args=(arg,)), "26.05")
    assert errors == [] and "#8833" in note.message


def test_enforcement_refuses_as_the_container() -> None:
    opts = ServerOptions(
        additional_args=(f"--http-restricted-api=inference:{HEADER}=s", "--http-max-input-size=4")
    )
    rules = enforcement(opts, "26.05")
    status, body = rules.refusal(b"{}", {}, multi_model=False) or (0, b"")
    assert (status, json.loads(body)["error"]) == (
        403,
        f"This API is restricted, expecting header '{HEADER}'",
    )
    assert rules.refusal(b"{}", {HEADER.lower(): "s"}, multi_model=False) is None
    assert (rules.refusal(b"12345", {HEADER.lower(): "s"}, multi_model=False) or (0,))[0] == 400
    assert rules.refusal(b"{}", {}, multi_model=True) is None  # MME invoke: not restricted through 26.05
    assert enforcement(ServerOptions(), "26.05").max_input_size == 64 * 1024 * 1024
    assert enforcement(opts, "24.09").refusal(b"12345", {}, multi_model=False) is None


def test_async_endpoints_on_26_03_are_told_of_the_64_mib_default() -> None:
    message = async_input_size_warning(ServerOptions(), "26.05")
    assert message is not None and "64 MiB" in message and "--http-max-input-size=<bytes>" in message
    assert (
        async_input_size_warning(ServerOptions(additional_args=("--http-max-input-size=999",)), "26.05")
        is None
    )
    assert async_input_size_warning(ServerOptions(), "24.09") is None
