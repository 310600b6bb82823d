"""The three-stack synth benchmark app: both versions define the same resources (no timing)."""

from __future__ import annotations

from pathlib import Path

from bench import synth_multi
from bench.equivalence import acknowledged, differences


def test_constructs_and_hand_written_l1_define_the_same_templates(tmp_path: Path) -> None:
    constructs = synth_multi.synth("constructs", synth_multi.DEFAULT_MANIFEST, outdir=str(tmp_path / "c"))
    l1 = synth_multi.synth("l1", synth_multi.DEFAULT_MANIFEST, outdir=str(tmp_path / "l1"))
    counts = synth_multi.type_counts(constructs)
    assert counts == synth_multi.type_counts(l1)
    assert differences(constructs, l1) == []  # the same CloudFormation, logical ids aside
    # and the same cdk-nag acknowledgments (a stack that passes cdk-nag carries them whoever wrote it)
    acks = acknowledged(tmp_path / "c")
    assert acks == acknowledged(tmp_path / "l1") and len(acks["ServingA"]) == 9
    assert sum(c["AWS::SageMaker::Endpoint"] for c in counts.values()) == 4
    assert counts["Network"]["AWS::EC2::VPC"] == 1
    assert all(counts[s]["AWS::CloudWatch::Dashboard"] == 1 for s in ("ServingA", "ServingB"))
    assert all(counts[s]["AWS::CloudWatch::Alarm"] == 6 for s in ("ServingA", "ServingB"))
