"""The promotion trigger, gate, write-back and assume, with real event documents and botocore's Stubber.

The events are "SageMaker Model Package State Change" documents as EventBridge delivers them
(tests/fixtures/events/): an approval, the write-back of a stage's result (still Approved, one more
metadata entry), a pending and a rejected version.
"""

from __future__ import annotations

import hashlib
import io
import json
import zipfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import boto3
import pytest
from botocore.response import StreamingBody
from botocore.stub import ANY, Stubber

from tests.unit.handlers.promotion_module import load

promotion = load()

EVENTS = Path(__file__).resolve().parents[2] / "fixtures" / "events"
MANIFEST = (Path(__file__).resolve().parents[2] / "fixtures" / "manifests" / "example.json").read_bytes()
SHA = hashlib.sha256(MANIFEST).hexdigest()
ARN = "arn:aws:sagemaker:us-east-1:111111111111:model-package/classifier/3"
EVIDENCE = f"s3://cdk-triton-artifacts-111111111111/cdk-triton/evidence/{SHA}/"
SOURCE_BUCKET, SOURCE_KEY = "promotion-source", "approved/approved.zip"


def event(name: str) -> dict[str, Any]:
    doc = json.loads((EVENTS / f"model-package-{name}.json").read_text())
    meta = doc["detail"]["CustomerMetadataProperties"]
    meta[promotion.SHA_KEY], meta[promotion.EVIDENCE_KEY] = SHA, EVIDENCE
    return doc


def described(
    status: str = "Approved", *, sha: str = SHA, extra: dict[str, str] | None = None
) -> dict[str, Any]:
    return {
        "ModelPackageName": "classifier",
        "ModelPackageGroupName": "classifier",
        "ModelPackageVersion": 3,
        "ModelPackageArn": ARN,
        "CreationTime": "2026-11-26T05:00:00Z",
        "ModelPackageStatus": "Completed",
        "ModelPackageStatusDetails": {"ValidationStatuses": [], "ImageScanStatuses": []},
        "ModelApprovalStatus": status,
        "CustomerMetadataProperties": {
            promotion.SHA_KEY: sha,
            promotion.EVIDENCE_KEY: EVIDENCE,
            **(extra or {}),
        },
    }


@pytest.fixture
def env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SOURCE_BUCKET", SOURCE_BUCKET)
    monkeypatch.setenv("SOURCE_KEY", SOURCE_KEY)
    monkeypatch.setenv("PIPELINE_NAME", "cdk-triton-promotion")
    monkeypatch.setenv("MODEL_PACKAGE_GROUPS", "classifier,multi")


@pytest.fixture
def clients() -> Iterator[dict[str, Any]]:
    made = {
        name: boto3.client(name, region_name="us-east-1", aws_access_key_id="x", aws_secret_access_key="x")
        for name in ("sagemaker", "s3", "codepipeline", "sts")
    }
    stubs = {name: Stubber(c) for name, c in made.items()}
    for s in stubs.values():
        s.activate()
    yield {**made, "stubs": stubs}
    for s in stubs.values():
        s.assert_no_pending_responses()
        s.deactivate()


def stub(clients: dict[str, Any], name: str) -> Stubber:
    return clients["stubs"][name]


def expect_source_head(clients: dict[str, Any], sha: str | None) -> None:
    if sha is None:
        stub(clients, "s3").add_client_error(
            "head_object",
            "404",
            http_status_code=404,
            expected_params={"Bucket": SOURCE_BUCKET, "Key": SOURCE_KEY},
        )
    else:
        stub(clients, "s3").add_response(
            "head_object",
            {"Metadata": {promotion.OBJECT_SHA: sha}},
            expected_params={"Bucket": SOURCE_BUCKET, "Key": SOURCE_KEY},
        )


