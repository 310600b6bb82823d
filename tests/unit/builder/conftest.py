"""Build-stage fixtures: one shared build of the example, one of three tiny models, a moto S3 server on 127.0.0.1."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from tests.moto_server import client, moto_server
from tests.unit.builder.helpers import EXAMPLE, tiny, write_decl


@pytest.fixture(scope="session", autouse=True)
def _own_cache_home(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """What builds measure on this machine (workers' peak RSS, export timings: ``parallel``) goes to a
    temp cache home, not the user's."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("XDG_CACHE_HOME", str(tmp_path_factory.mktemp("xdg")))
        yield


@pytest.fixture(scope="session")
def example_build(tmp_path_factory: pytest.TempPathFactory):  # type: ignore[no-untyped-def]
    """The example declaration built once into a temp directory (~8 s)."""
    from cdk_triton.builder import run_build

    out = tmp_path_factory.mktemp("example-out")
    return run_build(EXAMPLE, out_dir=out, progress=False)


@pytest.fixture(scope="session")
def tiny_build(tmp_path_factory: pytest.TempPathFactory):  # type: ignore[no-untyped-def]
    """Three tiny models (ONNX, traced and scripted TorchScript) built once into a temp directory."""
    tmp = tmp_path_factory.mktemp("tiny")
    body = (
        tiny("t_onnx")
        + tiny("t_ts", "torchscript")
        + tiny("t_script", "torchscript")
        + "    torchscript_mode: script\n"
    )
    decl = write_decl(
        tmp,
        body,
        endpoints="""
  - name: m
    mode: MultiModel
    instance_types: [ml.g5.xlarge]
    models: [t_onnx, t_ts, t_script]
""",
    )
    from cdk_triton.builder import run_build

    return run_build(decl, out_dir=tmp / "out", progress=False), tmp


@pytest.fixture(scope="module")
def moto_s3() -> Iterator[Any]:
    """A boto3 S3 client on a moto server of its own (127.0.0.1, free port), stopped after the module;
    empty at the start (moto's state is reset)."""
    from botocore.config import Config

    with moto_server(reset=True) as url:  # a server of an earlier module left its buckets behind
        yield client("s3", url, config=Config(s3={"addressing_style": "path"}))
