"""``cdk-triton register`` up to the API calls: the exact SageMaker requests (botocore Stubber against the
service model), the evidence in S3 (moto), idempotency by the manifest hash, the MME and components
cases, and bad inputs refused before anything is written."""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import json
import shutil
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import boto3
import pytest
from botocore.stub import Stubber

from cdk_triton.cli import main
from cdk_triton.config import registry as keys
from cdk_triton.config.manifest import ComponentEntry, read_manifest
from cdk_triton.errors import TritonValidationError, TritonValidationErrors
from cdk_triton.registry import RegistryError, register_build
from cdk_triton.registry.packages import EvidenceLinks, client_token, package_units

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "manifests"
BUCKET = "example-artifacts-123456789012"
GROUP = "classifier-sme"
IMAGE = "763104351884.dkr.ecr.us-east-1.amazonaws.com/sagemaker-tritonserver:24.09-py3"
ACCOUNT_ARN = "arn:aws:sagemaker:us-east-1:123456789012"
NOW = datetime(2026, 11, 26, tzinfo=UTC)
TYPES = ["application/json", "application/vnd.sagemaker-triton.binary+json"]
CREDENTIALS = {"region_name": "us-east-1", "aws_access_key_id": "testing", "aws_secret_access_key": "testing"}


@pytest.fixture
def manifest_path(tmp_path: Path) -> Path:
    """The example manifest as an uploaded build, its samples beside it."""
    data = json.loads((FIXTURES / "example.json").read_text())
    data["uploaded"] = True
    shutil.copytree(FIXTURES / "samples", tmp_path / "samples")
    path = tmp_path / "manifest.json"
    path.write_text(json.dumps(data, indent=2, sort_keys=True) + "\n")
    return path


@pytest.fixture
def s3() -> Iterator[Any]:
    from moto import mock_aws

    with mock_aws():
        client = boto3.client("s3", **CREDENTIALS)
        client.create_bucket(Bucket=BUCKET)
        yield client


@functools.cache
def _client() -> Any:
    return boto3.client("sagemaker", **CREDENTIALS)


def _sagemaker() -> tuple[Any, Stubber]:
    """The module's SageMaker client with a fresh Stubber (no response queued: any call fails)."""
    return _client(), Stubber(_client())


class _NoS3:
    """An S3 client that fails the test on any call: nothing may be uploaded."""

    def __getattr__(self, name: str) -> Any:
        raise AssertionError(f"s3.{name} was called")


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _group_found(stub: Stubber, group: str = GROUP) -> None:
    stub.add_response(
        "describe_model_package_group",
        {
            "ModelPackageGroupName": group,
            "ModelPackageGroupArn": f"{ACCOUNT_ARN}:model-package-group/{group}",
            "CreationTime": NOW,
            "CreatedBy": {},
            "ModelPackageGroupStatus": "Completed",
        },
        {"ModelPackageGroupName": group},
    )


def _versions(
    stub: Stubber, described: list[dict[str, str]], group: str = GROUP, *, read: int | None = None
) -> None:
    """ListModelPackages returns one version per ``described`` entry (oldest first), newest first; the
    newest ``read`` (default: all) are described with that metadata."""
    arns = [f"{ACCOUNT_ARN}:model-package/{group}/{i + 1}" for i in range(len(described))][::-1]
    stub.add_response(
        "list_model_packages",
        {
            "ModelPackageSummaryList": [
                {"ModelPackageArn": a, "CreationTime": NOW, "ModelPackageStatus": "Completed"} for a in arns
            ]
        },
        {"ModelPackageGroupName": group, "SortBy": "CreationTime", "SortOrder": "Descending"},
    )
    for arn, meta in list(zip(arns, described[::-1], strict=True))[:read]:
        stub.add_response(
            "describe_model_package",
            {
                "ModelPackageName": group,
                "ModelPackageArn": arn,
                "CreationTime": NOW,
                "ModelPackageStatus": "Completed",
                "ModelPackageStatusDetails": {"ValidationStatuses": []},
                "CustomerMetadataProperties": meta,
            },
            {"ModelPackageName": arn},
        )


def _evidence_prefix(sha: str, endpoint: str = "classifier") -> str:
    return f"s3://{BUCKET}/cdk-triton/registry/{endpoint}/{sha}/"


