"""TritonPromotionPipeline through the example's promotion app: one synth (cdk-nag on), then the template.

The app is synthesized once with an approved manifest and a live one (so the prod shadow stage has a
shadow); what the trigger does at run time is tested in tests/unit/handlers/test_promotion.py.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import aws_cdk as cdk
import pytest
from aws_cdk import aws_s3 as s3
from aws_cdk import pipelines

from cdk_triton.errors import TritonValidationError
from cdk_triton.pipeline import TritonPromotionPipeline
from cdk_triton.pipeline.promotion_access import ShadowBake
from cdk_triton.pipeline.promotion_tools import copy_pairs, relocate, write_checks, write_regional
from tests.unit.pipeline.support import ROOT, manifest_with_samples

PIPELINE_ACCOUNT, STAGING, PROD = "123456789012", "222222222222", "333333333333"
STACK = "CdkTritonPromotion"


REGIONAL = "s3://cdk-triton-example-artifacts-333333333333-eu-west-1/cdk-triton/"
LOCATION = {"bucket": "example-artifacts-123456789012", "prefix": "cdk-triton/"}


def _uploaded(path: Path) -> None:
    """Record the samples' S3 URIs in the manifest, as `cdk-triton build --upload` does."""
    from cdk_triton.config.layout import sample_s3_uris
    from cdk_triton.config.manifest import Sample, read_manifest

    manifest = read_manifest(path)
    data = json.loads(path.read_text())

    def visit(o: Any) -> None:
        if isinstance(o, dict):
            sample = o.get("sample")
            if isinstance(sample, dict) and "request" in sample:
                uris = sample_s3_uris(
                    manifest, Sample(request=sample["request"], response=sample.get("response"))
                )
                assert uris is not None
                sample["request_s3_uri"], sample["response_s3_uri"] = uris
            for v in o.values():
                visit(v)

    visit(data)
    path.write_text(json.dumps(data))


@pytest.fixture(scope="module")
def synthed(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, Any], Path]:
    """Staging in the pipeline's region; ProdShadow and Prod in eu-west-1 from region-specific manifests,
    written the way the synth step writes them (promotion_tools regional)."""
    tmp = tmp_path_factory.mktemp("promotion_app")
    live_dir, approved_dir = tmp / "live", tmp / "approved"
    live_dir.mkdir()
    approved_dir.mkdir()

    def located(data: dict[str, Any]) -> None:
        data["artifact_location"] = dict(LOCATION)

    def newer(data: dict[str, Any]) -> None:  # the candidate: another repository of the classifier
        located(data)
        entry = data["endpoints"]["classifier"]
        entry["s3_uri"] = entry["s3_uri"].replace("dc9c5edb8b2d479e", "0123456789abcdef")
        entry["sha256"] = "0123456789abcdef" + entry["sha256"][16:]

    live = manifest_with_samples(live_dir, located)
    approved = manifest_with_samples(approved_dir, newer)
    for path in (live, approved):
        _uploaded(path)
    (approved_dir / "live-manifest.json").write_text(live.read_text())
    regional = write_regional(
        approved, {"ProdShadow": {"location": REGIONAL}, "Prod": {"location": REGIONAL}}, tmp / "regional"
    )
    assert len(regional) == 4  # the approved and the live manifest, for each prod stage
    import promotion_app

    flags = json.loads((ROOT / "cdk.json").read_text())["context"]
    context = {
        **flags,
        "manifest": str(approved),
        "live_manifest": str(live),
        "pipeline_account": PIPELINE_ACCOUNT,
        "staging_account": STAGING,
        "prod_account": PROD,
        "prod_region": "eu-west-1",
        "artifact_location": "s3://example-artifacts-123456789012/cdk-triton/",
        "regional_manifests": str(tmp / "regional"),
        "bake_minutes": 45,
    }
    out = tmp / "cdk.out"
    app = cdk.App(outdir=str(out), context=context, builtin_cloud_formation_validation=False)
    promotion_app.build_promotion_app(app=app)  # nag on: an unacknowledged finding fails here
    app.synth()
    return out, json.loads((out / f"{STACK}.template.json").read_text()), approved


def _of(tpl: dict[str, Any], rtype: str) -> dict[str, dict[str, Any]]:
    return {k: r for k, r in tpl["Resources"].items() if r["Type"] == rtype}