def expect_start(clients: dict[str, Any], event_id: str, live: bytes | None = None, body: Any = ANY) -> None:
    stub(clients, "s3").add_response(
        "get_object",
        {"Body": StreamingBody(io.BytesIO(MANIFEST), len(MANIFEST))},
        expected_params={
            "Bucket": "cdk-triton-artifacts-111111111111",
            "Key": f"cdk-triton/evidence/{SHA}/manifest.json",
        },
    )
    live_key = {"Bucket": SOURCE_BUCKET, "Key": promotion.LIVE_KEY}
    if live is None:
        stub(clients, "s3").add_client_error(
            "get_object", "NoSuchKey", http_status_code=404, expected_params=live_key
        )
    else:
        stub(clients, "s3").add_response(
            "get_object", {"Body": StreamingBody(io.BytesIO(live), len(live))}, expected_params=live_key
        )
    stub(clients, "s3").add_response(
        "put_object",
        {"ETag": '"e"'},
        expected_params={
            "Bucket": SOURCE_BUCKET,
            "Key": SOURCE_KEY,
            "Body": body,
            "Metadata": {promotion.OBJECT_SHA: SHA, promotion.OBJECT_PACKAGE: ARN},
            "ServerSideEncryption": "AES256",
        },
    )
    stub(clients, "codepipeline").add_response(
        "start_pipeline_execution",
        {"pipelineExecutionId": "0b1c2d3e-4f50-6172-8394-a5b6c7d8e9f0"},
        expected_params={"name": "cdk-triton-promotion", "clientRequestToken": event_id},
    )


def test_approval_copies_the_manifest_and_starts_the_pipeline(env: None, clients: dict[str, Any]) -> None:
    approved = event("approved")
    stub(clients, "sagemaker").add_response("describe_model_package", described(), {"ModelPackageName": ARN})
    expect_source_head(clients, None)
    expect_start(clients, approved["id"])
    out = promotion.handler(approved, None, clients=clients)
    assert out["action"] == "started" and out["manifest_sha256"] == SHA


class Capture:
    """A Stubber parameter matcher that keeps what it was compared with."""

    value: Any = None

    def __eq__(self, other: object) -> bool:
        self.value = other
        return True


def test_the_live_manifest_travels_with_the_approved_one(env: None, clients: dict[str, Any]) -> None:
    """The shadow deploy compares with what prod serves: the last promoted manifest rides in the zip."""
    approved, live, body = event("approved"), b'{"live": true}', Capture()
    stub(clients, "sagemaker").add_response("describe_model_package", described(), {"ModelPackageName": ARN})
    expect_source_head(clients, "f" * 64)  # another build is live
    expect_start(clients, approved["id"], live=live, body=body)
    promotion.handler(approved, None, clients=clients)
    with zipfile.ZipFile(io.BytesIO(body.value)) as zf:
        assert zf.read("live-manifest.json") == live and zf.read("manifest.json") == MANIFEST
        assert json.loads(zf.read("approval.json"))["ModelPackageArn"] == ARN


def test_the_source_object_holds_the_registered_bytes_and_the_approval() -> None:
    approval = {"ModelPackageArn": ARN, "ManifestSha256": SHA}
    blob = promotion.approval_zip(MANIFEST, approval)
    with zipfile.ZipFile(io.BytesIO(blob)) as zf:
        assert zf.read("manifest.json") == MANIFEST
        assert json.loads(zf.read("approval.json")) == approval
    assert blob == promotion.approval_zip(MANIFEST, approval)  # deterministic


def test_write_back_event_starts_no_second_execution(env: None, clients: dict[str, Any]) -> None:
    """The approval starts one execution; the stage's write-back (still Approved) finds its hash at the source."""
    approved, written = event("approved"), event("write-back")
    assert written["detail"]["ModelApprovalStatus"] == "Approved"
    stub(clients, "sagemaker").add_response("describe_model_package", described(), {"ModelPackageName": ARN})
    expect_source_head(clients, None)
    expect_start(clients, approved["id"])
    assert promotion.handler(approved, None, clients=clients)["action"] == "started"
    stub(clients, "sagemaker").add_response(
        "describe_model_package",
        described(extra={"cdk-triton:stage:Staging": "passed"}),
        {"ModelPackageName": ARN},
    )
    out = promotion.handler(written, None, clients=clients)
    assert out == {**out, "action": "skipped", "reason": "results already written back: promoted before"}
    # no put_object, no start_pipeline_execution were queued for the second event: the Stubber would raise


