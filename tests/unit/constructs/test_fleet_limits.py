"""Fleet-sized stacks: CloudFormation's limits at each edge, the name map's SSM sizes, the whole-stack
validation at synth, and the deploy verification's bounded sample with its spec in S3."""

from __future__ import annotations

import dataclasses
import json
from typing import Any

import aws_cdk as cdk
import pytest

from cdk_triton.config import tables
from cdk_triton.config.manifest import Manifest, Sample, write_manifest
from cdk_triton.constructs import ModelArtifacts, TritonEndpoint, VerificationSample
from cdk_triton.constructs.checks.limits import (
    Contributor,
    TemplateFigures,
    check_name_map_parts,
    check_template_limits,
    limit,
)
from cdk_triton.constructs.template_limits import MARKER_ID, stack_limits
from cdk_triton.constructs.verification import RESOURCE_TYPE
from cdk_triton.constructs.verification_sample import select, spec_document
from cdk_triton.errors import TritonValidationError
from tests.unit.constructs.support import ENV, big_mme_manifest, new_stack, template

SAMPLE = Sample(request="samples/classifier.request.json", response="samples/classifier.response.json")


def _codes(errs: list[TritonValidationError]) -> list[str]:
    return [e.code for e in errs]


def _figures(**kw: Any) -> TemplateFigures:
    base: dict[str, Any] = {"stack": "S", "template_bytes": 1000, "resources": 10}
    return TemplateFigures(**{**base, **kw})


# ---------------------------------------------------------------------------- the limits, vendored


def test_every_limit_is_vendored_with_a_source() -> None:
    lims = tables.cloudformation_limits()
    assert {k: v.value for k, v in lims.items()}.items() >= {
        "template_body_bytes": 51200,
        "template_s3_bytes": 1_000_000,
        "resources": 500,
        "outputs": 200,
        "parameters": 200,
        "mappings": 200,
        "ssm_standard_value_chars": 4096,
        "ssm_advanced_value_chars": 8192,
    }.items()
    assert all(v.source.strip() for v in lims.values())


# ---------------------------------------------------------------------------- each edge: at passes, over fails


@pytest.mark.parametrize(
    ("field", "name", "code"),
    [
        ("template_bytes", "template_s3_bytes", "TemplateTooLarge"),
        ("resources", "resources", "StackResourceLimit"),
        ("outputs", "outputs", "TooManyOutputs"),
        ("parameters", "parameters", "TooManyParameters"),
        ("mappings", "mappings", "TooManyMappings"),
    ],
)
def test_each_template_limit_passes_at_and_fails_over(field: str, name: str, code: str) -> None:
    edge = limit(name)
    assert check_template_limits(_figures(**{field: edge - 1})) == []
    assert check_template_limits(_figures(**{field: edge})) == []
    assert _codes(check_template_limits(_figures(**{field: edge + 1}))) == [code]


def test_a_template_too_large_for_its_name_map_names_the_split() -> None:
    [err] = check_template_limits(
        _figures(
            template_bytes=2_400_000,
            contributors=(Contributor(path="S/Mme", bytes=2_300_000, target_models=40_000),),
        )
    )
    # 800 kB of room less the other 100 kB: 700,000 / 57.5 bytes per TargetModel = 12,173 per stack
    assert (
        "put the MME's TargetModels behind 4 endpoints, each in its own stack, of at most 12,173" in err.fix
    )
    assert "S/Mme" in str(err)


def test_a_name_map_part_fits_a_standard_parameter_up_to_4096_characters() -> None:
    def part(n: int) -> tuple[list[str], dict[str, str]]:
        name = "m" * (n - len('{"":"x.tar.gz"}'))
        entries = {name: "x.tar.gz"}
        return [json.dumps(entries, separators=(",", ":"))], entries

    for n in (4095, 4096):
        assert check_name_map_parts(*part(n)) == []
    [err] = check_name_map_parts(*part(4097))
    assert err.code == "TargetModelMapEntryTooLong" and "advanced tier (8,192" in str(err)
    [err] = check_name_map_parts(*part(8193))
    assert "does not fit the advanced tier" in str(err)


