"""Registry-gated promotion: start the promotion pipeline on an approval, gate it, write results back.

Plain Python and boto3 (no cdk_triton import: this file ships as a Lambda asset and runs in CodeBuild).

Entry points
------------
``handler(event, context)``
    The EventBridge target of "SageMaker Model Package State Change" (source ``aws.sagemaker``). It starts
    the promotion pipeline only on the transition to ``Approved`` of a version whose manifest is not the one
    already at the pipeline's source key: SageMaker may send several events per change, and writing a
    stage's result back to the version (``UpdateModelPackage``) sends another event with the status still
    ``Approved``; both find the same manifest hash at the source key and are skipped, and a version that
    carries a stage's result was promoted before and is skipped too (a late write-back of an older
    version, after a newer build took the source key, would otherwise start it again). It re-reads the
    version (``DescribeModelPackage``: the event may be stale), fetches the manifest the version records,
    checks its sha256 against ``cdk-triton:manifest-sha256``, writes ``approved.zip`` (``manifest.json`` +
    ``approval.json``) to the source key with the hash in the object's metadata, then starts the pipeline.
``python index.py gate --approved DIR``
    The pipeline's first command: fails unless the version is still ``Approved`` and the manifest in
    ``DIR`` is byte for byte the one it records (a pending or rejected version never reaches a stage).
``python index.py write-back --approved DIR --stage NAME --result passed|failed``
    ``UpdateModelPackage`` with ``cdk-triton:stage:<NAME>`` in ``CustomerMetadataProperties``.
``python index.py bake --endpoint-name E --shadow-variant V --alarm A ... --minutes N``
    The shadow's bake: fails as soon as a comparison alarm (shadow vs production variant) is in ALARM, passes
    when none fired over the bake time; passes at once when the endpoint has no shadow (first promotion).
``python index.py replicate --plan replicate-<stage>.json --target-region R [--kms-key-arn K]``
    Copies the build's objects to the stage's bucket in its own region before the deploy (SageMaker reads
    model data only in the model's region); a key already there with the same size is kept (the keys are
    content-addressed), so a rerun copies nothing twice.
``python index.py assume --role-arn ARN``
    Prints ``export AWS_...`` lines for the role (the stage account's deploy or verify role); exits 3 with
    the bootstrap command to run when the trust is missing.
"""

from __future__ import annotations

import argparse
import hashlib
import io
import json
import os
import sys
import time
import zipfile
from typing import Any

import boto3
from botocore.exceptions import ClientError

DETAIL_TYPE = "SageMaker Model Package State Change"
SOURCE = "aws.sagemaker"
APPROVED = "Approved"
SHA_KEY = "cdk-triton:manifest-sha256"
MANIFEST_KEY = "cdk-triton:manifest"
EVIDENCE_KEY = "cdk-triton:evidence"
STAGE_KEY_PREFIX = "cdk-triton:stage:"
#: the manifest the last promotion made live in prod (the pipeline's last stage writes it)
LIVE_KEY = "live/manifest.json"
#: the source object's user metadata (S3 lower-cases it): the hash of the manifest the pipeline deploys
OBJECT_SHA = "manifest-sha256"
OBJECT_PACKAGE = "model-package-arn"
#: CustomerMetadataProperties holds at most 50 entries (SageMaker API reference)
METADATA_LIMIT = 50
# A fixed zip timestamp: the same approval writes the same bytes.
_ZIP_TIME = (1980, 1, 1, 0, 0, 0)


class PromotionRefused(Exception):
    """The version cannot be promoted (its manifest is missing or differs from the hash it records)."""


def _client(name: str, clients: dict[str, Any] | None) -> Any:
    if clients and name in clients:
        return clients[name]
    return boto3.client(name)


def _log(**fields: Any) -> dict[str, Any]:
    print(json.dumps(fields, sort_keys=True, default=str))
    return fields


def _split_s3(uri: str) -> tuple[str, str]:
    if not uri.startswith("s3://"):
        raise PromotionRefused(f"not an s3:// URI: {uri!r}")
    bucket, _, key = uri[5:].partition("/")
    return bucket, key


