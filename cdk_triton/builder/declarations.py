"""Load ``models.yaml`` into a :class:`~cdk_triton.config.declaration.BuildSpec` (one to one)."""

from __future__ import annotations

import os
from pathlib import Path

import yaml

from cdk_triton.config.declaration import BuildSpec
from cdk_triton.errors import TritonValidationError

#: environment variable overriding the declared artifact location (s3://bucket/prefix)
ARTIFACT_LOCATION_ENV = "CDK_TRITON_ARTIFACT_LOCATION"


def load_spec(config_path: str | os.PathLike[str], *, artifact_location: str | None = None) -> BuildSpec:
    """Parse and validate the declaration file; factory references resolve relative to its directory.

    The artifact location is, in order: ``artifact_location``, ``$CDK_TRITON_ARTIFACT_LOCATION``,
    the file's ``artifact_location``.
    """
    path = Path(config_path)
    if not path.is_file():
        raise TritonValidationError(
            "DeclarationNotFound",
            prop="config",
            value=str(path),
            problem="does not exist",
            allowed="a models.yaml file",
            fix="pass --config build/models.yaml",
        )
    try:
        data = yaml.safe_load(path.read_text("utf-8"))
    except yaml.YAMLError as exc:
        raise invalid_yaml(path, exc) from None
    override = artifact_location or os.environ.get(ARTIFACT_LOCATION_ENV) or None
    return BuildSpec.from_dict(data, base_dir=path.parent, source=str(path), artifact_location=override)


def invalid_yaml(path: Path, exc: Exception) -> TritonValidationError:
    """The InvalidYaml error of a declaration file a YAML parser refused (PyYAML or ruamel.yaml)."""
    return TritonValidationError(
        "InvalidYaml",
        prop="config",
        value=str(path),
        problem=f"is not valid YAML ({exc})".replace("\n", " "),
        allowed="YAML",
        fix="fix the syntax at the position shown",
        path=str(path),
    )