def test_a_late_write_back_of_an_older_version_does_not_redeploy_it(
    env: None, clients: dict[str, Any]
) -> None:
    """Version A's prod result is written back after version B was approved (B's hash at the source key):
    A carries a stage result, so it is not started again; no S3 head, put or start is made."""
    written = event("write-back")
    stub(clients, "sagemaker").add_response(
        "describe_model_package",
        described(extra={"cdk-triton:stage:Prod": "passed"}),
        {"ModelPackageName": ARN},
    )
    out = promotion.handler(written, None, clients=clients)
    assert out["action"] == "skipped" and out["reason"] == "results already written back: promoted before"
    assert out["stages"] == ["cdk-triton:stage:Prod"]


def test_a_manifest_already_deployed_is_skipped(env: None, clients: dict[str, Any]) -> None:
    """Another version approved for the same build (same manifest hash) deploys nothing again."""
    other = event("approved")
    other["detail"]["ModelPackageArn"] = ARN.replace("/3", "/4")
    stub(clients, "sagemaker").add_response(
        "describe_model_package",
        {**described(), "ModelPackageArn": ARN.replace("/3", "/4")},
        {"ModelPackageName": ARN.replace("/3", "/4")},
    )
    expect_source_head(clients, SHA)
    assert promotion.handler(other, None, clients=clients)["action"] == "skipped"


@pytest.mark.parametrize("name", ["pending", "rejected"])
def test_a_version_not_approved_never_reaches_the_source(
    env: None, clients: dict[str, Any], name: str
) -> None:
    out = promotion.handler(event(name), None, clients=clients)  # no AWS call queued: none may happen
    assert out["action"] == "skipped" and out["reason"].startswith("status ")


def test_a_stale_approval_of_a_version_since_rejected_is_skipped(env: None, clients: dict[str, Any]) -> None:
    stub(clients, "sagemaker").add_response(
        "describe_model_package", described("Rejected"), {"ModelPackageName": ARN}
    )
    assert promotion.handler(event("approved"), None, clients=clients)["reason"] == "status now Rejected"


def test_another_group_and_another_event_are_ignored(env: None, clients: dict[str, Any]) -> None:
    other = event("approved")
    other["detail"]["ModelPackageGroupName"] = "unrelated"
    assert promotion.handler(other, None, clients=clients)["reason"] == "another model package group"
    assert promotion.handler({"source": "aws.s3"}, None, clients=clients)["action"] == "skipped"


def test_fails_when_the_manifest_differs_from_the_registered_hash(env: None, clients: dict[str, Any]) -> None:
    stub(clients, "sagemaker").add_response(
        "describe_model_package", described(sha="0" * 64), {"ModelPackageName": ARN}
    )
    expect_source_head(clients, None)
    stub(clients, "s3").add_response(
        "get_object", {"Body": StreamingBody(io.BytesIO(MANIFEST), len(MANIFEST))}
    )
    with pytest.raises(promotion.PromotionRefused, match="registered build was changed"):
        promotion.handler(event("approved"), None, clients=clients)


def _approved_dir(tmp_path: Path) -> Path:
    (tmp_path / "manifest.json").write_bytes(MANIFEST)
    (tmp_path / "approval.json").write_text(json.dumps({"ModelPackageArn": ARN, "ManifestSha256": SHA}))
    return tmp_path


@pytest.mark.parametrize("status", ["PendingManualApproval", "Rejected"])
def test_gate_refuses_a_version_no_longer_approved(
    tmp_path: Path, clients: dict[str, Any], status: str
) -> None:
    stub(clients, "sagemaker").add_response(
        "describe_model_package", described(status), {"ModelPackageName": ARN}
    )
    with pytest.raises(promotion.PromotionRefused, match=f"is {status}"):
        promotion.gate(str(_approved_dir(tmp_path)), clients=clients)


def test_gate_refuses_a_manifest_placed_by_hand(tmp_path: Path, clients: dict[str, Any]) -> None:
    d = _approved_dir(tmp_path)
    (d / "manifest.json").write_bytes(MANIFEST + b" ")
    stub(clients, "sagemaker").add_response("describe_model_package", described(), {"ModelPackageName": ARN})
    with pytest.raises(promotion.PromotionRefused, match="records"):
        promotion.gate(str(d), clients=clients)
    stub(clients, "sagemaker").add_response("describe_model_package", described(), {"ModelPackageName": ARN})
    assert promotion.gate(str(_approved_dir(tmp_path)), clients=clients)["action"] == "gate-passed"


