"""TritonPipeline(registry=...): the synth step registers each build, in both build modes, least privilege.

The example's pipeline (registry on, cdk-nag and cfn-lint) is checked in test_pipeline.py; here a
small pipeline with an encrypted artifact location, a fan-out pipeline, the bad props, and the command
line against the real ``cdk-triton register`` parser.
"""

from __future__ import annotations

import json
import shlex
from pathlib import Path
from typing import Any

import aws_cdk as cdk
import pytest
import yaml
from aws_cdk import aws_kms as kms
from aws_cdk import aws_s3 as s3
from aws_cdk import pipelines

from cdk_triton.config.registry import register_command
from cdk_triton.errors import TritonValidationError
from cdk_triton.pipeline import FanOutOptions, RegistryOptions, TritonPipeline
from cdk_triton.pipeline.pipeline import GPU_MERGE_NOTE
from tests.unit.pipeline.support import ARTIFACT_BUCKET, ROOT

KEY = "arn:aws:kms:us-east-1:123456789012:key/11111111-2222-3333-4444-555555555555"
REGISTRY = RegistryOptions(groups={"classifier": "Classifier-SME", "multi": "multi"})
REGISTER_ACTIONS = [
    "sagemaker:CreateModelPackage",
    "sagemaker:DescribeModelPackage",
    "sagemaker:DescribeModelPackageGroup",
    "sagemaker:ListModelPackages",
]


def _pipeline(
    tmp: Path,
    *,
    registry: RegistryOptions | None = REGISTRY,
    fan_out: FanOutOptions | None = None,
    nag: bool = False,
) -> tuple[cdk.App, cdk.Stack, TritonPipeline]:
    decl = yaml.safe_load((ROOT / "build" / "models.yaml").read_text())
    (tmp / "models.yaml").write_text(yaml.safe_dump(decl))
    flags = json.loads((ROOT / "cdk.json").read_text())["context"] if nag else {}
    app = cdk.App(outdir=str(tmp / "cdk.out"), context=flags, builtin_cloud_formation_validation=False)
    stack = cdk.Stack(app, "P", env=cdk.Environment(account="123456789012", region="us-east-1"))
    pipe = TritonPipeline(
        stack,
        "Triton",
        source=pipelines.CodePipelineSource.s3(s3.Bucket.from_bucket_name(stack, "S", "src"), "src.zip"),
        declaration="models.yaml",
        root=tmp,
        artifact_bucket=s3.Bucket.from_bucket_name(stack, "B", ARTIFACT_BUCKET),
        artifact_key=kms.Key.from_key_arn(stack, "K", KEY),
        fan_out=fan_out,
        registry=registry,
    )
    stage = cdk.Stage(app, "Staging")
    cdk.CfnWaitConditionHandle(cdk.Stack(stage, "S"), "R")
    pipe.add_triton_stage(stage)
    pipe.build()
    if nag:
        from cdk_nag import AwsSolutionsChecks

        cdk.Validations.of(app).add_plugins(AwsSolutionsChecks(app))
    return app, stack, pipe


def _template(app: cdk.App, tmp: Path) -> dict[str, Any]:
    app.synth()
    return json.loads((tmp / "cdk.out" / "P.template.json").read_text())


