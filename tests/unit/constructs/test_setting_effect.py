"""Settings the image's release does not pass on to tritonserver: a warning at synth (SettingHasNoEffect)."""

from __future__ import annotations

from typing import Any

from aws_cdk.assertions import Annotations, Match

from cdk_triton.config.server_options import PingMode, ServerOptions
from cdk_triton.constructs import ModelArtifacts, TritonImage, TritonModel
from cdk_triton.errors import TritonValidationError
from tests.unit.constructs.support import EXAMPLE, manifest_with, new_stack

WARNING = "cdk-triton:SettingHasNoEffect"


def _warnings(**kw: Any) -> list[str]:
    stack = new_stack()
    kw.setdefault("artifacts", ModelArtifacts.from_manifest(EXAMPLE, "classifier"))
    TritonModel(stack, "Model", **kw)
    found = Annotations.from_stack(stack).find_warning("*", Match.string_like_regexp(WARNING))
    return [str(w.entry.data) for w in found]


def test_grpc_on_a_release_before_23_07_warns() -> None:
    opts = ServerOptions(allow_grpc=True, thread_count=4)
    [msg] = _warnings(server_options=opts, image=TritonImage.for_version("23.02"))
    assert "SAGEMAKER_TRITON_ALLOW_GRPC='true' has no effect on sagemaker-tritonserver:23.02-py3" in msg
    assert _warnings(server_options=opts, image=TritonImage.for_version("24.09")) == []


def test_ping_override_without_an_inherited_ping_mode_warns() -> None:
    opts = ServerOptions(ping_mode=PingMode.LIVE)
    [msg] = _warnings(server_options=opts, image=TritonImage.for_version("24.09"))
    assert "SAGEMAKER_TRITON_OVERRIDE_PING_MODE" in msg and "SAGEMAKER_TRITON_PING_MODE" in msg
    raw = {"SAGEMAKER_TRITON_PING_MODE": "live"}
    assert _warnings(server_options=opts, environment=raw, image=TritonImage.for_version("24.09")) == []


def test_inference_type_before_25_03_warns() -> None:
    opts = ServerOptions(inference_type="generate")  # type: ignore[arg-type]
    [msg] = _warnings(server_options=opts, image=TritonImage.for_version("24.09"))
    assert "target Triton 25.04 or newer" in msg
    assert _warnings(server_options=opts, image=TritonImage.for_version("25.04")) == []


def test_response_cache_through_additional_args_before_23_07_is_not_configured() -> None:
    m = manifest_with(lambda d: d["models"]["resnet"]["config"].update(response_cache={"enable": True}))
    art = ModelArtifacts.from_manifest(m, "classifier")
    opts = ServerOptions(response_cache_byte_size=1 << 20)
    try:
        _warnings(artifacts=art, server_options=opts, image=TritonImage.for_version("23.02"))
    except TritonValidationError as exc:
        assert exc.code == "ResponseCacheNotConfigured"
    else:
        raise AssertionError("expected ResponseCacheNotConfigured")
    assert _warnings(artifacts=art, server_options=opts, image=TritonImage.for_version("24.09")) == []


def test_front_flags_before_26_03_warn_and_from_26_03_are_checked() -> None:
    """--http-restricted-api / --http-max-input-size reach the SageMaker port from 26.03 (server PR #8686)."""
    header = "X-Amzn-SageMaker-Custom-Attributes"
    opts = ServerOptions(
        additional_args=(f"--http-restricted-api=inference:{header}=s", "--http-max-input-size=9")
    )
    msgs = _warnings(server_options=opts, image=TritonImage.for_version("24.09"))
    assert len(msgs) == 2 and all("target Triton 26.03 or newer" in m for m in msgs)
    assert _warnings(server_options=opts, image=TritonImage.for_version("26.05")) == []
    bad = ServerOptions(additional_args=("--http-restricted-api=inference:x-api-key=s",))
    try:
        _warnings(server_options=bad, image=TritonImage.for_version("26.05"))
    except TritonValidationError as exc:
        assert exc.code == "RestrictedApiUnreachable" and header in str(exc)
    else:
        raise AssertionError("an inference restriction InvokeEndpoint cannot satisfy synthesized")
