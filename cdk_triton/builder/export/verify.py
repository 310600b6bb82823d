"""CPU runners for parity checks: the eager reference of a model (by its source kind) and its built
artifact (by its format's exporter).

A runner maps named numpy inputs to named outputs; ensembles chain the runners of their steps.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from cdk_triton.builder.context import BuildContext
from cdk_triton.builder.export.base import exporter_of, file_runner
from cdk_triton.builder.reference import Runner, build_eager, torch_runner
from cdk_triton.config.declaration import ModelSpec
from cdk_triton.errors import BuildError

if TYPE_CHECKING:
    import numpy as np


def reference_runner(ctx: BuildContext, m: ModelSpec) -> Runner:
    """The eager model (factory), the given TorchScript / ONNX file, or else the built artifact."""
    if m.name in ctx.runners:
        return ctx.runners[m.name]
    src = m.source
    assert src is not None
    if src.factory:
        runner = torch_runner(build_eager(ctx.spec, m), m)
    elif src.torchscript or src.onnx:  # the given file, read back by the format of that name
        path = ctx.spec.resolve_path(src.torchscript or src.onnx or "")
        runner = file_runner(src.kind, path, m)
    else:
        runner = artifact_runner(ctx, m)
    ctx.runners[m.name] = runner
    return runner


def artifact_runner(ctx: BuildContext, m: ModelSpec) -> Runner:
    """A CPU runner of the built artifact (from the cache), by the format's exporter."""
    p = ctx.resolved[m.name]
    assert p.record is not None
    return exporter_of(m).artifact_runner(ctx, m, ctx.cache.entry_dir(m.name, p.key))


def chain(ctx: BuildContext, m: ModelSpec, runner_of: Callable[[ModelSpec], Runner]) -> Runner:
    """Run an ensemble step by step, each step with ``runner_of(step model)``."""

    def run(inputs: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        env = dict(inputs)
        for s in m.steps:
            step = ctx.spec.model(s.model)
            out = runner_of(step)({k: env[v] for k, v in s.input_map.items()})
            for k, v in s.output_map.items():
                env[v] = out[k]
        return {t.name: env[t.name] for t in m.outputs}

    return run


def guarded(runner: Runner, m: ModelSpec) -> Runner:
    """Turn a failure of the eager model on the declared sample into BuildError(EagerRunFailed)."""

    def run(inputs: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        try:
            return runner(inputs)
        except BuildError:
            raise
        except Exception as exc:
            shapes = {k: [*v.shape] for k, v in inputs.items()}
            raise BuildError(
                f"model '{m.name}': the eager model fails on the declared sample input {shapes}: {exc!r}; "
                "check the declared inputs (dtype, shape without the batch dim, max_batch_size)",
                code="EagerRunFailed",
            ) from exc

    return run
