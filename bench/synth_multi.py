"""A three-stack app, written twice: with the cdk-triton constructs and by hand with L1 constructs.

``Network``: a VPC (two isolated subnets in two AZs, no NAT); ``ServingA`` and ``ServingB``: each the
example's two endpoints (classifier SME with Triton metrics and GPU autoscaling, multi MME with
invocations autoscaling) in that VPC, a dashboard, alarms and an encrypted SNS topic; four endpoints
in all. The VPC is the app's own (an L2 ``Vpc``, ``app_vpc``) in ``constructs`` and ``l1``; ``l1`` writes
the serving stacks by hand, and ``l1_vpc`` (a reference) the VPC too. All three write the same
CloudFormation, logical ids aside (bench/equivalence.py; a unit test checks it). Used by
bench/synth_multi_bench.py, in process and as a ``cdk synth`` app:
``python bench/synth_multi.py constructs|l1|l1_vpc [MANIFEST]`` (context ``nag``: cdk-nag AwsSolutions).
"""

from __future__ import annotations

import os
import sys
from collections import Counter
from pathlib import Path
from typing import Any

os.environ.setdefault("JSII_SILENCE_WARNING_END_OF_LIFE_NODE_VERSION", "20")

import aws_cdk as cdk  # noqa: E402
from aws_cdk import aws_ec2 as ec2  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:  # run as a `cdk synth` app from another directory
    sys.path.insert(0, str(ROOT))

from bench.synth_bench import ENV, L1Network, define_l1  # noqa: E402
from cdk_triton.config.manifest import read_manifest  # noqa: E402

DEFAULT_MANIFEST = ROOT / "tests" / "fixtures" / "manifests" / "example.json"
AZS = ["us-east-1a", "us-east-1b"]
STACKS = ("Network", "ServingA", "ServingB")
PREFIXES = {"ServingA": "a-", "ServingB": "b-"}


def app_vpc(app: cdk.App) -> ec2.IVpc:
    """The app's own network: the ``Network`` stack with an L2 VPC, the same in both versions.

    The VPC is the app's, not what the constructs define: written the same way on both sides, the
    ratio measures the constructs against their hand-written equivalent (``l1_vpc`` hand-writes the
    VPC too, for reference).
    """
    # the L2 VPC checks its AZs against the stack's (a context lookup): answer it, as cdk.context.json would
    app.node.set_context(f"availability-zones:account={ENV.account}:region={ENV.region}", AZS)
    network = cdk.Stack(app, "Network", env=ENV)
    return ec2.Vpc(
        network,
        "Vpc",
        availability_zones=AZS,
        nat_gateways=0,
        subnet_configuration=[
            ec2.SubnetConfiguration(
                name="Isolated", subnet_type=ec2.SubnetType.PRIVATE_ISOLATED, cidr_mask=24
            )
        ],
    )


def build_constructs(app: cdk.App, manifest: Path) -> None:
    """The three stacks: the app's VPC, and the serving stacks with cdk-triton's constructs."""
    from cdk_triton.constructs import (
        ModelArtifacts,
        TritonAlarms,
        TritonDashboard,
        TritonEndpoint,
        TritonMetrics,
    )

    vpc = app_vpc(app)
    for stack_id, prefix in PREFIXES.items():
        stack = cdk.Stack(app, stack_id, env=ENV)
        classifier = TritonEndpoint(
            stack,
            "Classifier",
            artifacts=ModelArtifacts.from_manifest(str(manifest), "classifier"),
            instance_type="ml.g5.xlarge",
            endpoint_name=f"{prefix}classifier",
            metrics=TritonMetrics(),
            vpc=vpc,
        )
        classifier.auto_scale(min_capacity=1, max_capacity=4).scale_on_gpu_utilization(
            target_percent=60,
            scale_in_cooldown=cdk.Duration.seconds(600),
            scale_out_cooldown=cdk.Duration.seconds(200),
        )
        multi = TritonEndpoint(
            stack,
            "Multi",
            artifacts=ModelArtifacts.from_manifest(str(manifest), "multi"),
            instance_type="ml.g5.xlarge",
            endpoint_name=f"{prefix}multi",
            vpc=vpc,
        )
        multi.auto_scale(min_capacity=1, max_capacity=4).scale_on_invocations_per_instance(
            invocations_per_minute=1000
        )
        TritonDashboard(stack, "Dashboard", endpoints=[classifier, multi])
        alarms = TritonAlarms(stack, "ClassifierAlarms", endpoint=classifier, create_topic=True)
        TritonAlarms(stack, "MultiAlarms", endpoint=multi, topic=alarms.topic)
        for cid, ep in (("ClassifierEndpointName", classifier), ("MultiEndpointName", multi)):
            cdk.CfnOutput(stack, cid, value=ep.attr_endpoint_name)