def _sme_request(sha: str) -> dict[str, Any]:
    """The CreateModelPackage request of the example's SME, written out by hand."""
    return {
        "ModelPackageGroupName": GROUP,
        "ModelPackageDescription": f"cdk-triton build {sha[:12]}: endpoint classifier (SingleModel)",
        "InferenceSpecification": {
            "Containers": [
                {
                    "Image": IMAGE,
                    "ModelDataSource": {
                        "S3DataSource": {
                            "S3Uri": f"s3://{BUCKET}/cdk-triton/sme/classifier/dc9c5edb8b2d479e/",
                            "S3DataType": "S3Prefix",
                            "CompressionType": "None",
                        }
                    },
                    "Environment": {"SAGEMAKER_TRITON_DEFAULT_MODEL_NAME": "classifier"},
                }
            ],
            "SupportedContentTypes": TYPES,
            "SupportedResponseMIMETypes": TYPES,
            "SupportedRealtimeInferenceInstanceTypes": ["ml.g5.xlarge"],
        },
        "ModelApprovalStatus": "PendingManualApproval",
        "CustomerMetadataProperties": {
            "cdk-triton:manifest-sha256": sha,
            "cdk-triton:evidence": _evidence_prefix(sha) + "evidence.json",
            "cdk-triton:manifest": _evidence_prefix(sha) + "manifest.json",
            "cdk-triton:endpoint": "classifier",
            "cdk-triton:mode": "SingleModel",
            "cdk-triton:triton-version": "24.09",
            "cdk-triton:unit": "endpoint",
            "cdk-triton:artifact-sha256": read_manifest(FIXTURES / "example.json")
            .endpoints["classifier"]
            .sha256,
        },
        "ClientToken": client_token(GROUP, sha, None, "PendingManualApproval"),
    }


def _keys(s3: Any) -> set[str]:
    return {o["Key"] for o in s3.list_objects_v2(Bucket=BUCKET).get("Contents", [])}


def test_registers_an_sme_with_its_image_artifacts_environment_and_evidence(
    manifest_path: Path, s3: Any
) -> None:
    sha = _sha(manifest_path)
    sm, stub = _sagemaker()
    _group_found(stub)
    _versions(stub, [{keys.MANIFEST_SHA256_KEY: "0" * 64, keys.ENDPOINT_KEY: "classifier"}])  # another build
    arn = f"{ACCOUNT_ARN}:model-package/{GROUP}/2"
    stub.add_response("create_model_package", {"ModelPackageArn": arn}, _sme_request(sha))
    with stub:
        result = register_build(manifest_path, endpoint="classifier", group=GROUP, sagemaker=sm, s3=s3)
    stub.assert_no_pending_responses()
    assert result.created and result.to_dict()["model_package_arns"] == [arn]
    prefix = f"cdk-triton/registry/classifier/{sha}/"
    assert _keys(s3) == {
        prefix + "manifest.json",
        prefix + "evidence.json",
        prefix + "samples/classifier.request.json",
        prefix + "samples/classifier.response.json",
    }
    body = s3.get_object(Bucket=BUCKET, Key=prefix + "manifest.json")["Body"].read()
    assert hashlib.sha256(body).hexdigest() == sha  # the copy is the build, byte for byte
    evidence = json.loads(s3.get_object(Bucket=BUCKET, Key=prefix + "evidence.json")["Body"].read())
    assert evidence["manifest_sha256"] == sha and evidence["image"] == IMAGE
    assert evidence["samples"]["classifier"] == {
        "atol": 0.0001,
        "rtol": 0.001,
        "request": f"s3://{BUCKET}/{prefix}samples/classifier.request.json",
        "response": f"s3://{BUCKET}/{prefix}samples/classifier.response.json",
    }
    assert set(evidence["models"]) == {"classifier", "preprocess", "resnet"}
    assert evidence["tool_versions"]["torch"] == "2.13.0"


