"""``cdk-triton --help`` (and each subcommand's) imports no heavy or optional package.

Each command module registers its arguments with the standard library only; torch, numpy,
ruamel.yaml and matplotlib load inside the call that needs them. Checked in a fresh interpreter.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
HEAVY = ("torch", "numpy", "ruamel", "matplotlib")
SUBCOMMANDS = ("build", "serve", "invoke", "stop", "bench", "tune", "demo", "register")

PROBE = """
import json, sys
{prelude}
heavy = {heavy!r}
print(json.dumps(sorted(m for m in sys.modules if m.split(".")[0] in heavy)))
"""

HELP = """
import contextlib, io
from cdk_triton.cli import main
with contextlib.redirect_stdout(io.StringIO()) as out:
    try:
        main({argv!r})
    except SystemExit as exc:
        assert exc.code == 0, exc.code
assert "usage: cdk-triton" in out.getvalue(), out.getvalue()
"""


def _heavy_after(prelude: str) -> list[str]:
    proc = subprocess.run(
        [sys.executable, "-c", PROBE.format(prelude=prelude, heavy=HEAVY)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    return list(json.loads(proc.stdout.splitlines()[-1]))


@pytest.mark.parametrize("argv", [["--help"], *([c, "--help"] for c in SUBCOMMANDS)], ids=" ".join)
def test_help_imports_no_heavy_package(argv: list[str]) -> None:
    assert _heavy_after(HELP.format(argv=argv)) == []


def test_the_probe_sees_a_heavy_import() -> None:
    # the payload helpers of the local endpoint use numpy: importing them shows up
    assert "numpy" in _heavy_after("import cdk_triton.local.client")
