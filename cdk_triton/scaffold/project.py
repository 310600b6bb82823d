"""What ``cdk-triton init`` writes: a new project from the templates shipped as package data.

:func:`init_project` renders ``templates/*.tmpl`` (``{{name}}`` placeholders) into a directory: the
model declaration and its factory, the CDK app, ``cdk.json``, ``package.json`` pinning the CDK CLI, a
Makefile with ``make demo`` and ``make test``, a test, a README and ignore rules. Every check runs before
the first file is written. The project targets ``config.default_release.init_release()``: the newest
SageMaker Triton release with no critical advisory a SageMaker deployment reaches, pinned to the
InferenceAmiVersion whose driver runs it, on an instance family with the strongest evidence that SageMaker
accepts that AMI; ``models.yaml`` says per family what is confirmed, third-party or unknown.
"""

from __future__ import annotations

import importlib.resources
import re
import textwrap
from dataclasses import dataclass
from pathlib import Path

import cdk_triton
from cdk_triton.config import advisories, default_release, modes, tables
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
#: The instance type of the scaffold's endpoint before issue 42 (a CPU one); kept for compatibility: the
#: scaffold now declares ``default_release.init_release().instance_type`` (a GPU type the AMI runs on).
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
    it that a SageMaker deployment reaches, each with the scaffold's reason (a YAML anchor, then aliases).
    ``{}`` for a release without one (what ``init`` declares)."""
    critical = [a for a in advisories.affecting(version) if a.band == "critical" and a.reachable_on_sagemaker]
    reason = (
        f"accepted for {version} in this project: the endpoint is reached only through InvokeEndpoint (IAM); "
        "target a fixed release before serving untrusted traffic"
    )
    lines = []
    for i, a in enumerate(sorted(critical, key=lambda a: a.cve)):
        value = f'&reason "{reason}"' if i == 0 else "*reason"
        lines.append(f"{indent}{a.cve}: {value}")
    return "\n".join(lines) if lines else f"{indent}{{}}"


def evidence_comment(
    init: default_release.InitRelease,
    *,
    instance_type: str | None = None,
    prefix: str = "# ",
    width: int = 110,
) -> str:
    """The ``models.yaml`` comment: the host image, then per instance family what is known of it there
    (confirmed by an AWS document, third-party evidence with its sources, or unknown)."""
    sources = {s["source"]: s for s in default_release.third_party_evidence(init.inference_ami_version)}
    by_level: dict[tuple[str, tuple[str, ...]], list[str]] = {}
    for e in init.evidence:
        by_level.setdefault((e.level, e.third_party), []).append(e.family)
    items = [
        f"Triton {init.release} (CUDA {init.cuda}) needs NVIDIA driver >= 580, which "
        f"{init.inference_ami_version} has (driver {init.driver}). The instance families SageMaker accepts "
        "it on, per the vendored facts:"
    ]
    confirmed = [f for (level, _), fs in by_level.items() if level == "confirmed" for f in fs]
    items.append("- confirmed (an AWS document lists the family): " + (", ".join(confirmed) or "none"))
    shown: set[str] = set()
    for (level, names), families in by_level.items():
        if level != "third-party":
            continue
        said = "; ".join(
            n if n in shown else f"{n}: {sources[n]['shows']} (found {sources[n]['found']})" for n in names
        )
        shown.update(names)
        items.append(f"- third-party only ({', '.join(families)}): {said}")
    unknown = [f for (level, _), fs in by_level.items() if level == "unknown" for f in fs]
    items.append("- unknown (no source): " + (", ".join(unknown) or "none"))
    items.append(
        f"{instance_type or init.instance_type}: a family with the strongest evidence "
        f"({', '.join(init.strongest)}). "
        "CreateEndpointConfig refuses the AMI on a family SageMaker does not accept."
    )
    lines: list[str] = []
    for item in items:
        hang = "  " if item.startswith("- ") else ""
        lines += textwrap.wrap(item, width=width - len(prefix), subsequent_indent=hang)
    return "\n".join(prefix + line for line in lines)


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


def check_release_string(release: str) -> None:
    """``cdk-triton advisories --release``: a Triton release string (YY.MM)."""
    if not tables.is_valid_version_string(release):
        raise TritonValidationError(
            "InvalidReleaseString",
            prop="release",
            value=release,
            problem="is not a Triton release string",
            allowed=f"YY.MM, e.g. {tables.DEFAULT_TRITON_VERSION} or {default_release.init_release().release}",
            fix=f"pass --release {default_release.init_release().release}",
            path="cdk-triton advisories",
        )


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
    init = default_release.init_release()
    version = init.release
    instance_type = default_release.init_instance_type(multi_model=row.loads_on_demand)
    values = {
        "project": project,
        "mode": row.name,
        "version": cdk_triton.__version__,
        "triton_version": version,
        "default_triton_version": tables.DEFAULT_TRITON_VERSION,
        "inference_ami_version": init.inference_ami_version,
        "host_evidence": evidence_comment(init, instance_type=instance_type, prefix="    # "),
        "acknowledged_advisories": acknowledgments_yaml(version),
        "cdk_cli_version": CDK_CLI_VERSION,
        "cdk_nag_version": CDK_NAG_VERSION,
        "pytest_version": PYTEST_VERSION,
        "endpoint": endpoint,
        "invoke_args": invoke_args,
        "instance_type": instance_type,
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
