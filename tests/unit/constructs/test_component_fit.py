"""One memory rule for a component at build, synth and serve: the same manifest, the same verdict at the edge.

A component's ``MinMemoryRequiredInMb`` (declared, else ``config.sizing.component_memory_mb`` of its
models' recorded memory) is judged against one ml.g5.xlarge (16 GiB host memory) by the build's
components step, the components endpoint construct and the local components endpoint: at exactly the
host memory all three accept it, one MB over all three refuse it with ``ComponentDoesNotFit``.
"""

from __future__ import annotations

import math
from typing import Any

import pytest

from cdk_triton.builder import components as build_components
from cdk_triton.config import sizing, tables
from cdk_triton.config.components import ComponentValues
from cdk_triton.config.declaration import EndpointSpec
from cdk_triton.config.declaration.component_rules import check_components_fit
from cdk_triton.config.manifest import Manifest
from cdk_triton.constructs import ModelArtifacts, TritonComponentsEndpoint
from cdk_triton.errors import TritonValidationError
from cdk_triton.local import components as local_components
from tests.unit.constructs.support import manifest_with, new_stack, with_components

INSTANCE = "ml.g5.xlarge"
HOST_MB = tables.instance_type_info(INSTANCE).host_memory_gib * 1024  # type: ignore[union-attr]


def _bytes_for(mb: int) -> int:
    """The model bytes whose derived requirement is exactly ``mb``."""
    need = math.floor(mb * sizing.MiB / sizing.COMPONENT_MEMORY_HEADROOM) - sizing.SERVER_HOST_BYTES
    assert sizing.component_memory_mb([(need, 1)]) == mb
    return need


def _manifest(*, derived_mb: int | None = None, declared_mb: int | None = None) -> Manifest:
    def mutate(data: dict[str, Any]) -> None:
        with_components(data)
        if derived_mb is not None:
            data["models"]["resnet_ts"]["memory_bytes"] = _bytes_for(derived_mb)
        if declared_mb is not None:
            data["endpoints"]["components"]["components"]["resnet_ts"]["min_memory_mb"] = declared_mb

    return manifest_with(mutate)


def _codes(call: Any) -> set[str]:
    try:
        call()
    except TritonValidationError as e:
        return {p.code for p in getattr(e, "problems", None) or [e]}
    return set()


def _verdicts(manifest: Manifest) -> dict[str, set[str]]:
    entry = manifest.endpoints["components"]
    return {
        "build": {p.code for p in build_components.fit_problems([entry], manifest.models)},
        "synth": _codes(
            lambda: TritonComponentsEndpoint(
                new_stack(),
                "Components",
                artifacts=ModelArtifacts.from_manifest(manifest, "components"),
                instance_type=INSTANCE,
            )
        ),
        "serve": _codes(lambda: local_components.check_components_fit(manifest, entry, INSTANCE)),
    }


@pytest.mark.parametrize("how", ["derived", "declared"])
@pytest.mark.parametrize(("over", "expected"), [(0, set()), (1, {"ComponentDoesNotFit"})])
def test_build_synth_and_serve_agree_at_the_edge(how: str, over: int, expected: set[str]) -> None:
    mb = HOST_MB + over
    manifest = _manifest(derived_mb=mb) if how == "derived" else _manifest(declared_mb=mb)
    entry = manifest.endpoints["components"]
    models = [manifest.models[m] for m in entry.target_models["resnet_ts"].models]
    assert sizing.component_min_memory_mb(entry.components["resnet_ts"].min_memory_mb, models) == mb
    assert _verdicts(manifest) == {"build": expected, "synth": expected, "serve": expected}


@pytest.mark.parametrize(("over", "expected"), [(0, set()), (1, {"ComponentDoesNotFit"})])
def test_the_declaration_check_before_the_build_agrees_on_a_declared_memory(
    over: int, expected: set[str]
) -> None:
    """models.yaml's ``memory_mb`` is judged before anything is built by the same ``fit_problems``."""
    spec = EndpointSpec(
        name="ics",
        mode="InferenceComponents",
        instance_types=(INSTANCE,),
        models=("resnet_ts",),
        components={"resnet_ts": ComponentValues(memory_mb=HOST_MB + over)},
    )
    assert {p.code for p in check_components_fit(None, 0, spec)} == expected