def manifest_uri(metadata: dict[str, str]) -> str | None:
    """Where the version's manifest.json lies: ``cdk-triton:manifest``, else ``<cdk-triton:evidence>manifest.json``."""
    if metadata.get(MANIFEST_KEY):
        return metadata[MANIFEST_KEY]
    evidence = metadata.get(EVIDENCE_KEY, "")
    if evidence.endswith("/"):
        return f"{evidence}manifest.json"
    return None


def approval_zip(manifest: bytes, approval: dict[str, Any], live: bytes | None = None) -> bytes:
    """The source object: ``manifest.json`` as registered, ``approval.json`` and, when prod serves a build,
    ``live-manifest.json`` (the shadow deploy compares with it); deterministic bytes."""
    buf = io.BytesIO()
    files = [
        ("manifest.json", manifest),
        ("approval.json", (json.dumps(approval, indent=2, sort_keys=True) + "\n").encode()),
    ]
    if live is not None:
        files.append(("live-manifest.json", live))
    with zipfile.ZipFile(buf, "w", compression=zipfile.ZIP_DEFLATED) as zf:
        for name, data in files:
            info = zipfile.ZipInfo(name, date_time=_ZIP_TIME)
            info.external_attr = 0o644 << 16
            zf.writestr(info, data, compress_type=zipfile.ZIP_DEFLATED)
    return buf.getvalue()


def _deployed_sha(s3: Any, bucket: str, key: str) -> str | None:
    try:
        head = s3.head_object(Bucket=bucket, Key=key)
    except ClientError as exc:
        if exc.response.get("Error", {}).get("Code") in ("404", "NoSuchKey", "NotFound"):
            return None
        raise
    return head.get("Metadata", {}).get(OBJECT_SHA)


def _live_manifest(s3: Any, bucket: str) -> bytes | None:
    try:
        return bytes(s3.get_object(Bucket=bucket, Key=LIVE_KEY)["Body"].read())
    except ClientError as exc:
        if exc.response.get("Error", {}).get("Code") in ("404", "NoSuchKey", "NotFound"):
            return None
        raise


def _skip(reason: str, **fields: Any) -> dict[str, Any]:
    return _log(action="skipped", reason=reason, **fields)


def handler(
    event: dict[str, Any], context: Any = None, *, clients: dict[str, Any] | None = None
) -> dict[str, Any]:
    """Start the promotion pipeline for a newly approved version (see the module docstring)."""
    if event.get("source") != SOURCE or event.get("detail-type") != DETAIL_TYPE:
        return _skip("not a model package state change", source=event.get("source"))
    detail = event.get("detail") or {}
    arn = str(detail.get("ModelPackageArn", ""))
    groups = [g for g in os.environ.get("MODEL_PACKAGE_GROUPS", "").split(",") if g]
    if groups and detail.get("ModelPackageGroupName") not in groups:
        return _skip("another model package group", package=arn)
    if detail.get("ModelApprovalStatus") != APPROVED:
        return _skip(f"status {detail.get('ModelApprovalStatus')}", package=arn)
    sagemaker, s3 = _client("sagemaker", clients), _client("s3", clients)
    package = sagemaker.describe_model_package(ModelPackageName=arn)
    if package.get("ModelApprovalStatus") != APPROVED:  # the event is older than the version's state
        return _skip(f"status now {package.get('ModelApprovalStatus')}", package=arn)
    metadata = package.get("CustomerMetadataProperties", {})
    results = sorted(k for k in metadata if k.startswith(STAGE_KEY_PREFIX))
    if results:  # a stage wrote back: this version was promoted before (a late write-back of an older
        # version finds a newer build at the source key, so the hash check alone would start it again)
        return _skip("results already written back: promoted before", package=arn, stages=results)
    sha = metadata.get(SHA_KEY)
    uri = manifest_uri(metadata)
    if not sha or not uri:
        raise PromotionRefused(
            f"{arn} records no {SHA_KEY} or manifest location: register it with cdk-triton register"
        )
    bucket, key = os.environ["SOURCE_BUCKET"], os.environ["SOURCE_KEY"]
    if _deployed_sha(s3, bucket, key) == sha:  # a write-back, a duplicate event, or the manifest already live
        return _skip("manifest already deployed or in flight", package=arn, manifest_sha256=sha)
    mbucket, mkey = _split_s3(uri)
    manifest = s3.get_object(Bucket=mbucket, Key=mkey)["Body"].read()
    actual = hashlib.sha256(manifest).hexdigest()
    if actual != sha:
        raise PromotionRefused(
            f"{uri} has sha256 {actual}, {arn} records {sha}: the registered build was changed"
        )
    approval = {
        "ModelPackageArn": arn,
        "ModelPackageGroupName": package.get("ModelPackageGroupName"),
        "ModelPackageVersion": package.get("ModelPackageVersion"),
        "ManifestSha256": sha,
        "ManifestUri": uri,
        "EventId": event.get("id"),
    }
    s3.put_object(
        Bucket=bucket,
        Key=key,
        Body=approval_zip(manifest, approval, _live_manifest(s3, bucket)),
        Metadata={OBJECT_SHA: sha, OBJECT_PACKAGE: arn},
        ServerSideEncryption="AES256",
    )
    pipeline = os.environ["PIPELINE_NAME"]
    # The event id makes EventBridge's redeliveries of one event one execution.
    started = _client("codepipeline", clients).start_pipeline_execution(
        name=pipeline, clientRequestToken=str(event.get("id") or sha)
    )
    return _log(
        action="started",
        package=arn,
        manifest_sha256=sha,
        pipeline=pipeline,
        execution=started.get("pipelineExecutionId"),
    )