def _stage_template(out: Path, stage: str, stack: str) -> dict[str, Any]:
    (path,) = (out / f"assembly-{STACK}-{stage}").glob(f"{STACK}{stage}{stack}*.template.json")
    return json.loads(path.read_text())


def _buildspec(tpl: dict[str, Any], fragment: str) -> str:
    (props,) = [r["Properties"] for k, r in _of(tpl, "AWS::CodeBuild::Project").items() if fragment in k]
    spec = props["Source"]["BuildSpec"]
    return spec if isinstance(spec, str) else json.dumps(spec)


def _policy_statements(tpl: dict[str, Any], fragment: str) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for k, r in {**_of(tpl, "AWS::IAM::Policy"), **_of(tpl, "AWS::IAM::ManagedPolicy")}.items():
        if fragment in k:
            out += r["Properties"]["PolicyDocument"]["Statement"]
    return out


def _actions(st: dict[str, Any]) -> list[str]:
    a = st["Action"]
    return a if isinstance(a, list) else [a]


def test_only_an_approval_of_the_promoted_groups_triggers_the_function(synthed: Any) -> None:
    _, tpl, _ = synthed
    (rule,) = _of(tpl, "AWS::Events::Rule").values()
    assert rule["Properties"]["EventPattern"] == {
        "source": ["aws.sagemaker"],
        "detail-type": ["SageMaker Model Package State Change"],
        "detail": {"ModelApprovalStatus": ["Approved"], "ModelPackageGroupName": ["classifier", "multi"]},
    }
    (fn,) = [
        r for r in _of(tpl, "AWS::Lambda::Function").values() if "promotion" in json.dumps(r["Properties"])
    ]
    assert fn["Properties"]["ReservedConcurrentExecutions"] == 1
    env = fn["Properties"]["Environment"]["Variables"]
    assert env["SOURCE_KEY"] == "approved/approved.zip" and env["PIPELINE_NAME"] == "cdk-triton-promotion"


def test_pipeline_starts_from_the_approved_manifest_and_never_by_itself(synthed: Any) -> None:
    _, tpl, _ = synthed
    (pipe,) = _of(tpl, "AWS::CodePipeline::Pipeline").values()
    stages = pipe["Properties"]["Stages"]
    assert [s["Name"] for s in stages] == ["Source", "Build", "Assets", "Staging", "ProdShadow", "Prod"]
    sources = stages[0]["Actions"]
    assert {a["Configuration"]["S3ObjectKey"] for a in sources} == {
        "approved/approved.zip",
        "cdk-triton/source.zip",
    }
    assert all(
        a["Configuration"]["PollForSourceChanges"] is False for a in sources
    )  # only the trigger starts it
    order = {
        s["Name"]: [a["Name"] for a in sorted(s["Actions"], key=lambda a: a["RunOrder"])] for s in stages[3:]
    }
    assert order["Staging"][0] == "TrustCheck" and order["Staging"][-1] == "Verify"
    assert order["ProdShadow"][-1] == "Bake" and order["Prod"][-1] == "Verify"
    assert "Approve" not in json.dumps(order)  # the approval happened in the registry


def test_synth_gates_on_the_registry_then_synthesizes_from_files(synthed: Any) -> None:
    _, tpl, _ = synthed
    spec = _buildspec(tpl, "Synth")
    gate = spec.index("index.py gate --approved approved")
    synth = spec.index("npx cdk synth")
    assert gate < spec.index("promotion_tools regional") < synth < spec.index("promotion_tools checks")
    assert "-c manifest=$PWD/approved/manifest.json" in spec and "live_manifest" in spec
    mine = [st for st in _policy_statements(tpl, "SynthCdkBuildProjectRole") if "sagemaker" in json.dumps(st)]
    assert [_actions(st) for st in mine] == [
        ["sagemaker:DescribeModelPackage"]
    ]  # the gate's read, nothing more


