"""Where a model comes from: a factory (module:callable + seed) or a TorchScript/ONNX/python file."""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import Any

from cdk_triton.config.declaration.vocabulary import SOURCE_KINDS
from cdk_triton.config.parse import Errors, check_keys, is_mapping, typed


@dataclass(frozen=True, kw_only=True, slots=True)
class ModelSource:
    """Where a model comes from: exactly one of ``factory``, ``torchscript``, ``onnx``, ``python``.

    Attributes:
        factory: ``module:callable`` returning an ``nn.Module``; the module is imported relative to
            the YAML file's directory.
        kwargs: keyword arguments of the factory. Default: none.
        seed: the torch seed set before the factory runs (required for a factory).
        state_dict: a ``torch.save``d state_dict file loaded into the factory's module. Default: none.
        torchscript: a TorchScript file. onnx: an ONNX file. python: a Python-backend model directory
            (holding ``model.py``) or a ``model.py`` file.

    For file sources the file itself is the reference: parity then checks that the artifact runs
    and that its outputs match the declaration.
    """

    factory: str | None = None
    kwargs: dict[str, Any] = field(default_factory=dict)
    seed: int | None = None
    state_dict: str | None = None
    torchscript: str | None = None
    onnx: str | None = None
    python: str | None = None

    @property
    def kind(self) -> str:
        for k in SOURCE_KINDS:
            if getattr(self, k):
                return k
        return "none"

    @property
    def path(self) -> str | None:
        return self.torchscript or self.onnx or self.python

    def to_dict(self) -> dict[str, Any]:
        return {
            f.name: getattr(self, f.name) for f in fields(self) if getattr(self, f.name) not in (None, {}, ())
        }

    @classmethod
    def from_dict(cls, d: Any, path: str, errs: Errors) -> ModelSource | None:
        if not is_mapping(
            d, path, "source", "factory (+kwargs, seed, state_dict), torchscript, onnx or python", errs
        ):
            return None
        check_keys(d, cls, path, errs)
        src = cls(
            factory=typed(d, "factory", str, path, errs),
            kwargs=typed(d, "kwargs", dict, path, errs, default={}),
            seed=typed(d, "seed", int, path, errs),
            state_dict=typed(d, "state_dict", str, path, errs),
            torchscript=typed(d, "torchscript", str, path, errs),
            onnx=typed(d, "onnx", str, path, errs),
            python=typed(d, "python", str, path, errs),
        )
        kinds = [k for k in SOURCE_KINDS if getattr(src, k)]
        if len(kinds) != 1:
            errs.add(
                "InvalidSource",
                path,
                "source",
                sorted(d),
                "must name exactly one kind of source",
                "factory, torchscript, onnx or python",
                "keep one of them",
            )
            return None
        if src.factory is not None:
            mod, sep, attr = src.factory.partition(":")
            if (
                not sep
                or not mod
                or not attr
                or not all(p.isidentifier() for p in mod.split("."))
                or not all(p.isidentifier() for p in attr.split("."))
            ):
                errs.add(
                    "InvalidFactoryReference",
                    f"{path}.factory",
                    "factory",
                    src.factory,
                    "is not a 'module:callable' reference",
                    "module:callable (e.g. example_models:resnet)",
                    "write the module path, a colon and the callable's name",
                )
            if src.seed is None:
                errs.add(
                    "MissingSeed",
                    f"{path}.seed",
                    "seed",
                    None,
                    "is required for a factory",
                    "an integer",
                    "add 'seed: 0' so weights and samples are reproducible",
                )
        elif src.seed is not None or src.kwargs or src.state_dict:
            errs.add(
                "InvalidSource",
                path,
                "source",
                sorted(d),
                "has factory options without a factory",
                "kwargs, seed and state_dict only with factory",
                "remove them",
            )
        return src
