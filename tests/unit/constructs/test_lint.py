"""cdk-nag (AwsSolutions) over the representative scenarios, and the cfn-lint checker itself.

cfn-lint over every template the session synthesized runs once, in the session fixture of
``conftest.py``; the scenario templates synthesized here join it.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import aws_cdk as cdk
import pytest

from tests.acknowledgments import CONTEXT
from tests.unit.constructs.scenarios import SCENARIOS, build_all
from tests.unit.constructs.support import REGISTRY, TemplateRegistry, cfn_lint


@pytest.fixture(scope="module")
def scenarios(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from cdk_nag import AwsSolutionsChecks

    out = tmp_path_factory.mktemp("scenarios")
    app = cdk.App(outdir=str(out), builtin_cloud_formation_validation=False, context=dict(CONTEXT))
    build_all(app)
    cdk.Validations.of(app).add_plugins(AwsSolutionsChecks(app))
    app.synth()  # raises "Validation failed" on any unacknowledged finding
    for path in sorted(out.glob("*.template.json")):
        REGISTRY.add_file(path)  # linted with the session's templates
    return out


def test_scenarios_pass_cdk_nag_aws_solutions(scenarios: Path) -> None:
    report = scenarios / "validation-report.json"
    if report.exists():
        data: dict[str, Any] = json.loads(report.read_text())
        violations = [v for p in data["pluginReports"] for v in p["violations"]]
        assert violations == []
    assert sorted(p.name for p in scenarios.glob("*.template.json")) == sorted(
        f"{name}.template.json" for name in SCENARIOS
    )


def test_scenario_templates_join_the_session_lint(scenarios: Path) -> None:
    assert {str(p) for p in scenarios.glob("*.template.json")} <= {str(p) for p in REGISTRY.files}


_BROKEN: dict[str, Any] = {
    "Resources": {
        "Endpoint": {
            "Type": "AWS::SageMaker::Endpoint",
            "Properties": {"EndpointName": "x", "NoSuchProperty": 1},  # EndpointConfigName missing
        }
    }
}


def test_the_checker_flags_a_broken_template(tmp_path: Path) -> None:
    clean, output = cfn_lint({"broken": _BROKEN}, [], tmp_path)
    assert not clean
    assert "NoSuchProperty" in output or "EndpointConfigName" in output


def test_the_checker_passes_a_clean_template(tmp_path: Path) -> None:
    registry = TemplateRegistry()
    registry.add("clean", {"Resources": {"Topic": {"Type": "AWS::SNS::Topic"}}})
    assert len(registry) == 1
    assert cfn_lint(registry.templates, registry.files, tmp_path) == (True, "")