# ------------------------------------------------------------------------------ pipeline commands


def _approved(directory: str) -> tuple[dict[str, Any], bytes]:
    with open(os.path.join(directory, "approval.json"), encoding="utf-8") as f:
        approval = json.load(f)
    with open(os.path.join(directory, "manifest.json"), "rb") as f:
        return approval, f.read()


def gate(directory: str, *, clients: dict[str, Any] | None = None) -> dict[str, Any]:
    """Raise PromotionRefused unless the version is Approved now and records the manifest in ``directory``."""
    approval, manifest = _approved(directory)
    arn = approval["ModelPackageArn"]
    package = _client("sagemaker", clients).describe_model_package(ModelPackageName=arn)
    status = package.get("ModelApprovalStatus")
    if status != APPROVED:
        raise PromotionRefused(f"{arn} is {status}, not {APPROVED}: nothing is deployed")
    recorded = package.get("CustomerMetadataProperties", {}).get(SHA_KEY)
    actual = hashlib.sha256(manifest).hexdigest()
    if recorded != actual:
        raise PromotionRefused(
            f"manifest.json has sha256 {actual}, {arn} records {recorded}: nothing is deployed"
        )
    return _log(action="gate-passed", package=arn, manifest_sha256=actual)


def write_back(
    directory: str, *, stage: str, result: str, detail: str = "", clients: dict[str, Any] | None = None
) -> dict[str, Any]:
    """Record ``result`` of ``stage`` on the version (one metadata entry per stage, overwritten on a rerun)."""
    approval, _ = _approved(directory)
    arn = approval["ModelPackageArn"]
    sagemaker = _client("sagemaker", clients)
    key = f"{STAGE_KEY_PREFIX}{stage}"
    existing = sagemaker.describe_model_package(ModelPackageName=arn).get("CustomerMetadataProperties", {})
    if key not in existing and len(existing) >= METADATA_LIMIT:
        raise PromotionRefused(f"{arn} holds {len(existing)} metadata entries, the most SageMaker allows")
    when = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    execution = os.environ.get("CODEBUILD_BUILD_ID", "")
    value = " ".join(p for p in (result, when, execution, detail) if p)[:256]
    sagemaker.update_model_package(ModelPackageArn=arn, CustomerMetadataProperties={key: value})
    return _log(action="written-back", package=arn, stage=stage, result=result)