def test_a_name_map_over_the_template_limit_fails_at_the_endpoint() -> None:
    """~3.1 kB per entry (long logical names): 400 TargetModels are over 1 MB of template, 250 are not."""

    def manifest(n: int) -> Manifest:
        m = big_mme_manifest(n)
        entry = m.endpoints["multi"]
        tms = {
            "n" * 3000 + k: dataclasses.replace(t, logical_name="n" * 3000 + k)
            for k, t in entry.target_models.items()
        }
        return dataclasses.replace(
            m, endpoints={**m.endpoints, "multi": dataclasses.replace(entry, target_models=tms)}
        )

    def endpoint(n: int) -> None:
        TritonEndpoint(
            new_stack(),
            "Mme",
            artifacts=ModelArtifacts.from_manifest(manifest(n), "multi"),
            instance_type="ml.g5.xlarge",
            endpoint_name="multi",
        )

    endpoint(250)
    with pytest.raises(TritonValidationError) as info:
        endpoint(400)
    assert info.value.code == "TemplateTooLarge"
    assert "put the MME's TargetModels behind 2 endpoints" in str(info.value)
    assert "/Mme" in str(info.value)


# ---------------------------------------------------------------------------- the whole stack, at synth


def test_the_stack_validation_fails_synth_over_the_outputs_limit() -> None:
    stack = new_stack()
    TritonEndpoint(
        stack,
        "Mme",
        artifacts=ModelArtifacts.from_manifest(big_mme_manifest(3), "multi"),
        instance_type="ml.g5.xlarge",
        endpoint_name="multi",
    )
    have = stack_limits(stack).figures().outputs
    for i in range(limit("outputs") - have):
        cdk.CfnOutput(stack, f"O{i}", value="x")
    cdk.App.of(stack).synth()  # exactly at the limit
    cdk.CfnOutput(stack, "OneMore", value="x")
    with pytest.raises(RuntimeError, match=r"\[TooManyOutputs\]"):
        cdk.App.of(stack).synth(force=True)


class _RefusingStack(cdk.Stack):
    """A stack whose Python object refuses new attributes, as a proxy of a stack defined in JavaScript may."""

    def __setattr__(self, name: str, value: Any) -> None:
        if name.startswith("_cdk_triton"):
            raise AttributeError(name)
        super().__setattr__(name, value)


@pytest.mark.parametrize("refuses", [False, True], ids=["stack-keeps-it", "marker-keeps-it"])
def test_one_validation_per_stack_wherever_it_is_kept(refuses: bool) -> None:
    stack = new_stack()
    if refuses:
        stack = _RefusingStack(cdk.App.of(stack), "Refusing", env=ENV)
    first = stack_limits(stack)
    assert stack_limits(stack) is first  # one per stack, however often the endpoints ask
    marker = stack.node.try_find_child(MARKER_ID)
    assert (marker is not None) is refuses  # the marker construct only where the stack refuses attributes
    for i in range(limit("outputs") + 1):
        cdk.CfnOutput(stack, f"O{i}", value="x")
    with pytest.raises(RuntimeError, match=r"\[TooManyOutputs\]"):  # and it runs at synth either way
        cdk.App.of(stack).synth()


def test_the_stack_figures_are_within_two_percent_of_the_written_template() -> None:
    stack = new_stack()
    TritonEndpoint(
        stack,
        "Mme",
        artifacts=ModelArtifacts.from_manifest(big_mme_manifest(1000), "multi"),
        instance_type="ml.g5.xlarge",
        endpoint_name="multi",
    )
    figures = stack_limits(stack).figures()
    written = len(json.dumps(template(stack, collect=False).to_json(), indent=1))
    assert abs(figures.template_bytes - written) / written < 0.02
    assert figures.contributors[0].target_models == 1000


# ---------------------------------------------------------------------------- the verification sample


def _facts(n: int, memory: int = 10) -> dict[str, tuple[str, int]]:
    return {f"m{i:04d}": (f"sha{i}", memory) for i in range(n)}


def test_the_sample_is_every_changed_model_and_a_share_of_the_others() -> None:
    facts = _facts(1000)
    baseline = {n: sha for n, (sha, _) in facts.items()}
    for n in ("m0003", "m0500", "m0999"):
        baseline[n] = "old"
    got = select(
        list(facts), facts=facts, baseline=baseline, capacity_bytes=None, sample=VerificationSample()
    )
    assert got.changed == ("m0003", "m0500", "m0999")
    assert len(got.sampled) == 3 + 100  # 10 % of the 997 unchanged, rounded up
    assert got.skipped == {"unchanged, not drawn": 897}
    again = select(
        list(facts), facts=facts, baseline=baseline, capacity_bytes=None, sample=VerificationSample()
    )
    assert again == got  # the same inputs draw the same models


def test_the_sample_is_capped_by_the_instances_cache_changed_models_first() -> None:
    facts = _facts(100, memory=10)
    baseline = {n: "old" if n < "m0005" else sha for n, (sha, _) in facts.items()}
    got = select(list(facts), facts=facts, baseline=baseline, capacity_bytes=70, sample=VerificationSample())
    assert len(got.sampled) == 7 and set(got.changed) == {f"m000{i}" for i in range(5)}
    assert got.skipped["over the instances' cache"] == 8  # 5 changed + 10 drawn (10 % of 95), 7 fit
    assert got.skipped["unchanged, not drawn"] == 85