def test_each_stage_checks_trust_then_verifies_from_its_own_account_and_writes_back(synthed: Any) -> None:
    _, tpl, _ = synthed
    assert f"role/cdk-hnb659fds-deploy-role-{PROD}-eu-west-1" in _buildspec(tpl, "ProdTrustCheck")
    trust = _buildspec(tpl, "StagingTrustCheck")
    assert f"role/cdk-hnb659fds-deploy-role-{STAGING}-us-east-1" in trust
    verify = _buildspec(tpl, "StagingVerify")
    assert f":iam::{STAGING}:role/cdk-triton-promotion-Staging-verify" in verify
    assert "verify.py --spec Staging-0.json" in verify and "verify.py --spec Staging-1.json" in verify
    assert "--stage Staging --result passed" in verify and "--stage Staging --result failed; exit 1" in verify
    bake = _buildspec(tpl, "ProdShadowBake")
    assert "promotion.py bake --endpoint-name prod-classifier --shadow-variant Shadow" in bake
    assert "--minutes 45" in bake and "--alarm prod-classifier-shadow-latency" in bake
    assert "live/manifest.json" in _buildspec(tpl, "ProdVerify")  # the promote deploy records what is live


def test_the_shadow_deploy_shadows_the_candidate_and_the_promote_deploy_serves_it(synthed: Any) -> None:
    out, _, _ = synthed
    shadow = _stage_template(out, "ProdShadow", "Endpoints")
    prod = _stage_template(out, "Prod", "Endpoints")
    (cfg,) = [
        r
        for r in shadow["Resources"].values()
        if r["Type"] == "AWS::SageMaker::EndpointConfig" and "Shadow" in json.dumps(r)
    ]
    assert cfg["Properties"]["ShadowProductionVariants"][0]["VariantName"] == "Shadow"
    models = {k: r for k, r in shadow["Resources"].items() if r["Type"] == "AWS::SageMaker::Model"}
    data = json.dumps(models)
    assert (
        "classifier/0123456789abcdef/" in data and "classifier/dc9c5edb8b2d479e/" in data
    )  # candidate + live
    prod_cfgs = [r for r in prod["Resources"].values() if r["Type"] == "AWS::SageMaker::EndpointConfig"]
    assert all("ShadowProductionVariants" not in r["Properties"] for r in prod_cfgs)
    served = json.dumps([r for r in prod["Resources"].values() if r["Type"] == "AWS::SageMaker::Model"])
    assert "classifier/0123456789abcdef/" in served and "classifier/dc9c5edb8b2d479e/" not in served


def test_every_role_the_library_creates_has_no_wildcard_action_and_a_scoped_resource(synthed: Any) -> None:
    out, tpl, _ = synthed
    mine = {
        "TriggerPolicy",
        "StagingStepRole",
        "ProdShadowStepRole",
        "ProdStepRole",
        "TrustCheck",
        "SynthCdk",
    }
    docs = [
        (k, r)
        for k, r in {**_of(tpl, "AWS::IAM::Policy"), **_of(tpl, "AWS::IAM::ManagedPolicy")}.items()
        if any(m in k for m in mine)
    ]
    for stage in ("Staging", "ProdShadow", "Prod"):
        access = _stage_template(out, stage, "PromotionAccess")
        docs += list(_of(access, "AWS::IAM::ManagedPolicy").items())
        (role,) = _of(access, "AWS::IAM::Role").values()
        (trust,) = role["Properties"]["AssumeRolePolicyDocument"]["Statement"]
        principal = json.dumps(trust["Principal"])
        assert f":iam::{PIPELINE_ACCOUNT}:role/cdk-triton-promotion-{stage}-step" in principal
    assert len(docs) >= 8
    for name, doc in docs:
        for st in doc["Properties"]["PolicyDocument"]["Statement"]:
            if "PipelineArtifactsBucket" in json.dumps(st["Resource"]):
                continue  # CDK Pipelines' own grant on its artifact bucket and key (documented, not claimed)
            assert all("*" not in a for a in _actions(st)), (name, st)
            resources = st["Resource"] if isinstance(st["Resource"], list) else [st["Resource"]]
            assert "*" not in resources, (name, st)


def test_stage_account_verify_role_reads_only_its_endpoints_and_samples(synthed: Any) -> None:
    out, _, _ = synthed
    access = _stage_template(out, "Staging", "PromotionAccess")
    (policy,) = _of(access, "AWS::IAM::ManagedPolicy").values()
    text = json.dumps(policy)
    assert f"sagemaker:us-east-1:{STAGING}:endpoint/staging-classifier" in text
    assert "endpoint/prod-" not in text and "samples/*" in text