def bootstrap_hint(role_arn: str, trusted: str) -> str:
    """The command that makes ``role_arn`` (a CDK bootstrap role) trust the pipeline account ``trusted``."""
    account = role_arn.split(":")[4] if role_arn.count(":") >= 5 else "<account>"
    region = role_arn.rsplit("-", 3)[-3:] if "deploy-role" in role_arn else []
    where = f"aws://{account}/{'-'.join(region)}" if len(region) == 3 else f"aws://{account}/<region>"
    return (
        f"npx cdk bootstrap {where} --trust {trusted} "
        "--cloudformation-execution-policies arn:aws:iam::<account>:policy/cdk-triton-deploy"
    )


def assume(
    role_arn: str, *, session: str = "cdk-triton-promotion", clients: dict[str, Any] | None = None
) -> str:
    """``export`` lines for ``role_arn``; PromotionRefused naming the bootstrap command when trust is missing."""
    sts = _client("sts", clients)
    try:
        creds = sts.assume_role(RoleArn=role_arn, RoleSessionName=session[:64])["Credentials"]
    except ClientError as exc:
        code = exc.response.get("Error", {}).get("Code")
        if code not in ("AccessDenied", "AccessDeniedException"):
            raise
        me = sts.get_caller_identity().get("Account", "<pipeline account>")
        raise PromotionRefused(
            f"the pipeline account {me} cannot assume {role_arn} ({code}): the target account does not trust it; "
            f"run: {bootstrap_hint(role_arn, me)}"
        ) from exc
    return "\n".join(
        f"export {name}={creds[field]}"
        for name, field in (
            ("AWS_ACCESS_KEY_ID", "AccessKeyId"),
            ("AWS_SECRET_ACCESS_KEY", "SecretAccessKey"),
            ("AWS_SESSION_TOKEN", "SessionToken"),
        )
    )


#: CopyObject copies at most 5 GiB; larger objects go part by part (UploadPartCopy, 1 GiB parts)
COPY_LIMIT = 5 * 1024**3
PART_SIZE = 1024**3


def _objects(s3: Any, uri: str) -> list[tuple[str, str, int | None]]:
    """``(bucket, key, size)`` of the object ``uri``, or of every object under it when it ends ``/``."""
    bucket, key = _split_s3(uri)
    if not uri.endswith("/"):
        return [(bucket, key, None)]
    out: list[tuple[str, str, int | None]] = []
    for page in s3.get_paginator("list_objects_v2").paginate(Bucket=bucket, Prefix=key):
        out += [(bucket, o["Key"], int(o["Size"])) for o in page.get("Contents", [])]
    return out


def _size(s3: Any, bucket: str, key: str) -> int | None:
    try:
        return int(s3.head_object(Bucket=bucket, Key=key)["ContentLength"])
    except ClientError as exc:
        if exc.response.get("Error", {}).get("Code") in ("404", "NoSuchKey", "NotFound"):
            return None
        raise


def _copy_one(
    target: Any, source: dict[str, str], bucket: str, key: str, size: int, sse: dict[str, str]
) -> None:
    if size <= COPY_LIMIT:
        target.copy_object(CopySource=source, Bucket=bucket, Key=key, **sse)
        return
    upload = target.create_multipart_upload(Bucket=bucket, Key=key, **sse)["UploadId"]
    parts = []
    for number, start in enumerate(range(0, size, PART_SIZE), start=1):
        end = min(start + PART_SIZE, size) - 1
        etag = target.upload_part_copy(
            Bucket=bucket,
            Key=key,
            UploadId=upload,
            PartNumber=number,
            CopySource=source,
            CopySourceRange=f"bytes={start}-{end}",
        )["CopyPartResult"]["ETag"]
        parts.append({"ETag": etag, "PartNumber": number})
    target.complete_multipart_upload(
        Bucket=bucket, Key=key, UploadId=upload, MultipartUpload={"Parts": parts}
    )