def test_write_back_records_the_stage_result(tmp_path: Path, clients: dict[str, Any]) -> None:
    stub(clients, "sagemaker").add_response("describe_model_package", described(), {"ModelPackageName": ARN})
    stub(clients, "sagemaker").add_response(
        "update_model_package",
        {"ModelPackageArn": ARN},
        {"ModelPackageArn": ARN, "CustomerMetadataProperties": {"cdk-triton:stage:Staging": ANY}},
    )
    out = promotion.write_back(
        str(_approved_dir(tmp_path)), stage="Staging", result="passed", clients=clients
    )
    assert out["result"] == "passed"


def test_write_back_refuses_past_the_metadata_limit(tmp_path: Path, clients: dict[str, Any]) -> None:
    full = {f"k{i}": "v" for i in range(promotion.METADATA_LIMIT - 2)}
    stub(clients, "sagemaker").add_response(
        "describe_model_package", described(extra=full), {"ModelPackageName": ARN}
    )
    with pytest.raises(promotion.PromotionRefused, match="50"):
        promotion.write_back(str(_approved_dir(tmp_path)), stage="Prod", result="passed", clients=clients)


def test_assume_fails_clearly_when_the_target_does_not_trust_the_pipeline(clients: dict[str, Any]) -> None:
    role = "arn:aws:iam::222222222222:role/cdk-hnb659fds-deploy-role-222222222222-eu-west-1"
    stub(clients, "sts").add_client_error("assume_role", "AccessDenied", http_status_code=403)
    stub(clients, "sts").add_response(
        "get_caller_identity",
        {"Account": "111111111111", "Arn": "arn:aws:iam::111111111111:role/x", "UserId": "x"},
    )
    with pytest.raises(promotion.PromotionRefused) as err:
        promotion.assume(role, clients=clients)
    assert "cdk bootstrap aws://222222222222/eu-west-1 --trust 111111111111" in str(err.value)


def test_assume_prints_the_role_credentials(clients: dict[str, Any]) -> None:
    creds = {
        "AccessKeyId": "AKIAEXAMPLEEXAMPLE",
        "SecretAccessKey": "s",
        "SessionToken": "t",
        "Expiration": "2026-11-26T06:00:00Z",
    }
    stub(clients, "sts").add_response("assume_role", {"Credentials": creds})
    out = promotion.assume("arn:aws:iam::222222222222:role/r", clients=clients)
    assert "export AWS_ACCESS_KEY_ID=AKIAEXAMPLEEXAMPLE" in out and "AWS_SESSION_TOKEN=t" in out


def _endpoint(shadow: bool) -> dict[str, Any]:
    doc: dict[str, Any] = {
        "EndpointName": "prod-classifier",
        "EndpointArn": "arn:aws:sagemaker:eu-west-1:222222222222:endpoint/prod-classifier",
        "EndpointConfigName": "c",
        "EndpointStatus": "InService",
        "CreationTime": "2026-11-26T05:00:00Z",
        "LastModifiedTime": "2026-11-26T05:00:00Z",
        "ProductionVariants": [{"VariantName": "AllTraffic"}],
    }
    if shadow:
        doc["ShadowProductionVariants"] = [{"VariantName": "Shadow"}]
    return doc


def _alarm(name: str, state: str) -> dict[str, Any]:
    return {"AlarmName": name, "StateValue": state}