def test_registering_the_same_build_twice_creates_and_uploads_nothing(manifest_path: Path, s3: Any) -> None:
    sha = _sha(manifest_path)
    sm, stub = _sagemaker()
    _group_found(stub)
    _versions(
        stub,
        [
            {keys.MANIFEST_SHA256_KEY: "2" * 64, keys.ENDPOINT_KEY: "classifier"},
            {keys.MANIFEST_SHA256_KEY: sha, keys.ENDPOINT_KEY: "classifier"},
            {keys.MANIFEST_SHA256_KEY: "1" * 64, keys.ENDPOINT_KEY: "classifier"},
        ],
        read=2,  # found in version 2: version 1 is not described (an unexpected call fails the stub)
    )
    with stub:  # a create_model_package call would fail: none is stubbed
        result = register_build(manifest_path, endpoint="classifier", group=GROUP, sagemaker=sm, s3=s3)
    stub.assert_no_pending_responses()
    assert result.to_dict()["created"] is False
    assert result.to_dict()["model_package_arns"] == [f"{ACCOUNT_ARN}:model-package/{GROUP}/2"]
    assert _keys(s3) == set()


def test_an_mme_registers_one_package_naming_the_manifest(manifest_path: Path, s3: Any) -> None:
    sha = _sha(manifest_path)
    entry = read_manifest(manifest_path).endpoints["multi"]
    first = entry.target_models["classifier"]
    sm, stub = _sagemaker()
    _group_found(stub, "multi-mme")
    _versions(stub, [], "multi-mme")
    stub.add_response(
        "create_model_package",
        {"ModelPackageArn": f"{ACCOUNT_ARN}:model-package/multi-mme/1"},
        {
            "ModelPackageGroupName": "multi-mme",
            "ModelPackageDescription": f"cdk-triton build {sha[:12]}: endpoint multi (MultiModel)",
            "InferenceSpecification": {
                "Containers": [
                    {
                        "Image": IMAGE,
                        "ModelDataUrl": first.s3_uri,
                        "Environment": {"SAGEMAKER_TRITON_DEFAULT_MODEL_NAME": "classifier"},
                    }
                ],
                "SupportedContentTypes": TYPES,
                "SupportedResponseMIMETypes": TYPES,
                "SupportedRealtimeInferenceInstanceTypes": ["ml.g5.xlarge"],
            },
            "ModelApprovalStatus": "Approved",
            "CustomerMetadataProperties": {
                "cdk-triton:manifest-sha256": sha,
                "cdk-triton:evidence": _evidence_prefix(sha, "multi") + "evidence.json",
                "cdk-triton:manifest": _evidence_prefix(sha, "multi") + "manifest.json",
                "cdk-triton:endpoint": "multi",
                "cdk-triton:mode": "MultiModel",
                "cdk-triton:triton-version": "24.09",
                "cdk-triton:unit": "endpoint",
                "cdk-triton:s3-prefix": entry.s3_prefix,
                "cdk-triton:target-models": "2",
                "cdk-triton:artifact-sha256": first.sha256,
                "team:owner": "ml-platform",
            },
            "ClientToken": client_token("multi-mme", sha, None, "Approved"),
        },
    )
    with stub:
        result = register_build(
            manifest_path,
            endpoint="multi",
            group="multi-mme",
            approval_status="Approved",
            metadata={"team:owner": "ml-platform"},
            sagemaker=sm,
            s3=s3,
        )
    stub.assert_no_pending_responses()
    evidence = json.loads(
        s3.get_object(Bucket=BUCKET, Key=f"cdk-triton/registry/multi/{sha}/evidence.json")["Body"].read()
    )
    assert result.created and set(evidence["artifacts"]["target_models"]) == {"classifier", "resnet_ts"}
    assert evidence["models"].keys() == {"classifier", "preprocess", "resnet", "resnet_ts"}


def _components_entry(manifest_path: Path) -> Any:
    """An InferenceComponents entry as schema 3 describes it: the multi-model entry's archives as components."""
    multi = read_manifest(manifest_path).endpoints["multi"]
    components = {
        name: ComponentEntry(
            logical_name=name, component_name=f"multi-{name.replace('_', '-')}", target_model=name
        )
        for name in multi.target_models
    }
    return dataclasses.replace(multi, mode="InferenceComponents", components=components)


