"""The layout contract: names and keys come out exactly as the build has always written them."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from cdk_triton.config import layout
from cdk_triton.config.manifest import read_manifest

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "manifests"
SHA = hashlib.sha256(b"x").hexdigest()


def test_archive_names_are_written_and_read_back() -> None:
    name = layout.archive_name("resnet", SHA)
    assert name == f"resnet-{SHA[:12]}.tar.gz"
    parsed = layout.parse_archive_name(name)
    assert parsed == ("resnet", SHA[:12]) and parsed.carries(SHA)
    assert not parsed.carries(hashlib.sha256(b"y").hexdigest())
    assert layout.parse_archive_name("my-model-v1-" + SHA[:12] + ".tar.gz") == ("my-model-v1", SHA[:12])


@pytest.mark.parametrize(
    "name",
    ["resnet.tar.gz", f"resnet-{SHA[:11]}.tar.gz", f"resnet-{SHA[:12].upper()}.tar.gz", f"-{SHA[:12]}.tgz"],
)
def test_names_the_build_did_not_write_are_not_archive_names(name: str) -> None:
    assert layout.parse_archive_name(name) is None


def test_every_target_model_of_the_example_manifest_parses_and_carries_its_hash() -> None:
    manifest = read_manifest(FIXTURES / "example.json")
    targets = [t for e in manifest.endpoints.values() for t in e.target_models.values()]
    assert targets
    for t in targets:
        parsed = layout.parse_archive_name(t.target_model)
        assert parsed is not None and parsed.stem == t.model and parsed.carries(t.sha256)
        assert layout.archive_name(t.model, t.sha256) == t.target_model


def test_keys_of_sme_mme_and_samples() -> None:
    assert layout.sme_directory_key("ep", SHA) == f"sme/ep/{SHA[:16]}/"
    assert layout.sme_archive_key("ep", "ep-abc.tar.gz") == "sme/ep/ep-abc.tar.gz"
    assert layout.mme_prefix_key("multi") == "mme/multi/"
    assert layout.target_model_uri("s3://b/p/mme/multi/", "m-1.tar.gz") == "s3://b/p/mme/multi/m-1.tar.gz"
    assert layout.sample_path("m", "request") == "samples/m.request.json"
    assert layout.samples_key_pattern("p/") == "p/samples/*"


@pytest.mark.parametrize(
    ("name", "ok"),
    [
        ("resnet", True),
        ("a.b-c_d", True),
        ("9lives", True),
        ("_x", False),
        ("my model", False),
        ("a/b", False),
        ("x" * 200, True),
        ("x" * 201, False),
        ("abc\n", False),
        ("", False),
    ],
)
def test_model_name_rule(name: str, ok: bool) -> None:
    assert layout.is_model_name(name) is ok


def test_sample_s3_uris_recorded_win_else_derived_from_the_files(tmp_path: Path) -> None:
    import dataclasses
    import hashlib

    from cdk_triton.config.manifest import ArtifactLocation, Sample

    (tmp_path / "samples").mkdir()
    (tmp_path / "samples" / "m.request.json").write_text('{"inputs": []}')
    (tmp_path / "samples" / "m.response.json").write_text('{"outputs": []}')
    manifest = dataclasses.replace(
        read_manifest(FIXTURES / "example.json"),
        artifact_location=ArtifactLocation(bucket="b", prefix="p/"),
        path=str(tmp_path / "manifest.json"),
    )
    sample = Sample(request="samples/m.request.json", response="samples/m.response.json")
    sha12 = hashlib.sha256(b'{"inputs": []}\0{"outputs": []}').hexdigest()[:12]
    assert (
        manifest.artifact_location.uri + layout.sample_prefix_key('{"inputs": []}', '{"outputs": []}')
        == f"s3://b/p/samples/{sha12}/"
    )
    assert layout.sample_s3_uris(manifest, sample) == (
        f"s3://b/p/samples/{sha12}/m.request.json",
        f"s3://b/p/samples/{sha12}/m.response.json",
    )
    recorded = dataclasses.replace(sample, request_s3_uri="s3://x/a.json", response_s3_uri="s3://x/b.json")
    assert layout.sample_s3_uris(manifest, recorded) == ("s3://x/a.json", "s3://x/b.json")
    assert layout.sample_s3_uris(manifest, dataclasses.replace(sample, request="samples/gone.json")) is None


def test_registry_evidence_is_content_addressed_by_the_whole_manifest_hash() -> None:
    sha = "ab" * 32
    assert layout.registry_evidence_prefix("classifier", sha) == f"registry/classifier/{sha}/"