def test_bake_passes_when_no_comparison_alarm_fires(clients: dict[str, Any]) -> None:
    clients["cloudwatch"] = boto3.client(
        "cloudwatch", region_name="eu-west-1", aws_access_key_id="x", aws_secret_access_key="x"
    )
    alarms = ["prod-classifier-shadow-latency", "prod-classifier-shadow-errors"]
    with Stubber(clients["cloudwatch"]) as cw:
        stub(clients, "sagemaker").add_response("describe_endpoint", _endpoint(True))
        for _ in range(3):  # t=0, 60, 120 s of a 2-minute bake
            cw.add_response(
                "describe_alarms", {"MetricAlarms": [_alarm(a, "OK") for a in alarms]}, {"AlarmNames": alarms}
            )
        slept: list[int] = []
        out = promotion.bake(
            endpoint_name="prod-classifier",
            shadow_variant="Shadow",
            alarms=alarms,
            minutes=2,
            clients=clients,
            sleep=slept.append,
        )
        assert out["action"] == "bake-passed" and slept == [60, 60]


def test_bake_fails_when_the_shadow_does_worse(clients: dict[str, Any]) -> None:
    clients["cloudwatch"] = boto3.client(
        "cloudwatch", region_name="eu-west-1", aws_access_key_id="x", aws_secret_access_key="x"
    )
    alarms = ["prod-classifier-shadow-latency"]
    with Stubber(clients["cloudwatch"]) as cw:
        stub(clients, "sagemaker").add_response("describe_endpoint", _endpoint(True))
        cw.add_response("describe_alarms", {"MetricAlarms": [_alarm(alarms[0], "ALARM")]})
        with pytest.raises(promotion.PromotionRefused, match="does worse than production"):
            promotion.bake(
                endpoint_name="prod-classifier",
                shadow_variant="Shadow",
                alarms=alarms,
                minutes=60,
                clients=clients,
                sleep=lambda s: None,
            )


def test_bake_skips_an_endpoint_without_shadow(clients: dict[str, Any]) -> None:
    stub(clients, "sagemaker").add_response("describe_endpoint", _endpoint(False))
    out = promotion.bake(
        endpoint_name="prod-classifier", shadow_variant="Shadow", alarms=["a"], minutes=60, clients=clients
    )
    assert out["action"] == "bake-skipped"


SRC = "s3://cdk-triton-artifacts-111111111111/cdk-triton/"
DST = "s3://cdk-triton-artifacts-333333333333-eu-west-1/cdk-triton/"


def _target_client() -> Any:
    return boto3.client("s3", region_name="eu-west-1", aws_access_key_id="x", aws_secret_access_key="x")


def test_replicate_copies_what_the_region_lacks_and_keeps_what_it_has(clients: dict[str, Any]) -> None:
    plan = [
        [f"{SRC}sme/classifier/dc9c/", f"{DST}sme/classifier/dc9c/"],  # a directory repository
        [f"{SRC}samples/ab12/classifier.request.json", f"{DST}samples/ab12/classifier.request.json"],
    ]
    target = _target_client()
    src = stub(clients, "s3")
    src.add_response(
        "list_objects_v2",
        {
            "Contents": [
                {"Key": "cdk-triton/sme/classifier/dc9c/classifier/config.pbtxt", "Size": 10},
                {"Key": "cdk-triton/sme/classifier/dc9c/resnet/1/model.onnx", "Size": 2048},
            ],
            "IsTruncated": False,
        },
        {"Bucket": "cdk-triton-artifacts-111111111111", "Prefix": "cdk-triton/sme/classifier/dc9c/"},
    )
    src.add_response(
        "head_object",
        {"ContentLength": 300},
        {
            "Bucket": "cdk-triton-artifacts-111111111111",
            "Key": "cdk-triton/samples/ab12/classifier.request.json",
        },
    )
    dst_bucket = "cdk-triton-artifacts-333333333333-eu-west-1"
    with Stubber(target) as dst:
        dst.add_response(
            "head_object",
            {"ContentLength": 10},  # already there: kept
            {"Bucket": dst_bucket, "Key": "cdk-triton/sme/classifier/dc9c/classifier/config.pbtxt"},
        )
        dst.add_client_error(
            "head_object",
            "404",
            http_status_code=404,
            expected_params={
                "Bucket": dst_bucket,
                "Key": "cdk-triton/sme/classifier/dc9c/resnet/1/model.onnx",
            },
        )
        dst.add_response(
            "copy_object",
            {},
            {
                "CopySource": {
                    "Bucket": "cdk-triton-artifacts-111111111111",
                    "Key": "cdk-triton/sme/classifier/dc9c/resnet/1/model.onnx",
                },
                "Bucket": dst_bucket,
                "Key": "cdk-triton/sme/classifier/dc9c/resnet/1/model.onnx",
                "ServerSideEncryption": "AES256",
            },
        )
        dst.add_client_error(
            "head_object",
            "404",
            http_status_code=404,
            expected_params={"Bucket": dst_bucket, "Key": "cdk-triton/samples/ab12/classifier.request.json"},
        )
        dst.add_response(
            "copy_object",
            {},
            {
                "CopySource": {
                    "Bucket": "cdk-triton-artifacts-111111111111",
                    "Key": "cdk-triton/samples/ab12/classifier.request.json",
                },
                "Bucket": dst_bucket,
                "Key": "cdk-triton/samples/ab12/classifier.request.json",
                "ServerSideEncryption": "AES256",
            },
        )
        out = promotion.replicate(plan, clients={**clients, "s3-target": target})
        dst.assert_no_pending_responses()
    assert (out["copied"], out["kept"]) == (2, 1)


