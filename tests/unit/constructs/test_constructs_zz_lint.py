"""cdk-nag (AwsSolutions) and one cfn-lint run over every template the construct tests synthesized.

Named ``zz`` so it runs after the other construct tests and sees the templates they collected; it
also synthesizes the representative scenarios itself, so it is meaningful when run alone.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import aws_cdk as cdk
import pytest
from tests.unit.constructs.scenarios import SCENARIOS, build_all
from tests.unit.constructs.support import CFN_LINT, COLLECTED


@pytest.fixture(scope="module")
def scenarios(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from cdk_nag import AwsSolutionsChecks

    out = tmp_path_factory.mktemp("scenarios")
    app = cdk.App(outdir=str(out), builtin_cloud_formation_validation=False)
    build_all(app)
    cdk.Validations.of(app).add_plugins(AwsSolutionsChecks(app))
    app.synth()  # raises "Validation failed" on any unacknowledged finding
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


def test_every_synthesized_template_passes_cfn_lint(scenarios: Path, tmp_path: Path) -> None:
    files = [str(p) for p in sorted(scenarios.glob("*.template.json"))]
    for key, tpl in COLLECTED.items():
        path = tmp_path / (key.replace("/", "_") + ".template.json")
        path.write_text(json.dumps(tpl))
        files.append(str(path))
    proc = subprocess.run([sys.executable, "-c", CFN_LINT, *files], capture_output=True, text=True)
    assert proc.returncode == 0 and not proc.stdout.strip(), proc.stdout[-5000:] + proc.stderr[-2000:]
    assert len(files) >= len(SCENARIOS)