def build_l1(app: cdk.App, manifest_path: Path) -> None:
    """The app's VPC, and the serving stacks by hand: L1 constructs and raw dictionaries."""
    manifest = read_manifest(manifest_path)
    vpc = app_vpc(app)
    net = L1Network(vpc_id=vpc.vpc_id, subnet_ids=list(vpc.select_subnets().subnet_ids))
    for stack_id, prefix in PREFIXES.items():
        define_l1(cdk.Stack(app, stack_id, env=ENV), manifest, prefix=prefix, network=net)


def build_l1_vpc(app: cdk.App, manifest_path: Path) -> None:
    """All three stacks by hand, the VPC too (a reference: the app's L2 VPC written in L1s)."""
    manifest = read_manifest(manifest_path)
    network = cdk.Stack(app, "Network", env=ENV)
    vpc = ec2.CfnVPC(
        network,
        "Vpc",
        cidr_block="10.0.0.0/16",
        enable_dns_hostnames=True,
        enable_dns_support=True,
        instance_tenancy="default",
        tags=[cdk.CfnTag(key="Name", value="Network/Vpc")],
    )
    subnets = []
    for i, az in enumerate(AZS):
        subnet = ec2.CfnSubnet(
            network,
            f"IsolatedSubnet{i + 1}",
            vpc_id=vpc.ref,
            availability_zone=az,
            cidr_block=f"10.0.{i}.0/24",
            map_public_ip_on_launch=False,
            tags=[
                cdk.CfnTag(key="aws-cdk:subnet-name", value="Isolated"),
                cdk.CfnTag(key="aws-cdk:subnet-type", value="Isolated"),
                cdk.CfnTag(key="Name", value=f"Network/Vpc/IsolatedSubnet{i + 1}"),
            ],
        )
        table = ec2.CfnRouteTable(
            network,
            f"IsolatedSubnet{i + 1}RouteTable",
            vpc_id=vpc.ref,
            tags=[cdk.CfnTag(key="Name", value=f"Network/Vpc/IsolatedSubnet{i + 1}")],
        )
        ec2.CfnSubnetRouteTableAssociation(
            network, f"IsolatedSubnet{i + 1}Association", route_table_id=table.ref, subnet_id=subnet.ref
        )
        subnets.append(subnet.ref)
    # the L2 Vpc acknowledges the hard-coded AZs of its subnets (cfn-lint W3010); so does the hand-written one
    network.node.add_metadata(
        str(cdk.Validations.ACKNOWLEDGED_RULES_METADATA_KEY),
        {"CloudFormation-Validate::W3010": "the subnets' availability zones are chosen on purpose"},
    )
    net = L1Network(vpc_id=vpc.ref, subnet_ids=subnets)
    for stack_id, prefix in PREFIXES.items():
        define_l1(cdk.Stack(app, stack_id, env=ENV), manifest, prefix=prefix, network=net)


def add_nag(app: cdk.App) -> None:
    """cdk-nag AwsSolutions as a validation plugin (findings are reported, the synth still counts)."""
    from cdk_nag import AwsSolutionsChecks

    cdk.Validations.of(app).add_plugins(AwsSolutionsChecks(app))


def templates(assembly: Any) -> dict[str, dict[str, Any]]:
    return {name: assembly.get_stack_by_name(name).template for name in STACKS}


def type_counts(tpls: dict[str, dict[str, Any]]) -> dict[str, Counter[str]]:
    """Per stack: resource type -> count, plus the number of outputs (cross-stack exports included)."""
    out: dict[str, Counter[str]] = {}
    for name, tpl in tpls.items():
        counts = Counter(r["Type"] for r in tpl["Resources"].values())
        counts["(outputs)"] = len(tpl.get("Outputs", {}))
        out[name] = counts
    return out


#: The versions: the constructs, the serving stacks hand-written, and everything hand-written.
BUILDERS = {"constructs": build_constructs, "l1": build_l1, "l1_vpc": build_l1_vpc}


def synth(which: str, manifest: Path, *, outdir: str | None = None, nag: bool = False) -> dict[str, Any]:
    """Define and synthesize one version in this process (schema validation off); the templates."""
    app = cdk.App(outdir=outdir, builtin_cloud_formation_validation=False)
    BUILDERS[which](app, manifest)
    if nag:
        add_nag(app)
    return templates(app.synth())


def main(argv: list[str]) -> int:
    """The ``cdk synth`` entry: ``synth_multi.py constructs|l1|l1_vpc [MANIFEST]``; context ``nag``."""
    which = argv[0]
    manifest = Path(argv[1]) if len(argv) > 1 else DEFAULT_MANIFEST
    app = cdk.App()  # outdir, context and validation as the CLI passes them
    BUILDERS[which](app, manifest)
    if str(app.node.try_get_context("nag") or "false").lower() in ("true", "1"):
        add_nag(app)
    app.synth()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