def test_replicate_copies_a_large_object_part_by_part(
    clients: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(promotion, "COPY_LIMIT", 100)
    monkeypatch.setattr(promotion, "PART_SIZE", 100)
    key = "cdk-triton/sme/big/abcd.tar.gz"
    target, dst_bucket = _target_client(), "cdk-triton-artifacts-333333333333-eu-west-1"
    stub(clients, "s3").add_response("head_object", {"ContentLength": 250})
    kms = "arn:aws:kms:eu-west-1:333333333333:key/k"
    sse = {"ServerSideEncryption": "aws:kms", "SSEKMSKeyId": kms}
    with Stubber(target) as dst:
        dst.add_client_error("head_object", "404", http_status_code=404)
        dst.add_response(
            "create_multipart_upload", {"UploadId": "u"}, {"Bucket": dst_bucket, "Key": key, **sse}
        )
        for n, rng in enumerate(("bytes=0-99", "bytes=100-199", "bytes=200-249"), start=1):
            dst.add_response(
                "upload_part_copy",
                {"CopyPartResult": {"ETag": f'"e{n}"'}},
                {
                    "Bucket": dst_bucket,
                    "Key": key,
                    "UploadId": "u",
                    "PartNumber": n,
                    "CopySource": {"Bucket": "cdk-triton-artifacts-111111111111", "Key": key},
                    "CopySourceRange": rng,
                },
            )
        dst.add_response(
            "complete_multipart_upload",
            {},
            {
                "Bucket": dst_bucket,
                "Key": key,
                "UploadId": "u",
                "MultipartUpload": {"Parts": [{"ETag": f'"e{n}"', "PartNumber": n} for n in (1, 2, 3)]},
            },
        )
        promotion.replicate(
            [[f"{SRC}sme/big/abcd.tar.gz", f"{DST}sme/big/abcd.tar.gz"]],
            kms_key_arn=kms,
            clients={**clients, "s3-target": target},
        )
        dst.assert_no_pending_responses()


def test_replicate_fails_when_the_approved_build_is_missing(clients: dict[str, Any]) -> None:
    stub(clients, "s3").add_client_error("head_object", "404", http_status_code=404)
    with pytest.raises(promotion.PromotionRefused, match="does not exist"):
        promotion.replicate(
            [[f"{SRC}x.tar.gz", f"{DST}x.tar.gz"]], clients={**clients, "s3-target": _target_client()}
        )


def test_the_trigger_reads_the_keys_the_registration_writes() -> None:
    """One contract: lambda/ cannot import cdk_triton, so its copies of the metadata keys are checked here."""
    registry = pytest.importorskip(
        "cdk_triton.config.registry"
    )  # the registration's module (issue 24 item 1)
    assert promotion.SHA_KEY == registry.MANIFEST_SHA256_KEY
    assert promotion.MANIFEST_KEY == registry.MANIFEST_KEY
    assert promotion.EVIDENCE_KEY == registry.EVIDENCE_KEY
    assert promotion.STAGE_KEY_PREFIX.startswith(registry.METADATA_PREFIX)
    assert promotion.METADATA_LIMIT == registry.MAX_METADATA_ENTRIES