def test_inference_components_register_one_package_per_component(manifest_path: Path) -> None:
    manifest = read_manifest(manifest_path)
    entry = _components_entry(manifest_path)
    units = package_units(
        manifest,
        entry,
        group="multi-ic",
        image_uri=IMAGE,
        manifest_sha256="a" * 64,
        links=EvidenceLinks(evidence_uri="s3://b/e.json", manifest_uri="s3://b/m.json"),
    )
    assert [u.component for u in units] == ["classifier", "resnet_ts"]
    for unit in units:
        target = entry.target_models[unit.component]
        assert unit.request["InferenceSpecification"]["Containers"] == [
            {
                "Image": IMAGE,
                "ModelDataUrl": target.s3_uri,
                "Environment": {"SAGEMAKER_TRITON_DEFAULT_MODEL_NAME": target.model},
            }
        ]
        meta = unit.request["CustomerMetadataProperties"]
        assert meta["cdk-triton:unit"] == "component" and meta["cdk-triton:component"] == unit.component
        assert meta["cdk-triton:component-name"] == entry.components[unit.component].component_name
    assert len({u.request["ClientToken"] for u in units}) == 2


def test_a_components_run_cut_short_creates_only_the_missing_component(
    manifest_path: Path, s3: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    from cdk_triton.registry import register

    manifest = read_manifest(manifest_path)
    entry = _components_entry(manifest_path)
    ic = dataclasses.replace(manifest, endpoints={**manifest.endpoints, "multi": entry})
    sm, stub = _sagemaker()
    _group_found(stub, "multi-ic")
    sha = _sha(manifest_path)
    _versions(
        stub,
        [{keys.MANIFEST_SHA256_KEY: sha, keys.ENDPOINT_KEY: "multi", keys.COMPONENT_KEY: "classifier"}],
        "multi-ic",
    )
    created = f"{ACCOUNT_ARN}:model-package/multi-ic/2"
    expected = {
        "ModelPackageGroupName": "multi-ic",
        "ClientToken": client_token("multi-ic", sha, "resnet_ts", "PendingManualApproval"),
    }
    stub.add_response("create_model_package", {"ModelPackageArn": created}, {**_any_request(), **expected})
    monkeypatch.setattr(register, "read_manifest", lambda _path: ic)  # schema 3 is not read here yet
    with stub:
        result = register_build(manifest_path, endpoint="multi", group="multi-ic", sagemaker=sm, s3=s3)
    stub.assert_no_pending_responses()
    assert [(p.component, p.created) for p in result.packages] == [("classifier", False), ("resnet_ts", True)]


def _any_request() -> dict[str, Any]:
    from botocore.stub import ANY

    return {
        k: ANY
        for k in (
            "ModelPackageDescription",
            "InferenceSpecification",
            "ModelApprovalStatus",
            "CustomerMetadataProperties",
        )
    }


# ---------------------------------------------------------------------------- bad input


def _codes(err: TritonValidationError) -> list[str]:
    return err.codes if isinstance(err, TritonValidationErrors) else [err.code]


@pytest.mark.parametrize(
    ("kwargs", "codes"),
    [
        ({"endpoint": "nope"}, ["UnknownManifestEndpoint"]),
        ({"group": "classifier_sme"}, ["InvalidModelPackageGroupName"]),
        ({"group": "-lead"}, ["InvalidModelPackageGroupName"]),
        ({"evidence_location": "/tmp/evidence"}, ["EvidenceLocationNotS3"]),
        ({"evidence_location": "s3:///no-bucket"}, ["EvidenceLocationNotS3"]),
        ({"approval_status": "approved"}, ["InvalidApprovalStatus"]),
        ({"evidence_files": ["no/such/results.json"]}, ["EvidenceFileNotFound"]),
        ({"metadata": {"cdk-triton:mine": "x"}}, ["InvalidCustomerMetadata"]),
        ({"metadata": {f"k{i}": "v" for i in range(45)}}, ["InvalidCustomerMetadata"]),
        ({"metadata": {"note": "x" * 257}}, ["InvalidCustomerMetadata"]),
        ({"metadata": {"note": "a;b"}}, ["InvalidCustomerMetadata"]),
        (
            {"group": "a_b", "approval_status": "Maybe"},
            ["InvalidModelPackageGroupName", "InvalidApprovalStatus"],
        ),
    ],
    ids=lambda v: str(v)[:40] if isinstance(v, dict) else None,
)
def test_fails_before_any_call_or_upload(
    manifest_path: Path, kwargs: dict[str, Any], codes: list[str]
) -> None:
    sm, stub = _sagemaker()
    args = {"endpoint": "classifier", "group": GROUP, **kwargs}
    with stub, pytest.raises(TritonValidationError) as info:  # no response stubbed: any call would fail
        register_build(manifest_path, sagemaker=sm, s3=_NoS3(), **args)
    assert _codes(info.value) == codes, str(info.value)


def test_fails_when_the_build_was_not_uploaded(tmp_path: Path) -> None:
    shutil.copy(FIXTURES / "example.json", tmp_path / "manifest.json")
    sm, stub = _sagemaker()
    with stub, pytest.raises(TritonValidationError) as info:
        register_build(tmp_path, endpoint="classifier", group=GROUP, sagemaker=sm, s3=_NoS3())
    assert info.value.code == "ManifestNotUploaded"


def test_fails_in_a_region_without_the_image(manifest_path: Path) -> None:
    sm = boto3.client("sagemaker", **{**CREDENTIALS, "region_name": "us-iso-east-1"})
    with Stubber(sm), pytest.raises(TritonValidationError) as info:
        register_build(manifest_path, endpoint="classifier", group=GROUP, sagemaker=sm, s3=_NoS3())
    assert info.value.code == "ImageNotInRegion"


def test_fails_when_the_group_does_not_exist(manifest_path: Path) -> None:
    sm, stub = _sagemaker()
    stub.add_client_error(
        "describe_model_package_group",
        "ValidationException",
        "ModelPackageGroup classifier-sme does not exist.",
    )
    with stub, pytest.raises(TritonValidationError) as info:
        register_build(manifest_path, endpoint="classifier", group=GROUP, sagemaker=sm, s3=_NoS3())
    assert info.value.code == "ModelPackageGroupNotFound"


def test_a_failing_create_is_a_registry_error(manifest_path: Path, s3: Any) -> None:
    sm, stub = _sagemaker()
    _group_found(stub)
    _versions(stub, [])
    stub.add_client_error("create_model_package", "ResourceLimitExceeded", "too many versions")
    with (
        stub,
        pytest.raises(
            RegistryError, match=r"CreateModelPackage .*ResourceLimitExceeded.*\[RegistryCallFailed\]"
        ),
    ):
        register_build(manifest_path, endpoint="classifier", group=GROUP, sagemaker=sm, s3=s3)


def test_metadata_beyond_the_stage_reserve_is_refused_by_the_document_check(manifest_path: Path) -> None:
    manifest = read_manifest(manifest_path)
    with pytest.raises(TritonValidationError, match="41 entries, more than 40") as info:
        package_units(
            manifest,
            manifest.endpoints["classifier"],
            group=GROUP,
            image_uri=IMAGE,
            manifest_sha256="a" * 64,
            links=EvidenceLinks(evidence_uri="s3://b/e.json", manifest_uri="s3://b/m.json"),
            extra_metadata={f"k{i}": "v" for i in range(33)},  # + the SME's 8
        )
    assert info.value.code == "InvalidCustomerMetadata"


# ---------------------------------------------------------------------------- CLI


def test_cli_register_prints_json_and_bad_input_exits_2(
    manifest_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    code = main(
        ["register", "--manifest", str(manifest_path), "--endpoint", "classifier", "--group", "bad_name"]
    )
    assert code == 2 and "[InvalidModelPackageGroupName]" in capsys.readouterr().err

    sha = _sha(manifest_path)
    sm, stub = _sagemaker()
    _group_found(stub)
    _versions(stub, [{keys.MANIFEST_SHA256_KEY: sha, keys.ENDPOINT_KEY: "classifier"}])
    from cdk_triton.registry import register

    monkeypatch.setattr(register, "_client", lambda service: sm)
    with stub:
        assert (
            main(["register", "--manifest", str(manifest_path), "--endpoint", "classifier", "--group", GROUP])
            == 0
        )
    out = json.loads(capsys.readouterr().out)
    assert out["created"] is False and out["manifest_sha256"] == sha
    assert out["model_package_arns"] == [f"{ACCOUNT_ARN}:model-package/{GROUP}/1"]


def test_the_build_step_command_is_the_cli() -> None:
    cmd = keys.register_command(endpoint="classifier", group=GROUP, evidence_location="s3://ev/x")
    assert cmd == (
        "cdk-triton register --manifest build/out/manifest.json --endpoint classifier "
        f"--group {GROUP} --evidence-location s3://ev/x"
    )


# ---------------------------------------------------------------------------- moto end to end


def test_end_to_end_on_moto_one_version_per_build(manifest_path: Path, s3: Any) -> None:
    """moto's SageMaker keeps packages and their metadata: a second run finds the first, a new build adds one."""
    sm = boto3.client("sagemaker", **CREDENTIALS)
    sm.create_model_package_group(ModelPackageGroupName=GROUP)
    first = register_build(manifest_path, endpoint="classifier", group=GROUP, sagemaker=sm, s3=s3)
    again = register_build(manifest_path, endpoint="classifier", group=GROUP, sagemaker=sm, s3=s3)
    assert (first.created, again.created) == (True, False)
    assert again.to_dict()["model_package_arns"] == first.to_dict()["model_package_arns"]

    data = json.loads(manifest_path.read_text())
    data["tool_versions"]["torch"] = "2.13.1"  # another build of the same endpoint
    manifest_path.write_text(json.dumps(data, indent=2, sort_keys=True) + "\n")
    rebuilt = register_build(manifest_path, endpoint="classifier", group=GROUP, sagemaker=sm, s3=s3)
    versions = sm.list_model_packages(ModelPackageGroupName=GROUP)["ModelPackageSummaryList"]
    assert rebuilt.created and len(versions) == 2
    described = sm.describe_model_package(ModelPackageName=rebuilt.packages[0].arn)
    assert described["ModelApprovalStatus"] == "PendingManualApproval"
    assert described["CustomerMetadataProperties"]["cdk-triton:manifest-sha256"] == _sha(manifest_path)

    with pytest.raises(TritonValidationError) as info:  # moto's answer for a group that does not exist
        register_build(manifest_path, endpoint="classifier", group="no-such-group", sagemaker=sm, s3=s3)
    assert info.value.code == "ModelPackageGroupNotFound"


def test_evidence_in_the_artifact_bucket_is_encrypted_with_its_key() -> None:
    from cdk_triton.registry.evidence import Evidence, EvidenceObject
    from cdk_triton.registry.register import upload_evidence

    key = "arn:aws:kms:us-east-1:123456789012:key/11111111-2222-3333-4444-555555555555"
    s3 = boto3.client("s3", **CREDENTIALS)
    evidence = Evidence(
        bucket=BUCKET, prefix="p/", objects=[EvidenceObject(key="p/evidence.json", body=b"{}")]
    )
    with Stubber(s3) as stub:
        stub.add_response(
            "put_object",
            {},
            {
                "Bucket": BUCKET,
                "Key": "p/evidence.json",
                "Body": b"{}",
                "ContentType": "application/json",
                "ServerSideEncryption": "aws:kms",
                "SSEKMSKeyId": key,
            },
        )
        upload_evidence(s3, evidence, kms_key_arn=key)
        stub.assert_no_pending_responses()


def test_the_evidence_carries_the_parity_the_build_recorded(manifest_path: Path) -> None:
    from cdk_triton.builder.cache import ModelCache
    from cdk_triton.registry.evidence import build_evidence

    data = json.loads(manifest_path.read_text())
    data["models"]["resnet"]["source_sha256"] = "b" * 64  # the cache key the build used
    manifest_path.write_text(json.dumps(data))
    manifest = read_manifest(manifest_path)
    record = ModelCache(manifest_path.parent).record_path("resnet", "b" * 64)
    record.parent.mkdir(parents=True)
    record.write_text(json.dumps({"parity_max_abs_diff": 2.5e-6}))
    evidence = build_evidence(
        manifest,
        manifest.endpoints["classifier"],
        manifest_bytes=manifest_path.read_bytes(),
        manifest_sha256="a" * 64,
        location=manifest.artifact_location,
        image_uri=IMAGE,
        region="us-east-1",
        files=[],
    )
    document = json.loads(evidence.objects[-1].body)
    assert document["models"]["resnet"]["parity_max_abs_diff"] == 2.5e-6
    assert "parity_max_abs_diff" not in document["models"]["preprocess"]


def test_cli_without_a_region_exits_2_naming_the_fix(
    manifest_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in ("AWS_REGION", "AWS_DEFAULT_REGION"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AWS_CONFIG_FILE", str(manifest_path.parent / "no-config"))
    argv = ["register", "--manifest", str(manifest_path), "--endpoint", "classifier", "--group", GROUP]
    assert main(argv) == 2
    assert "[RegionRequired]" in capsys.readouterr().err
