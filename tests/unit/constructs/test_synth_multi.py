"""The three-stack synth benchmark app: every version defines the same resources (no timing)."""

from __future__ import annotations

from pathlib import Path

import pytest

from bench import synth_multi
from bench.equivalence import acknowledged, differences


@pytest.fixture(scope="module")
def constructs(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, dict]]:
    out = tmp_path_factory.mktemp("c")
    return out, synth_multi.synth("constructs", synth_multi.DEFAULT_MANIFEST, outdir=str(out))


@pytest.mark.parametrize("which", ["l1", "l1_vpc"])
def test_constructs_and_hand_written_l1_define_the_same_templates(
    constructs: tuple[Path, dict[str, dict]], which: str, tmp_path: Path
) -> None:
    out_c, tpls = constructs
    l1 = synth_multi.synth(which, synth_multi.DEFAULT_MANIFEST, outdir=str(tmp_path))
    counts = synth_multi.type_counts(tpls)
    assert counts == synth_multi.type_counts(l1)
    assert differences(tpls, l1) == []  # the same CloudFormation, logical ids aside
    # and the same cdk-nag acknowledgments (a stack that passes cdk-nag carries them whoever wrote it)
    acks = acknowledged(out_c)
    assert acks == acknowledged(tmp_path) and len(acks["ServingA"]) == 9
    assert sum(c["AWS::SageMaker::Endpoint"] for c in counts.values()) == 4
    assert counts["Network"]["AWS::EC2::VPC"] == 1
    assert all(counts[s]["AWS::CloudWatch::Dashboard"] == 1 for s in ("ServingA", "ServingB"))
    # 3 per endpoint + the MME's ModelCacheHit and ModelLoadingWaitTime alarms
    assert all(counts[s]["AWS::CloudWatch::Alarm"] == 8 for s in ("ServingA", "ServingB"))


def test_the_app_vpc_is_the_same_object_kind_in_constructs_and_l1() -> None:
    """``constructs`` and ``l1`` share the app's L2 VPC; only ``l1_vpc`` writes it in L1s."""
    import aws_cdk as cdk
    from aws_cdk import aws_ec2 as ec2

    kinds = {}
    for which in ("constructs", "l1", "l1_vpc"):
        app = cdk.App(builtin_cloud_formation_validation=False)
        synth_multi.BUILDERS[which](app, synth_multi.DEFAULT_MANIFEST)
        vpc = app.node.find_child("Network").node.find_child("Vpc")
        kinds[which] = type(vpc)
    assert kinds["constructs"] is kinds["l1"] is ec2.Vpc and kinds["l1_vpc"] is ec2.CfnVPC