def test_a_large_mme_keeps_its_checks_in_s3_and_its_properties_small() -> None:
    m = big_mme_manifest(600)
    entry = m.endpoints["multi"]
    tms = {k: dataclasses.replace(t, sample=SAMPLE) for k, t in entry.target_models.items()}
    m = dataclasses.replace(
        m, endpoints={**m.endpoints, "multi": dataclasses.replace(entry, target_models=tms)}
    )
    stack = new_stack()
    ep = TritonEndpoint(
        stack,
        "Mme",
        artifacts=ModelArtifacts.from_manifest(m, "multi"),
        instance_type="ml.g5.xlarge",
        endpoint_name="multi",
    )
    v = ep.add_verification(sample=VerificationSample(max_checks=50, parallelism=16))
    tpl = template(stack, collect=False)
    [cr] = tpl.find_resources(RESOURCE_TYPE).values()
    props = cr["Properties"]
    assert "Checks" not in props and props["ChecksTotal"] == "600" and props["ChecksSampled"] == "50"
    assert props["Parallelism"] == "16" and len(json.dumps(props)) < 1500
    body = spec_document([c.to_property() for c in v.checks], v.selection)
    assert props["ChecksSha256"] == __import__("hashlib").sha256(body).hexdigest()
    doc = json.loads(body)
    assert sum(c["Sampled"] for c in doc["Checks"]) == 50 and len(doc["Checks"]) == 600
    statements = [
        s
        for p in tpl.find_resources("AWS::IAM::ManagedPolicy").values()
        for s in p["Properties"]["PolicyDocument"]["Statement"]
    ]
    [read] = [s for s in statements if s.get("Sid") == "ReadChecks"]
    assert read["Action"] == "s3:GetObject" and "Fn::Join" in read["Resource"]


@pytest.mark.parametrize("over", [{"others_percent": 101}, {"max_checks": 0}, {"parallelism": 65}])
def test_fails_on_a_sample_out_of_range(over: dict[str, Any]) -> None:
    m = big_mme_manifest(3)
    entry = m.endpoints["multi"]
    tms = {k: dataclasses.replace(t, sample=SAMPLE) for k, t in entry.target_models.items()}
    m = dataclasses.replace(
        m, endpoints={**m.endpoints, "multi": dataclasses.replace(entry, target_models=tms)}
    )
    ep = TritonEndpoint(
        new_stack(), "Mme", artifacts=ModelArtifacts.from_manifest(m, "multi"), instance_type="ml.g5.xlarge"
    )
    with pytest.raises(TritonValidationError) as info:
        ep.add_verification(sample=VerificationSample(**over))
    assert info.value.code == "InvalidVerificationSample"


def _sampled(n: int, changed: frozenset[str] = frozenset()) -> Manifest:
    """``n`` TargetModels with samples; those in ``changed`` get another archive sha256 (a baseline)."""
    m = big_mme_manifest(n)
    entry = m.endpoints["multi"]
    tms = {
        k: dataclasses.replace(t, sample=SAMPLE, sha256=("f" * 64 if k in changed else t.sha256))
        for k, t in entry.target_models.items()
    }
    return dataclasses.replace(
        m, endpoints={**m.endpoints, "multi": dataclasses.replace(entry, target_models=tms)}
    )


def test_the_baseline_manifest_comes_from_the_prop_or_the_context(tmp_path: Any) -> None:
    before = _sampled(40, changed=frozenset({"model_0003", "model_0031"}))  # other archives then
    path = write_manifest(before, tmp_path / "before.json")
    now = _sampled(40)

    def verified(context: dict[str, Any] | None = None, **sample: Any) -> Any:
        app = cdk.App(builtin_cloud_formation_validation=False, context=context or {})
        stack = cdk.Stack(app, "TestStack", env=ENV)
        ep = TritonEndpoint(
            stack, "Mme", artifacts=ModelArtifacts.from_manifest(now, "multi"), instance_type="ml.g5.xlarge"
        )
        return ep.add_verification(sample=VerificationSample(**sample)).selection

    for got in (verified(baseline=str(path)), verified({"cdk-triton:verification-baseline": str(path)})):
        assert got.changed == ("model_0003", "model_0031")
        assert len(got.sampled) == 2 + 4  # and 10 % of the 38 unchanged, rounded up
    assert len(verified().changed) == 40  # no baseline: every TargetModel is changed