@pytest.fixture(scope="module")
def plain(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    tmp = tmp_path_factory.mktemp("registry")
    app, _, _ = _pipeline(tmp)
    return _template(app, tmp)


def _of(tpl: dict[str, Any], rtype: str) -> dict[str, dict[str, Any]]:
    return {k: r for k, r in tpl["Resources"].items() if r["Type"] == rtype}


def _commands(tpl: dict[str, Any], fragment: str) -> list[str]:
    (project,) = [r["Properties"] for k, r in _of(tpl, "AWS::CodeBuild::Project").items() if fragment in k]
    spec = json.loads(project["Source"]["BuildSpec"])
    return spec["phases"]["build"]["commands"]


def _synth_statements(tpl: dict[str, Any]) -> list[dict[str, Any]]:
    (policy,) = [
        r for k, r in _of(tpl, "AWS::IAM::Policy").items() if "SynthCdkBuildProjectRoleDefaultPolicy" in k
    ]
    return policy["Properties"]["PolicyDocument"]["Statement"]


def _arn(rest: str) -> dict[str, Any]:
    return {"Fn::Join": ["", ["arn:", {"Ref": "AWS::Partition"}, rest]]}


def _expected_lines(evidence: str | None = None) -> list[str]:
    return [
        ".venv/bin/"
        + register_command(endpoint=ep, group=g, manifest="out/manifest.json", evidence_location=evidence)
        for ep, g in (("classifier", "Classifier-SME"), ("multi", "multi"))
    ]


def test_synth_step_registers_each_endpoint_after_the_upload_and_the_synth(plain: dict[str, Any]) -> None:
    note, *commands = _commands(plain, "Synth")
    assert note == f"echo {GPU_MERGE_NOTE!r}"  # the GPU build's manifest is merged: the log says so first
    assert commands[0].startswith(".venv/bin/cdk-triton build --config models.yaml")
    assert "--upload" in commands[0]
    assert "npx cdk synth" in commands[1]
    assert commands[2:] == _expected_lines()  # exactly these, after the build and the synth
    assert commands[2:] == [
        ".venv/bin/cdk-triton register --manifest out/manifest.json --endpoint classifier --group Classifier-SME",
        ".venv/bin/cdk-triton register --manifest out/manifest.json --endpoint multi --group multi",
    ]
    others = [
        c for k in _of(plain, "AWS::CodeBuild::Project") if "Synth" not in k for c in _commands(plain, k)
    ]
    assert not [c for c in others if "register" in c]


def test_synth_role_may_register_in_exactly_the_named_groups(plain: dict[str, Any]) -> None:
    statements = _synth_statements(plain)
    assert not [a for st in statements for a in _list(st["Action"]) if a.endswith("*") and "sagemaker" in a]
    (sm,) = [st for st in statements if any(str(a).startswith("sagemaker:") for a in _list(st["Action"]))]
    assert sm["Action"] == REGISTER_ACTIONS
    assert sm["Resource"] == [
        _arn(":sagemaker:us-east-1:123456789012:model-package-group/Classifier-SME"),  # the name's case
        _arn(":sagemaker:us-east-1:123456789012:model-package/Classifier-SME/*"),
        _arn(":sagemaker:us-east-1:123456789012:model-package-group/multi"),
        _arn(":sagemaker:us-east-1:123456789012:model-package/multi/*"),
    ]
    for ep in ("classifier", "multi"):
        evidence = _arn(f":s3:::{ARTIFACT_BUCKET}/cdk-triton/registry/{ep}/*")
        (st,) = [st for st in statements if evidence in _list(st["Resource"])]
        assert st["Action"] == ["s3:GetObject", "s3:PutObject"]  # merged with the build's own prefix grant
    kms_actions = {a for st in statements if st.get("Resource") == KEY for a in _list(st["Action"])}
    assert {"kms:Decrypt", "kms:GenerateDataKey"} <= kms_actions
    assert not [a for st in statements for a in _list(st["Action"]) if a == "*" or a.endswith(":*")]


def test_the_role_statements_alone(tmp_path: Path) -> None:
    """The registration's own statements before CDK merges them with the build's."""
    stack = cdk.Stack(cdk.App(), "X", env=cdk.Environment(account="123456789012", region="us-east-1"))
    bucket = s3.Bucket.from_bucket_name(stack, "B", ARTIFACT_BUCKET)
    opts = RegistryOptions(groups={"classifier": "c"}, evidence_location="s3://other-bucket/ev/")
    docs = [
        stack.resolve(s.to_statement_json())
        for s in opts.statements(stack, bucket=bucket, prefix="p/", key=None)
    ]
    assert docs == [
        {
            "Action": REGISTER_ACTIONS,
            "Effect": "Allow",
            "Resource": [
                _arn(":sagemaker:us-east-1:123456789012:model-package-group/c"),
                _arn(":sagemaker:us-east-1:123456789012:model-package/c/*"),
            ],
        },
        {
            "Action": ["s3:GetObject", "s3:PutObject"],
            "Effect": "Allow",
            "Resource": _arn(":s3:::other-bucket/ev/registry/classifier/*"),
        },
    ]
    assert opts.commands("out/manifest.json") == [
        ".venv/bin/cdk-triton register --manifest out/manifest.json --endpoint classifier --group c "
        "--evidence-location s3://other-bucket/ev/"
    ]


def test_fan_out_registers_in_the_synth_step_after_the_merged_build_is_fetched(tmp_path: Path) -> None:
    evidence = "s3://evidence-bucket/ev"
    registry = RegistryOptions(groups=REGISTRY.groups, evidence_location=evidence)
    fan_out = FanOutOptions(min_models=2, models_per_shard=3)
    app, _, pipe = _pipeline(tmp_path, fan_out=fan_out, registry=registry, nag=True)
    tpl = _template(app, tmp_path)  # cdk-nag on: an unacknowledged finding (the evidence bucket's) fails here
    commands = _commands(tpl, "Synth")
    assert commands[0] == pipe.fan_out_commands.synth_fetch()  # the Merge step's manifest, fetched
    assert "npx cdk synth" in commands[1]
    assert commands[2:] == _expected_lines(evidence)
    statements = _synth_statements(tpl)
    for ep in ("classifier", "multi"):
        (st,) = [
            st
            for st in statements
            if _arn(f":s3:::evidence-bucket/ev/registry/{ep}/*") in _list(st["Resource"])
        ]
        assert sorted(_list(st["Action"])) == ["s3:GetObject", "s3:PutObject"]
    assert pipe.fan_out_commands.out_dir + "/manifest.json" == "out/manifest.json"
    merge = pipe.fan_out.merge_project if pipe.fan_out else None
    assert merge is not None
    merge_spec = json.dumps(tpl["Resources"][cdk.Stack.of(merge).get_logical_id(merge.node.default_child)])
    assert "cdk-triton register" not in merge_spec


@pytest.mark.parametrize("approval", [None, "Approved"])
def test_the_buildspec_line_parses_with_the_real_register_parser(approval: str | None) -> None:
    from cdk_triton.cli import build_parser
    from cdk_triton.registry import commands

    opts = RegistryOptions(
        groups={"classifier": "classifier"},
        evidence_location="s3://bucket/evidence/",
        approval_status=approval or "PendingManualApproval",
    )
    (line,) = opts.commands("build/out/manifest.json")
    words = shlex.split(line)
    assert words[0] == ".venv/bin/cdk-triton"
    args = build_parser().parse_args(words[1:])
    assert args.func is commands.run
    assert (args.manifest, args.endpoint, args.group) == (
        "build/out/manifest.json",
        "classifier",
        "classifier",
    )
    assert args.evidence_location == "s3://bucket/evidence/"
    assert args.approval_status == (approval or "PendingManualApproval")


def test_bad_registry_props_fail_with_codes_before_anything_is_defined(tmp_path: Path) -> None:
    bad = RegistryOptions(
        groups={"classifier": "bad_name", "nope": "nope"},
        approval_status="Maybe",
        evidence_location="bucket/prefix",
    )
    with pytest.raises(TritonValidationError) as info:
        _pipeline(tmp_path, registry=bad)
    text = str(info.value)
    for code in (
        "RegistryForUnknownEndpoint",
        "InvalidModelPackageGroupName",
        "InvalidRegistryOption",
        "InvalidS3Uri",
    ):
        assert code in text, code
    assert "registry.groups['classifier']" in text and "'nope'" in text and "P/Triton" in text
    with pytest.raises(TritonValidationError, match="InvalidRegistryOption"):
        _pipeline(tmp_path, registry=RegistryOptions(groups={}))


def test_the_example_registers_the_groups_the_promotion_promotes() -> None:
    import pipeline_app
    import promotion_app

    assert tuple(pipeline_app.REGISTERED) == tuple(promotion_app.GROUPS)


def _list(v: Any) -> list[Any]:
    return v if isinstance(v, list) else [v]
