"""Model declarations: what the build stage turns into Triton model repositories.

A Python API of frozen dataclasses, and ``BuildSpec.from_dict`` which maps the GitOps YAML file
(``build/models.yaml``) onto it one to one: every YAML key is a dataclass field of the same name.
Unknown keys are errors naming their path (``models[2].inputs[0].dtype``) and the closest valid key.
Validation is eager: every problem is collected and raised once (TritonValidationErrors).

One module per concern (see ``cdk_triton/config/README.md``): ``vocabulary`` (dtypes, formats,
PyTorch parameters), ``tensors``, ``source``, ``options`` (batching, instance groups, warm-up, ONNX,
TensorRT, sample), ``sequence`` (sequence batching), ``model``, ``endpoint``, ``build`` (the whole declaration) and ``rules`` (the
cross-reference rules, one function each, and their order; ``graph_rules``: ensemble steps and calls,
``component_rules``: InferenceComponents endpoints, ``rule_kit``: their types and helpers). The parse kit
is ``cdk_triton.config.parse``.
Every public name is re-exported here: import from ``cdk_triton.config.declaration``.

Standard library only: the build stage (``cdk_triton.builder``) does the side effects.
"""

from __future__ import annotations

from cdk_triton.config.declaration.build import BuildSpec
from cdk_triton.config.declaration.endpoint import EndpointSpec
from cdk_triton.config.declaration.model import EnsembleStep, ModelSpec
from cdk_triton.config.declaration.options import (
    DynamicBatching,
    InstanceGroup,
    OnnxOptions,
    SampleSpec,
    TensorRTOptions,
    Warmup,
)
from cdk_triton.config.declaration.sequence import (
    ControlInputs,
    OldestStrategy,
    SequenceBatching,
    SequenceState,
)
from cdk_triton.config.declaration.source import ModelSource
from cdk_triton.config.declaration.tensors import ShapeRange, TensorSpec
from cdk_triton.config.declaration.view import RawDeclaration
from cdk_triton.config.declaration.vocabulary import (
    DTYPES,
    INSTANCE_KINDS,
    ONNX_EXPORTERS,
    PACKAGINGS,
    PRECISIONS,
    PYTORCH_PARAMETERS,
    PYTORCH_REMOVED_PARAMETERS,
    TORCHSCRIPT_MODES,
    WARMUP_DATA,
)

__all__ = [
    "RawDeclaration",
    "DTYPES",
    "INSTANCE_KINDS",
    "ONNX_EXPORTERS",
    "PACKAGINGS",
    "PRECISIONS",
    "PYTORCH_PARAMETERS",
    "PYTORCH_REMOVED_PARAMETERS",
    "TORCHSCRIPT_MODES",
    "WARMUP_DATA",
    "BuildSpec",
    "ControlInputs",
    "DynamicBatching",
    "EndpointSpec",
    "EnsembleStep",
    "InstanceGroup",
    "ModelSource",
    "ModelSpec",
    "OldestStrategy",
    "OnnxOptions",
    "SampleSpec",
    "SequenceBatching",
    "SequenceState",
    "ShapeRange",
    "TensorRTOptions",
    "TensorSpec",
    "Warmup",
]
