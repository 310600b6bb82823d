"""The build declaration: the whole ``models.yaml`` (target release, artifact location, models,
endpoints) and :meth:`BuildSpec.from_dict`, which parses it and runs the cross-reference rules."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from cdk_triton.config import advisories, default_release, tables
from cdk_triton.config.arns import check_kms_key_arn
from cdk_triton.config.declaration.endpoint import EndpointSpec
from cdk_triton.config.declaration.model import ModelSpec
from cdk_triton.config.declaration.rules import run_rules
from cdk_triton.config.declaration.view import closure_of, loaded_at_start
from cdk_triton.config.manifest import ArtifactLocation
from cdk_triton.config.parse import Errors, check_keys, typed
from cdk_triton.errors import TritonValidationError, raise_all


@dataclass(frozen=True, kw_only=True, slots=True)
class BuildSpec:
    """The whole declaration: target Triton release, artifact location, models and endpoints.

    ``base_dir``: the directory factory references and source paths resolve against (the YAML
    file's directory). Default: the current directory.
    """

    triton_version: str = tables.DEFAULT_TRITON_VERSION
    artifact_location: ArtifactLocation
    models: tuple[ModelSpec, ...]
    endpoints: tuple[EndpointSpec, ...] = ()
    #: CVE id -> why its risk is accepted (``config.advisories``: the build and the manifest carry them)
    acknowledged_advisories: dict[str, str] = field(default_factory=dict)
    #: False refuses the library's acknowledgment of the default release's advisories
    #: (``config.default_release``): its critical ones are then errors until acknowledged here
    library_acknowledgments: bool = True
    base_dir: str = "."
    #: name -> model, built once (a fleet's build looks models up by name thousands of times)
    _by_name: dict[str, ModelSpec] = field(init=False, repr=False, compare=False, default_factory=dict)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_by_name", {m.name: m for m in reversed(self.models)})  # the first wins

    def model(self, name: str) -> ModelSpec:
        m = self._by_name.get(name)
        if m is None:
            raise KeyError(name)
        return m

    @property
    def model_names(self) -> list[str]:
        return [m.name for m in self.models]

    def closure(self, name: str) -> list[str]:
        """The model and every model it needs (an ensemble's steps, a python model's ``calls``),
        recursively, the model first."""
        return closure_of(name, lambda n: self.model(n).dependencies)

    def loaded_at_start(self, name: str) -> list[str]:
        """The callees a single-model endpoint whose default model is ``name`` loads at start beside it
        (``view.loaded_at_start``: ``--load-model`` loads an ensemble's steps, not a python model's calls)."""
        return loaded_at_start(
            name, lambda n: [s.model for s in self.model(n).steps], lambda n: self.model(n).calls
        )

    def resolve_path(self, relative: str) -> Path:
        return (Path(self.base_dir) / relative).resolve()

    @classmethod
    def from_dict(
        cls,
        data: Any,
        *,
        base_dir: str | Path = ".",
        source: str | None = None,
        artifact_location: str | None = None,
    ) -> BuildSpec:
        """Parse and validate a declaration (the YAML document); raises every problem at once.

        ``artifact_location`` overrides the declared location (``--artifact-location`` or the
        ``CDK_TRITON_ARTIFACT_LOCATION`` environment variable).
        """
        errs = Errors(source)
        if not isinstance(data, dict):
            errs.add(
                "InvalidType",
                "$",
                "declaration",
                type(data).__name__,
                "is not a mapping",
                "triton_version, artifact_location, models, endpoints",
                "write a YAML mapping",
            )
            raise_all(errs.items)
        check_keys(data, cls, "", errs, extra=("kms_key_arn",))
        version = _triton_version(data, errs)
        acks = typed(data, advisories.ACKNOWLEDGMENT_KEY, dict, "", errs, default={}) or {}
        errs.items += advisories.check_acknowledgments(acks, path=errs.where(advisories.ACKNOWLEDGMENT_KEY))
        library = typed(data, default_release.KEY, bool, "", errs, default=True)
        location = _artifact_location(data, artifact_location, errs)
        raw_models = typed(data, "models", list, "", errs, required=True) or []
        models = [
            m for m in (ModelSpec.from_dict(m, f"models[{i}]", errs) for i, m in enumerate(raw_models)) if m
        ]
        raw_endpoints = typed(data, "endpoints", list, "", errs, default=[])
        endpoints = [
            e
            for e in (EndpointSpec.from_dict(e, f"endpoints[{i}]", errs) for i, e in enumerate(raw_endpoints))
            if e
        ]
        build = cls(
            triton_version=version,
            artifact_location=location,
            models=tuple(models),
            endpoints=tuple(endpoints),
            acknowledged_advisories={str(k): str(v) for k, v in acks.items()},
            library_acknowledgments=library is not False,
            base_dir=str(Path(base_dir).resolve()),
        )
        errs.extend(run_rules(build))
        raise_all(errs.items)
        return build


def _triton_version(data: dict[str, Any], errs: Errors) -> str:
    """The declared release (default: DEFAULT_TRITON_VERSION); an error when the tables lack it."""
    version: str = typed(data, "triton_version", str, "", errs, default=tables.DEFAULT_TRITON_VERSION)
    try:
        tables.release(version)
    except TritonValidationError as exc:
        errs.items.append(exc.at(errs.where("triton_version")))
    return version


def _artifact_location(data: dict[str, Any], override: str | None, errs: Errors) -> ArtifactLocation:
    """``override`` or the declared ``artifact_location`` (an S3 URI) with ``kms_key_arn``."""
    loc_raw = override or data.get("artifact_location")
    kms = typed(data, "kms_key_arn", str, "", errs)
    if kms is not None and (bad := check_kms_key_arn(kms, prop="kms_key_arn")) is not None:
        errs.items.append(bad.at(errs.where("kms_key_arn")))
        kms = None
    if loc_raw is None:
        errs.add(
            "MissingField",
            "artifact_location",
            "artifact_location",
            None,
            "is required",
            "s3://bucket/prefix",
            "declare where artifacts go (S3 URIs are computed without uploading)",
        )
    elif isinstance(loc_raw, str):
        try:
            location = ArtifactLocation.from_uri(loc_raw, kms_key_arn=kms)
            if not location.bucket:
                raise TritonValidationError(
                    "InvalidS3Uri",
                    prop="artifact_location",
                    value=loc_raw,
                    problem="has no bucket",
                    allowed="s3://bucket/prefix",
                    fix="write the bucket name",
                )
            return location
        except TritonValidationError as exc:
            errs.items.append(exc.at(errs.where("artifact_location")))
    else:
        errs.add(
            "InvalidType",
            "artifact_location",
            "artifact_location",
            loc_raw,
            "is not an S3 URI string",
            "s3://bucket/prefix",
            "write the location as one string",
        )
    return ArtifactLocation(bucket="unset")
