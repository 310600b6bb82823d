"""Load ``models.yaml`` into a :class:`~cdk_triton.config.declaration.BuildSpec` (one to one)."""

from __future__ import annotations

import os
from pathlib import Path

import yaml

from cdk_triton.config.declaration import BuildSpec
from cdk_triton.config.declaration.file import invalid_yaml, read_declaration_text

#: environment variable overriding the declared artifact location (s3://bucket/prefix)
ARTIFACT_LOCATION_ENV = "CDK_TRITON_ARTIFACT_LOCATION"


def load_spec(config_path: str | os.PathLike[str], *, artifact_location: str | None = None) -> BuildSpec:
    """Parse and validate the declaration file; factory references resolve relative to its directory.

    The artifact location is, in order: ``artifact_location``, ``$CDK_TRITON_ARTIFACT_LOCATION``,
    the file's ``artifact_location``.
    """
    path = Path(config_path)
    text = read_declaration_text(path)
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise invalid_yaml(path, exc) from None
    override = artifact_location or os.environ.get(ARTIFACT_LOCATION_ENV) or None
    return BuildSpec.from_dict(data, base_dir=path.parent, source=str(path), artifact_location=override)
