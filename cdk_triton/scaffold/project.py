"""What ``cdk-triton init`` writes: a new project from the templates shipped as package data.

:func:`init_project` renders ``templates/*.tmpl`` (``{{name}}`` placeholders) into a directory: the
model declaration and its factory, the CDK app, ``cdk.json``, ``package.json`` pinning the CDK CLI, a
Makefile with ``make demo`` and ``make test``, a test, a README and ignore rules. Every check runs before
the first file is written. The advisories the default release must acknowledge come from
``cdk_triton.config.advisories`` (the rule build and synth apply), so the scaffold builds as written.
"""

from __future__ import annotations

import importlib.resources
import re
from dataclasses import dataclass
from pathlib import Path

import cdk_triton
from cdk_triton.config import advisories, modes, tables
from cdk_triton.errors import TritonValidationError, raise_all

#: The hosting modes ``--mode`` offers, by the row's name (``config.modes``; the CLI takes any word the
#: registry resolves: ``single``, ``SingleModel``, ``multi``, ...) -> (models.yaml template, endpoint key,
#: invoke arguments).
TEMPLATES: dict[str, tuple[str, str, str]] = {
    modes.SINGLE_MODEL.name: ("models.single.yaml.tmpl", "classifier", ""),
    modes.MULTI_MODEL.name: ("models.multi.yaml.tmpl", "multi", " --target-model classifier"),
}
DEFAULT_MODE = "single"
#: The CDK CLI the project pins: the version this repository's package.json pins (a test checks it).
CDK_CLI_VERSION = "~2.1148.1"
#: The tool versions the project's Makefile installs: the pinned suite's (a test checks them).
CDK_NAG_VERSION = "3.0.2"
PYTEST_VERSION = "9.2.0"
#: The instance type of the scaffold's endpoint (a CPU one: the model is small).
INSTANCE_TYPE = "ml.c5.xlarge"

#: template -> where it is written in the project.
FILES: dict[str, str] = {
    "models.py.tmpl": "build/models.py",
    "app.py.tmpl": "app.py",
    "cdk.json.tmpl": "cdk.json",
    "package.json.tmpl": "package.json",
    "Makefile.tmpl": "Makefile",
    "test_app.py.tmpl": "tests/test_app.py",
    "README.md.tmpl": "README.md",
    "gitignore.tmpl": ".gitignore",
}


@dataclass(frozen=True, kw_only=True, slots=True)
class ScaffoldResult:
    """What :func:`init_project` wrote: the project directory and each file, relative to it."""

    directory: Path
    files: tuple[str, ...]
    mode: str


def acknowledgments_yaml(version: str, *, indent: str = "  ") -> str:
    """The ``acknowledged_advisories`` entries a release needs to build: every critical advisory affecting
    it that a SageMaker deployment reaches, each with the scaffold's reason (a YAML anchor, then aliases)."""
    critical = [a for a in advisories.affecting(version) if a.band == "critical" and a.reachable_on_sagemaker]
    reason = (
        f"scaffold default: {version} is the release whose ONNX Runtime the local server also runs, so "
        "cdk-triton serve loads what this project builds; the endpoint is reached only through "
        "InvokeEndpoint (IAM); target a fixed release before serving untrusted traffic"
    )
    lines = []
    for i, a in enumerate(sorted(critical, key=lambda a: a.cve)):
        value = f'&reason "{reason}"' if i == 0 else "*reason"
        lines.append(f"{indent}{a.cve}: {value}")
    return "\n".join(lines) if lines else f"{indent}{{}}"


def _project_name(directory: Path) -> str:
    name = re.sub(r"[^a-z0-9-]+", "-", directory.resolve().name.lower()).strip("-")
    return name or "triton-app"


def _stack_class(project: str) -> str:
    words = [w for w in re.split(r"[^a-zA-Z0-9]+", project) if w]
    name = "".join(w[:1].upper() + w[1:] for w in words) or "TritonApp"
    return (name if name[0].isalpha() else f"App{name}") + "Stack"


