"""Load ``models.yaml`` into a :class:`~cdk_triton.config.declaration.BuildSpec` (one to one)."""

from __future__ import annotations

import os
from pathlib import Path

import yaml

from cdk_triton._deprecation import deprecated_function
from cdk_triton.config.declaration import BuildSpec
from cdk_triton.config.declaration.file import invalid_yaml, read_declaration_text

#: PyYAML's libyaml (C) safe loader where PyYAML was built with it, else the pure-Python one: the same
#: documents and errors, about 10x faster on a fleet-sized models.yaml
SAFE_LOADER: type[yaml.SafeLoader] = getattr(yaml, "CSafeLoader", yaml.SafeLoader)

#: environment variable overriding the declared artifact location (s3://bucket/prefix)
ARTIFACT_LOCATION_ENV = "CDK_TRITON_ARTIFACT_LOCATION"


def load_declaration(
    config_path: str | os.PathLike[str], *, artifact_location: str | None = None
) -> BuildSpec:
    """Parse and validate the declaration file; factory references resolve relative to its directory.

    The artifact location is, in order: ``artifact_location``, ``$CDK_TRITON_ARTIFACT_LOCATION``,
    the file's ``artifact_location``.
    """
    path = Path(config_path)
    text = read_declaration_text(path)
    try:
        data = yaml.load(text, Loader=SAFE_LOADER)  # noqa: S506 (a safe loader)
    except yaml.YAMLError as exc:
        raise invalid_yaml(path, exc) from None
    override = artifact_location or os.environ.get(ARTIFACT_LOCATION_ENV) or None
    return BuildSpec.from_dict(data, base_dir=path.parent, source=str(path), artifact_location=override)


#: The former name (the glossary: "spec" names only the five declaration classes).
load_spec = deprecated_function(
    load_declaration, old="cdk_triton.builder.declarations.load_spec", since="0.3.0"
)
