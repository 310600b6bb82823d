"""bench/equivalence.py: templates compared with logical ids aside, and nothing else aside."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

from bench.equivalence import ACKNOWLEDGED, acknowledged, differences


def _app(role: str, policy: str, export: str) -> dict[str, dict[str, Any]]:
    return {
        "Net": {
            "Resources": {"Vpc1": {"Type": "AWS::EC2::VPC", "Properties": {"CidrBlock": "10.0.0.0/16"}}},
            "Outputs": {export: {"Value": {"Ref": "Vpc1"}, "Export": {"Name": f"Net:{export}"}}},
        },
        "Serving": {
            "Resources": {
                role: {"Type": "AWS::IAM::Role", "Properties": {"Description": "r"}},
                policy: {
                    "Type": "AWS::IAM::ManagedPolicy",
                    "Properties": {
                        "Roles": [{"Ref": role}],
                        "Description": {"Fn::ImportValue": f"Net:{export}"},
                    },
                },
            }
        },
    }


def test_logical_ids_and_export_names_do_not_count() -> None:
    a = _app("RoleABC123", "PolicyDEF456", "ExportsOutputRefVpc1AAAA")
    b = _app("myRole", "myPolicy", "ExportsOutputRefVpc1BBBB")
    assert differences(a, b) == []


def test_a_changed_property_is_reported_with_its_stack() -> None:
    a = _app("RoleABC123", "PolicyDEF456", "ExportsOutputRefVpc1AAAA")
    b = copy.deepcopy(a)
    b["Serving"]["Resources"]["RoleABC123"]["Properties"]["Description"] = "other"
    found = differences(a, b)
    assert len(found) == 2 and all(f.startswith("Serving: resource only in the") for f in found)


def test_a_missing_resource_output_or_stack_is_reported() -> None:
    a = _app("R", "P", "ExportsOutputRefVpc1AAAA")
    b = copy.deepcopy(a)
    del b["Serving"]["Resources"]["P"]
    assert differences(a, b) == [f"Serving: resource only in the first: {_canonical_policy()}"]
    c = copy.deepcopy(a)
    c["Net"]["Outputs"] = {}
    assert [f.split(":")[0:2] for f in differences(a, c)] == [["Net", " output only in the first"]]
    assert differences(a, {"Net": a["Net"]}) == ["stacks differ: ['Net', 'Serving'] vs ['Net']"]


def _canonical_policy() -> str:
    return (
        '{"Properties": {"Description": {"Fn::ImportValue": "Net:EXPORT"}, "Roles": [{"Ref": "#"}]}, '
        '"Type": "AWS::IAM::ManagedPolicy"}'
    )


def test_acknowledged_reads_every_stack_and_its_metadata_file(tmp_path: Path) -> None:
    (tmp_path / "A.metadata.json").write_text(
        json.dumps(
            {
                "/A/X": [
                    {"type": ACKNOWLEDGED, "data": {"AwsSolutions::AwsSolutions-IAM5[Resource::*]": "r"}}
                ],
                "/A/Y": [{"type": "aws:cdk:warning", "data": "not an acknowledgment"}],
            }
        )
    )
    manifest = {
        "artifacts": {
            "A": {"type": "aws:cloudformation:stack", "additionalMetadataFile": "A.metadata.json"},
            "B": {
                "type": "aws:cloudformation:stack",
                "metadata": {"/B": [{"type": ACKNOWLEDGED, "data": {"P::P-Rule": "r", "P::P-Other": "s"}}]},
            },
            "Tree": {"type": "cdk:tree"},
        }
    }
    (tmp_path / "manifest.json").write_text(json.dumps(manifest))
    assert acknowledged(tmp_path) == {
        "A": {"AwsSolutions::AwsSolutions-IAM5[Resource::*]"},
        "B": {"P::P-Rule", "P::P-Other"},
    }