def replicate(
    plan: list[list[str]], *, kms_key_arn: str | None = None, clients: dict[str, Any] | None = None
) -> dict[str, Any]:
    """Copy every ``[source, target]`` of ``plan`` (prefixes ending ``/`` recursively) that is not there yet."""
    source_s3 = _client("s3", clients)
    target_s3 = (clients or {}).get("s3-target") or source_s3
    sse = (
        {"ServerSideEncryption": "aws:kms", "SSEKMSKeyId": kms_key_arn}
        if kms_key_arn
        else {"ServerSideEncryption": "AES256"}
    )
    copied = kept = 0
    for src, dst in plan:
        dbucket, dkey = _split_s3(dst)
        for bucket, key, size in _objects(source_s3, src):
            if size is None:
                size = _size(source_s3, bucket, key)
                if size is None:
                    raise PromotionRefused(f"s3://{bucket}/{key} of the approved build does not exist")
            target_key = dkey + key[len(_split_s3(src)[1]) :] if src.endswith("/") else dkey
            if _size(target_s3, dbucket, target_key) == size:
                kept += 1
                continue
            _copy_one(target_s3, {"Bucket": bucket, "Key": key}, dbucket, target_key, size, sse)
            copied += 1
    return _log(action="replicated", copied=copied, kept=kept)


def bake(
    *,
    endpoint_name: str,
    shadow_variant: str,
    alarms: list[str],
    minutes: int,
    interval_s: int = 60,
    clients: dict[str, Any] | None = None,
    sleep: Any = time.sleep,
) -> dict[str, Any]:
    """Watch the comparison alarms for ``minutes``; PromotionRefused when one fires or is missing."""
    endpoint = _client("sagemaker", clients).describe_endpoint(EndpointName=endpoint_name)
    shadows = [v.get("VariantName") for v in endpoint.get("ShadowProductionVariants") or []]
    if shadow_variant not in shadows:
        return _log(
            action="bake-skipped", endpoint=endpoint_name, reason="no shadow variant: nothing live to compare"
        )
    cloudwatch = _client("cloudwatch", clients)
    waited = 0
    while True:
        found = cloudwatch.describe_alarms(AlarmNames=alarms).get("MetricAlarms", [])
        missing = sorted(set(alarms) - {a["AlarmName"] for a in found})
        if missing:
            raise PromotionRefused(f"comparison alarms {missing} do not exist in the stage account")
        firing = sorted(a["AlarmName"] for a in found if a.get("StateValue") == "ALARM")
        if firing:
            raise PromotionRefused(
                f"the shadow of {endpoint_name} does worse than production: {firing} in ALARM"
            )
        if waited >= minutes * 60:
            return _log(action="bake-passed", endpoint=endpoint_name, minutes=minutes, alarms=alarms)
        sleep(interval_s)
        waited += interval_s


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="promotion", description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    g = sub.add_parser("gate")
    g.add_argument("--approved", required=True)
    w = sub.add_parser("write-back")
    w.add_argument("--approved", required=True)
    w.add_argument("--stage", required=True)
    w.add_argument("--result", required=True, choices=["passed", "failed", "shadow-passed", "shadow-failed"])
    w.add_argument("--detail", default="")
    b = sub.add_parser("bake")
    b.add_argument("--endpoint-name", required=True)
    b.add_argument("--shadow-variant", required=True)
    b.add_argument("--alarm", action="append", required=True)
    b.add_argument("--minutes", type=int, required=True)
    r = sub.add_parser("replicate")
    r.add_argument("--plan", required=True)
    r.add_argument("--target-region", required=True)
    r.add_argument("--kms-key-arn")
    a = sub.add_parser("assume")
    a.add_argument("--role-arn", required=True)
    args = parser.parse_args(argv)
    try:
        if args.command == "gate":
            gate(args.approved)
        elif args.command == "write-back":
            write_back(args.approved, stage=args.stage, result=args.result, detail=args.detail)
        elif args.command == "replicate":
            with open(args.plan, encoding="utf-8") as f:
                plan = json.load(f)
            target = boto3.client("s3", region_name=args.target_region)
            replicate(plan, kms_key_arn=args.kms_key_arn, clients={"s3-target": target})
        elif args.command == "bake":
            bake(
                endpoint_name=args.endpoint_name,
                shadow_variant=args.shadow_variant,
                alarms=args.alarm,
                minutes=args.minutes,
            )
        else:
            print(assume(args.role_arn))
    except PromotionRefused as exc:
        print(f"promotion refused: {exc}", file=sys.stderr)
        return 3
    return 0


if __name__ == "__main__":
    sys.exit(main())
