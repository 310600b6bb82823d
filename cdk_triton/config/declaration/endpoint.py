"""The endpoint declaration: which models one endpoint packages, for which instance types, how."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from cdk_triton.config.declaration.vocabulary import PACKAGINGS
from cdk_triton.config.manifest import MULTI_MODEL, SINGLE_MODEL
from cdk_triton.config.parse import Errors, check_keys, is_mapping, one_of, typed


@dataclass(frozen=True, kw_only=True, slots=True)
class EndpointSpec:
    """One endpoint's packaging.

    Attributes:
        name: the endpoint key (the constructs look it up in the manifest).
        mode: SingleModel or MultiModel.
        instance_types: the instance types it is packaged for (TensorRT plans must match their GPU).
        models: SME: the repository's models (ensembles bring their steps); MME: one TargetModel
            archive per entry (an ensemble with its steps in one archive).
        default_model: SME: the model behind ``/invocations``. Default: the only top-level model.
        packaging: SME: directory (uncompressed S3 prefix) or tar.gz. Default: directory.
        inference_ami_version: the host image (``InferenceAmiVersion``) the endpoint's production
            variant pins, carried through the manifest; a ``TritonEndpoint(inference_ami_version=...)``
            prop wins over it. Default: the host decision of ``config.gpu_hosts``.
    """

    name: str
    mode: str
    instance_types: tuple[str, ...]
    models: tuple[str, ...]
    default_model: str | None = None
    packaging: str = "directory"
    inference_ami_version: str | None = None

    @property
    def is_multi_model(self) -> bool:
        return self.mode == MULTI_MODEL

    @classmethod
    def from_dict(cls, d: Any, path: str, errs: Errors) -> EndpointSpec | None:
        if not is_mapping(d, path, "endpoint", "name, mode, instance_types, models", errs):
            return None
        check_keys(d, cls, path, errs)
        name = typed(d, "name", str, path, errs, required=True)
        mode = typed(d, "mode", str, path, errs, required=True)
        aliases = {"single": SINGLE_MODEL, "sme": SINGLE_MODEL, "multi": MULTI_MODEL, "mme": MULTI_MODEL}
        mode = aliases.get(str(mode).lower(), mode) if mode else mode
        if mode is not None:
            one_of(
                errs,
                path,
                "mode",
                mode,
                (SINGLE_MODEL, MULTI_MODEL),
                "UnknownEndpointMode",
                "an endpoint mode",
                "use SingleModel or MultiModel",
            )
        its = typed(d, "instance_types", list, path, errs, required=True) or []
        models = typed(d, "models", list, path, errs, required=True) or []
        packaging = typed(d, "packaging", str, path, errs, default="directory")
        one_of(
            errs, path, "packaging", packaging, PACKAGINGS, "InvalidPackaging", "a packaging", "use directory"
        )
        if mode == MULTI_MODEL and "packaging" in d and packaging != "tar.gz":
            errs.add(
                "InvalidPackaging",
                f"{path}.packaging",
                "packaging",
                packaging,
                "is not possible for a multi-model endpoint",
                "tar.gz (one archive per target model)",
                "remove packaging",
            )
        if name is None or mode is None:
            return None
        return cls(
            name=name,
            mode=mode,
            instance_types=tuple(str(x) for x in its),
            models=tuple(str(m) for m in models),
            default_model=typed(d, "default_model", str, path, errs),
            packaging="tar.gz" if mode == MULTI_MODEL else packaging,
            inference_ami_version=typed(d, "inference_ami_version", str, path, errs),
        )