def scaffold_mode(word: str) -> modes.HostingMode | None:
    """The hosting mode ``--mode`` names (any word the registry resolves), when the scaffold has a
    template for it; None otherwise."""
    row = modes.resolve(word)
    return row if row is not None and row.name in TEMPLATES else None


def _check(directory: Path, mode: str, force: bool) -> None:
    problems = []
    if scaffold_mode(mode) is None:
        problems.append(
            TritonValidationError(
                "UnknownScaffoldMode",
                prop="mode",
                value=mode,
                problem="is not a hosting mode the scaffold has a template for",
                allowed=", ".join(f"{name} ({modes.get(name).aliases[0]})" for name in TEMPLATES),
                fix=f"pass --mode {DEFAULT_MODE} (one model, a single-model endpoint) or --mode multi",
                path="cdk-triton init",
            )
        )
    if directory.exists() and not directory.is_dir():
        problems.append(
            TritonValidationError(
                "ScaffoldTargetNotADirectory",
                prop="directory",
                value=str(directory),
                problem="exists and is not a directory",
                allowed="a new or empty directory",
                fix="name a directory that does not exist yet",
                path="cdk-triton init",
            )
        )
    elif directory.is_dir() and not force and any(directory.iterdir()):
        held = sorted(p.name for p in directory.iterdir())
        problems.append(
            TritonValidationError(
                "ScaffoldDirectoryNotEmpty",
                prop="directory",
                value=f"{directory} (holds {', '.join(held[:5])}{', ...' if len(held) > 5 else ''})",
                problem="is not empty",
                allowed="a new or empty directory",
                fix="name a new directory, or pass --force to write the scaffold's files over what is there "
                "(other files are kept)",
                path="cdk-triton init",
            )
        )
    raise_all(problems)


def render(template: str, values: dict[str, str]) -> str:
    """A template's text with every ``{{name}}`` replaced; an unknown name is a bug (KeyError)."""
    text = importlib.resources.files("cdk_triton.scaffold").joinpath("templates", template).read_text()
    return re.sub(r"\{\{([a-z_]+)\}\}", lambda m: values[m.group(1)], text)


def init_project(directory: str | Path, *, mode: str = DEFAULT_MODE, force: bool = False) -> ScaffoldResult:
    """Write a new cdk-triton project into ``directory``.

    Args:
        directory: where to write; created if missing. It must be empty unless ``force``.
        mode: the hosting mode, any word ``config.modes`` resolves: ``single`` / ``SingleModel`` (one
            ONNX model, a single-model endpoint) or ``multi`` / ``MultiModel`` (the model as ONNX and
            TorchScript behind a multi-model endpoint). Default: ``single``.
        force: write the scaffold's files into a non-empty directory, replacing files of the same names
            and keeping the others. Default: refuse a non-empty directory.

    Returns:
        The directory and the files written (relative paths), in writing order.

    Raises:
        TritonValidationError: ``UnknownScaffoldMode``, ``ScaffoldTargetNotADirectory`` or
            ``ScaffoldDirectoryNotEmpty``, before anything is written.
    """
    directory = Path(directory)
    _check(directory, mode, force)
    row = scaffold_mode(mode)
    assert row is not None  # _check refused anything else
    yaml_template, endpoint, invoke_args = TEMPLATES[row.name]
    project = _project_name(directory)
    version = tables.DEFAULT_TRITON_VERSION
    values = {
        "project": project,
        "mode": row.name,
        "version": cdk_triton.__version__,
        "triton_version": version,
        "acknowledged_advisories": acknowledgments_yaml(version),
        "cdk_cli_version": CDK_CLI_VERSION,
        "cdk_nag_version": CDK_NAG_VERSION,
        "pytest_version": PYTEST_VERSION,
        "endpoint": endpoint,
        "invoke_args": invoke_args,
        "instance_type": INSTANCE_TYPE,
        "stack_class": _stack_class(project),
    }
    rendered = {target: render(template, values) for template, target in FILES.items()}
    rendered["build/models.yaml"] = render(yaml_template, values)
    written = []
    for target in sorted(rendered, key=lambda t: (t.count("/"), t)):
        path = directory / target
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(rendered[target])
        written.append(target)
    return ScaffoldResult(directory=directory, files=tuple(written), mode=row.name)
