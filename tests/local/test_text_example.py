"""The text example (build/examples/text/models.yaml): a BERT pipeline whose python preprocess tokenizes text
with HF tokenizers from a packed environment (wheels from the repository's .wheelhouse, filled by `make
install`: offline), as an ensemble and through business logic scripting (bert loaded at start beside the
caller), built and answered with text by the real tritonserver."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from cdk_triton.config.manifest import read_manifest
from cdk_triton.local import CpuOverlay, LocalEndpoint, build_request, invoke_sample, parse_response

ROOT = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.triton


@pytest.fixture(scope="module")
def manifest(tmp_path_factory: pytest.TempPathFactory):  # type: ignore[no-untyped-def]
    from cdk_triton.builder import run_build

    house = ROOT / ".wheelhouse"
    assert any(house.glob("tokenizers-*.whl")), f"no tokenizers wheel in {house}: run `make install`"
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("CDK_TRITON_WHEELHOUSE", str(house))
        out = tmp_path_factory.mktemp("text") / "out"
        return read_manifest(
            run_build(ROOT / "build/examples/text/models.yaml", out_dir=out, progress=False).manifest_path
        )


@pytest.mark.parametrize("endpoint", ["text", "text_bls"])
def test_text_in_pooled_output_out(manifest, endpoint: str) -> None:  # type: ignore[no-untyped-def]
    assert manifest.endpoints["text_bls"].load_models == ["tokenize", "bert"]  # its calls, loaded at start
    with LocalEndpoint(manifest, endpoint, overlay=CpuOverlay(instance_count=1)) as ep:
        assert invoke_sample(ep).ok  # the build's sample (random words) through the real server
        texts = np.array([[b"the cat sat on the mat"], [b"ein Satz, unknown words!"]], dtype=object)
        status, headers, data = ep.invoke(*build_request({"TEXT": texts}))
        assert status == 200, data.decode()
        pooled = parse_response(data, headers.get("content-type"))["pooler_output"]
        assert pooled.shape == (2, 32) and not np.allclose(pooled[0], pooled[1])


def test_the_ensemble_and_the_bls_model_answer_alike(manifest) -> None:  # type: ignore[no-untyped-def]
    """text_bls calls tokenize, then bert: the same pooled output as the ensemble's steps."""
    texts = np.array([[b"the cat sat on the mat"], [b"ein Satz, unknown words!"]], dtype=object)
    pooled = {}
    for endpoint in ("text", "text_bls"):
        with LocalEndpoint(manifest, endpoint, overlay=CpuOverlay(instance_count=1)) as ep:
            status, headers, data = ep.invoke(*build_request({"TEXT": texts}))
            assert status == 200, data.decode()
            pooled[endpoint] = parse_response(data, headers.get("content-type"))["pooler_output"]
    np.testing.assert_allclose(pooled["text"], pooled["text_bls"], rtol=0, atol=1e-6)
