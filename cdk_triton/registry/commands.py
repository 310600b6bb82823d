"""``cdk-triton register``: parse, call ``register_build``, print its JSON. Standard library at import."""

from __future__ import annotations

import argparse
import json
import sys

from cdk_triton.config.registry import APPROVAL_STATUSES, DEFAULT_APPROVAL_STATUS


def _key_value(text: str) -> tuple[str, str]:
    key, sep, value = text.partition("=")
    if not sep or not key:
        raise argparse.ArgumentTypeError(f"{text!r} is not KEY=VALUE")
    return key, value


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser(
        "register",
        help="register a build's endpoint in its SageMaker model package group, with its evidence",
        description="Create the model package(s) of one endpoint of an uploaded build (PendingManualApproval "
        "by default) and upload its evidence to S3. Registering the same manifest again creates nothing "
        "(created: false). Prints JSON with the package ARNs.",
    )
    p.add_argument(
        "--manifest",
        default="build/out/manifest.json",
        help="the build's manifest (default: build/out/manifest.json)",
    )
    p.add_argument("--endpoint", required=True, help="the manifest's endpoint key")
    p.add_argument(
        "--group", required=True, help="the endpoint's model package group (TritonModelPackageGroup)"
    )
    p.add_argument(
        "--evidence-location",
        default=None,
        metavar="S3_URI",
        help="s3://bucket/prefix for the evidence (default: the manifest's artifact location)",
    )
    p.add_argument(
        "--approval-status",
        default=DEFAULT_APPROVAL_STATUS,
        help=f"the new packages' ModelApprovalStatus: {', '.join(APPROVAL_STATUSES)} (default: {DEFAULT_APPROVAL_STATUS})",
    )
    p.add_argument(
        "--evidence-file",
        action="append",
        default=[],
        metavar="PATH",
        help="an extra evidence file (e.g. tune results.json); repeatable",
    )
    p.add_argument(
        "--metadata",
        action="append",
        type=_key_value,
        default=[],
        metavar="KEY=VALUE",
        help="extra customer metadata on each package (keys outside 'cdk-triton:'); repeatable",
    )
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from cdk_triton.registry.register import register_build

    result = register_build(
        args.manifest,
        endpoint=args.endpoint,
        group=args.group,
        evidence_location=args.evidence_location,
        approval_status=args.approval_status,
        evidence_files=args.evidence_file,
        metadata=dict(args.metadata),
    )
    json.dump(result.to_dict(), sys.stdout, indent=2)
    sys.stdout.write("\n")
    return 0