def test_nag_findings_are_all_acknowledged_with_reasons(synthed: Any) -> None:
    out, _, _ = synthed
    found: list[dict[str, Any]] = []

    def walk(o: Any) -> None:
        if isinstance(o, dict):
            if "ruleName" in o:
                found.append(o)
                return
            for v in o.values():
                walk(v)
        elif isinstance(o, list):
            for v in o:
                walk(v)

    walk(json.loads((out / "validation-report.json").read_text()))
    mine = [f for f in found if f"{STACK}/Promotion/" in json.dumps(f["violatingConstructs"])]
    assert mine, "the promotion pipeline's findings are reported (as acknowledged)"
    assert all(f.get("acknowledgedId") and f.get("reason") for f in found), [
        f["ruleName"] for f in found if not f.get("acknowledgedId")
    ]


def test_pipeline_and_stage_templates_pass_cfn_lint(synthed: Any) -> None:
    out, _, _ = synthed
    stages = sorted(str(p) for p in out.glob("assembly-*/*.template.json"))
    stages += [str(p) for p in out.glob("cross-region-stack-*.template.json")]  # aws-cdk-lib's, for eu-west-1
    assert len(stages) == 7
    cmd = [str(Path(sys.executable).with_name("cfn-lint")), "--regions", "us-east-1", "eu-west-1"]
    cmd += ["--format", "parseable"]
    # E3703 / W3005 come from what CDK Pipelines writes itself (see test_pipeline.py)
    result = subprocess.run(
        [*cmd, "--ignore-checks", "E3703", "W3005", "--", str(out / f"{STACK}.template.json"), *stages],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stdout + result.stderr


def test_bucket_policy_output_names_the_stage_accounts(synthed: Any) -> None:
    _, tpl, _ = synthed
    policy = json.loads(tpl["Outputs"]["ArtifactBucketPolicy"]["Value"])
    principals = policy["Statement"][0]["Principal"]["AWS"]
    assert principals == [f"arn:aws:iam::{STAGING}:root", f"arn:aws:iam::{PROD}:root"]
    assert policy["Statement"][0]["Action"] == "s3:GetObject"


def test_specs_of_the_approved_manifest_for_each_stage(synthed: Any, tmp_path: Path) -> None:
    _, _, approved = synthed
    written = write_checks(
        approved,
        {"Staging": [["classifier", "staging-classifier"]]},
        tmp_path / "out",
        root=ROOT,
        approved=None,
    )
    spec = json.loads(written[0].read_text())
    assert spec["EndpointName"] == "staging-classifier" and spec["Checks"][0]["Request"].startswith("s3://")
    assert (tmp_path / "out" / "verify.py").is_file() and (tmp_path / "out" / "promotion.py").is_file()


#: what CloudFormation calls to create each resource type the library's stacks hold
CREATE_ACTION = {
    "AWS::SageMaker::Model": "sagemaker:CreateModel",
    "AWS::SageMaker::EndpointConfig": "sagemaker:CreateEndpointConfig",
    "AWS::SageMaker::Endpoint": "sagemaker:CreateEndpoint",
    "AWS::SageMaker::InferenceComponent": "sagemaker:CreateInferenceComponent",
    "AWS::IAM::Role": "iam:CreateRole",
    "AWS::IAM::ManagedPolicy": "iam:CreatePolicy",
    "AWS::IAM::Policy": "iam:PutRolePolicy",
    "AWS::CloudWatch::Alarm": "cloudwatch:PutMetricAlarm",
    "AWS::CloudWatch::Dashboard": "cloudwatch:PutDashboard",
    "AWS::Logs::LogGroup": "logs:CreateLogGroup",
    "AWS::Lambda::Function": "lambda:CreateFunction",
    "AWS::SSM::Parameter": "ssm:PutParameter",
    "AWS::KMS::Key": "kms:CreateKey",
    "AWS::SNS::Topic": "sns:CreateTopic",
    "AWS::ApplicationAutoScaling::ScalableTarget": "application-autoscaling:RegisterScalableTarget",
    "AWS::ApplicationAutoScaling::ScalingPolicy": "application-autoscaling:PutScalingPolicy",
    "Custom::TritonVerification": "lambda:InvokeFunction",
}


def test_the_shipped_execution_policy_has_exact_actions_for_every_stage_resource(synthed: Any) -> None:
    from cdk_triton.pipeline.promotion import DEPLOY_POLICY

    out, _, _ = synthed
    policy = json.loads(DEPLOY_POLICY.read_text())
    granted = {a for st in policy["Statement"] for a in _actions(st)}
    assert all("*" not in a for a in granted)
    types = {
        r["Type"]
        for p in out.glob("assembly-*/*.template.json")
        for r in json.loads(p.read_text())["Resources"].values()
    }
    assert types - set(CREATE_ACTION) == set(), "a new resource type: add it to the policy and this table"
    assert {CREATE_ACTION[t] for t in types} <= granted
    passes = [st for st in policy["Statement"] if "iam:PassRole" in _actions(st)]
    assert passes and all("iam:PassedToService" in json.dumps(st["Condition"]) for st in passes)


def test_a_stage_in_another_region_deploys_from_its_own_bucket(synthed: Any) -> None:
    out, tpl, approved = synthed
    prod = json.dumps(_stage_template(out, "Prod", "Endpoints"))
    regional_bucket = "cdk-triton-example-artifacts-333333333333-eu-west-1"
    assert f"s3://{regional_bucket}/cdk-triton/sme/classifier/0123456789abcdef/" in prod
    assert "s3://example-artifacts-123456789012/" not in prod
    shadow = json.dumps(_stage_template(out, "ProdShadow", "Endpoints"))
    assert "example-artifacts-123456789012" not in shadow  # the live build too, from the regional copy
    replicate = _buildspec(tpl, "ProdReplicate")
    assert "promotion.py replicate --plan replicate-Prod.json --target-region eu-west-1" in replicate
    writes = [st for st in _policy_statements(tpl, "ProdReplicateRole") if "s3:PutObject" in _actions(st)]
    assert [st["Resource"] for st in writes] == [
        {"Fn::Join": ["", ["arn:", {"Ref": "AWS::Partition"}, f":s3:::{regional_bucket}/cdk-triton/*"]]}
    ]
    policy = json.loads(tpl["Outputs"]["ProdBucketPolicy"]["Value"])
    assert policy["Statement"][0]["Principal"] == {
        "AWS": f"arn:aws:iam::{PIPELINE_ACCOUNT}:role/cdk-triton-promotion-Prod-replicate"
    }
    access = json.dumps(_stage_template(out, "Prod", "PromotionAccess"))
    assert f"{regional_bucket}/cdk-triton/samples/*" in access


def test_relocation_moves_every_location_and_the_copy_plan_lists_them(synthed: Any) -> None:
    _, _, approved = synthed
    data = json.loads(approved.read_text())
    moved = relocate(data, REGIONAL, kms_key_arn="arn:aws:kms:eu-west-1:333333333333:key/k")
    assert moved["artifact_location"]["bucket"] == "cdk-triton-example-artifacts-333333333333-eu-west-1"
    assert "example-artifacts-123456789012/cdk-triton/" not in json.dumps({**moved, "artifact_location": {}})
    plan = copy_pairs(data, REGIONAL)
    assert plan and all(src.startswith("s3://example-artifacts-123456789012/cdk-triton/") for src, _ in plan)
    assert all(
        dst.startswith(REGIONAL)
        and dst[len(REGIONAL) :] == src[len("s3://example-artifacts-123456789012/cdk-triton/") :]
        for src, dst in plan
    )
    assert any(src.endswith("/") for src, _ in plan) and any("samples/" in src for src, _ in plan)
    # moved back, it is the approved build again: nothing else changed
    assert relocate(moved, "s3://example-artifacts-123456789012/cdk-triton/") == {
        **data,
        "artifact_location": LOCATION,
    }


# ------------------------------------------------------------------------------------------ errors


def _promotion(env: cdk.Environment | None = None) -> tuple[cdk.App, TritonPromotionPipeline]:
    app = cdk.App(builtin_cloud_formation_validation=False)
    stack = cdk.Stack(app, "P", env=env or cdk.Environment(account=PIPELINE_ACCOUNT, region="us-east-1"))
    source = pipelines.CodePipelineSource.s3(s3.Bucket.from_bucket_name(stack, "S", "src"), "src.zip")
    bucket = s3.Bucket.from_bucket_name(stack, "B", "artifacts")
    return app, TritonPromotionPipeline(
        stack, "Promotion", source=source, model_package_groups=["classifier"], artifact_bucket=bucket
    )


@pytest.mark.parametrize(
    ("env", "code"),
    [
        ({}, "PromotionStageEnvMissing"),
        ({"account": STAGING, "region": "eu-west-1"}, "PromotionStageInAnotherRegion"),
    ],
)
def test_fails_a_stage_whose_roles_cannot_be_named_or_that_cannot_read_the_build(
    env: dict[str, str], code: str
) -> None:
    app, promotion = _promotion()
    stage = cdk.Stage(app, "Staging", env=cdk.Environment(**env) if env else None)
    with pytest.raises(TritonValidationError, match=code) as err:
        promotion.add_stage(stage)
    assert "Staging" in str(err.value)


def test_fails_a_regional_bucket_that_is_no_s3_uri() -> None:
    from cdk_triton.pipeline import RegionalArtifacts

    app, promotion = _promotion()
    stage = cdk.Stage(app, "Prod", env=cdk.Environment(account=PROD, region="eu-west-1"))
    with pytest.raises(TritonValidationError, match="InvalidS3Uri") as err:
        promotion.add_stage(stage, regional_artifacts=RegionalArtifacts(location="my-bucket/prefix"))
    assert "Prod" in str(err.value)


def test_fails_without_a_model_package_group() -> None:
    app = cdk.App()
    stack = cdk.Stack(app, "P")
    source = pipelines.CodePipelineSource.s3(s3.Bucket.from_bucket_name(stack, "S", "src"), "src.zip")
    with pytest.raises(TritonValidationError, match="InvalidModelPackageGroupName"):
        TritonPromotionPipeline(
            stack,
            "X",
            source=source,
            model_package_groups=["bad_name"],
            artifact_bucket=s3.Bucket.from_bucket_name(stack, "B", "bucket"),
        )


# ------------------------------------------------ every promotion input checked (issue 30)


@pytest.mark.parametrize("account", ["12345", "6262626262620", "12345678901a"])
def test_fails_a_stage_account_that_is_not_12_digits(account: str) -> None:
    app, promotion = _promotion()
    stage = cdk.Stage(app, "Staging", env=cdk.Environment(account=account, region="us-east-1"))
    with pytest.raises(TritonValidationError, match="InvalidAccountId") as err:
        promotion.add_stage(stage)
    assert account in str(err.value) and "12-digit" in str(err.value) and "Staging" in str(err.value)


def test_fails_bucket_and_key_policies_for_accounts_that_are_not_12_digits() -> None:
    _, promotion = _promotion()
    for policy in (promotion.artifact_bucket_policy, promotion.artifact_key_policy):
        with pytest.raises(TritonValidationError, match="InvalidAccountId"):
            policy([STAGING, "12345"])
        assert policy([STAGING, PROD])  # 12-digit ids pass


def test_a_shadow_bake_after_the_prod_stage_is_refused_and_staging_stays_optional() -> None:
    bake = ShadowBake(endpoint_name="classifier", alarm_names=["a"])
    app, promotion = _promotion()
    prod = cdk.Stage(app, "Prod", env=cdk.Environment(account=PROD, region="us-east-1"))
    promotion.add_stage(prod, record_live=True)
    shadow = cdk.Stage(app, "ProdShadow", env=cdk.Environment(account=PROD, region="us-east-1"))
    with pytest.raises(TritonValidationError, match="PromotionStageOrder") as err:
        promotion.add_stage(shadow, bake=bake)
    assert "'ProdShadow' before 'Prod'" in str(err.value)
    # the order the rule asks for, without a staging stage: fine
    app, promotion = _promotion()
    promotion.add_stage(
        cdk.Stage(app, "ProdShadow", env=cdk.Environment(account=PROD, region="us-east-1")), bake=bake
    )
    promotion.add_stage(
        cdk.Stage(app, "Prod", env=cdk.Environment(account=PROD, region="us-east-1")), record_live=True
    )
    # a verify-only stage after prod is no bake: allowed
    promotion.add_stage(cdk.Stage(app, "After", env=cdk.Environment(account=STAGING, region="us-east-1")))
