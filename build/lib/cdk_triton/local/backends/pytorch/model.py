"""CPU stand-in for Triton's PyTorch (libtorch) backend (serves ``platform: "pytorch_libtorch"``).

A python-based backend run by Triton's python backend. It follows libtorch's naming rules
(``<name>__<index>`` or the forward() argument names), and, because TorchScript carries no I/O
types, it checks the config with one warm-up inference at load time (data types, output count,
dims) instead of failing at the first request as libtorch does. Every request of one
``execute()`` call runs as one batch.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import sys
from typing import Any

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from cpu_backend import (  # noqa: E402
    BatchingModel,
    compare_dims,
    config_dims,
    model_file,
    server_type,
    thread_parameter,
)

_INDEXED = re.compile(r"^(.+)__(\d+)$")


def _torch_dtype(torch: Any, config_type: str) -> Any:
    return {
        "TYPE_BOOL": torch.bool,
        "TYPE_UINT8": torch.uint8,
        "TYPE_INT8": torch.int8,
        "TYPE_INT16": torch.int16,
        "TYPE_INT32": torch.int32,
        "TYPE_INT64": torch.int64,
        "TYPE_FP16": torch.float16,
        "TYPE_FP32": torch.float32,
        "TYPE_FP64": torch.float64,
        "TYPE_BF16": torch.bfloat16,
    }.get(config_type)


def _config_type(torch: Any, dtype: Any) -> str:
    for name in (
        "TYPE_BOOL",
        "TYPE_UINT8",
        "TYPE_INT8",
        "TYPE_INT16",
        "TYPE_INT32",
        "TYPE_INT64",
        "TYPE_FP16",
        "TYPE_FP32",
        "TYPE_FP64",
        "TYPE_BF16",
    ):
        if _torch_dtype(torch, name) == dtype:
            return name
    return str(dtype)


class TritonPythonModel(BatchingModel):
    """One TorchScript module per model instance, run under ``torch.inference_mode``."""

    def initialize(self, args: dict[str, Any]) -> None:
        import torch

        self.torch = torch
        self.config = json.loads(args["model_config"])
        super().initialize(args)
        path = model_file(args, self.config, "model.pt")
        if not os.path.exists(path):
            raise RuntimeError(
                f"unable to find '{path}' for model instance '{args.get('model_instance_name')}'"
            )
        intra = thread_parameter(self.config, "INTRA_OP_THREAD_COUNT")
        inter = thread_parameter(self.config, "INTER_OP_THREAD_COUNT")
        if intra:
            torch.set_num_threads(intra)
        if inter:
            with contextlib.suppress(RuntimeError):  # already set in this process
                torch.set_num_interop_threads(inter)
        self.module = torch.jit.load(path, map_location="cpu")
        self.module.eval()
        self.order = self._input_order()
        self._warm_up_and_validate()

    def _input_order(self) -> list[str]:
        """Config input names in forward() argument order, applying libtorch's naming rules."""
        name = self.name
        schema_args = [a.name for a in self.module.forward.schema.arguments[1:]]  # drop self
        cfg = [io["name"] for io in self.config.get("input", [])]
        if len(schema_args) != len(cfg):
            raise ValueError(
                f"unable to load model '{name}', configuration expects {len(cfg)} inputs, model provides "
                f"{len(schema_args)}"
            )
        if all(n in schema_args for n in cfg):
            return sorted(cfg, key=schema_args.index)
        positions: dict[int, str] = {}
        for io_name in cfg:
            m = _INDEXED.match(io_name)
            if m is None or int(m.group(2)) >= len(schema_args):
                raise ValueError(
                    f"input '{io_name}' is neither an input argument to the model nor does it follow the "
                    "<name>__<index> naming convention."
                )
            positions[int(m.group(2))] = io_name
        if sorted(positions) != list(range(len(cfg))):
            raise ValueError(
                f"model '{name}': input indices {sorted(positions)} do not cover 0..{len(cfg) - 1}"
            )
        return [positions[i] for i in range(len(cfg))]

    def _output_order(self) -> list[str]:
        names = [io["name"] for io in self.config.get("output", [])]
        indexed = [_INDEXED.match(n) for n in names]
        if all(indexed):
            return sorted(names, key=lambda n: int(_INDEXED.match(n).group(2)))  # type: ignore[union-attr]
        return names

    def _warm_up_and_validate(self) -> None:
        torch = self.torch
        cfg_in = {io["name"]: io for io in self.config.get("input", [])}
        feeds = []
        for io_name in self.order:
            io = cfg_in[io_name]
            dtype = _torch_dtype(torch, io["data_type"])
            if dtype is None:
                raise ValueError(
                    f"unsupported datatype {io['data_type']} for input '{io_name}' for model '{self.name}'"
                )
            shape = [1 if d == -1 else d for d in config_dims(io)]
            if self.max_batch_size > 0:
                shape = [1, *shape]
            feeds.append(torch.zeros(shape, dtype=dtype))
        try:
            with torch.inference_mode():
                outs = self._as_list(self.module(*feeds))
        except Exception as exc:
            raise ValueError(
                f"model '{self.name}': a warm-up inference with the configured input shapes and data types "
                f"failed (libtorch would fail the first request the same way): {exc}"
            ) from exc
        self.output_order = self._output_order()
        if len(outs) < len(self.output_order):
            raise ValueError(
                f"model '{self.name}': configuration expects {len(self.output_order)} outputs, model provides "
                f"{len(outs)}"
            )
        cfg_out = {io["name"]: io for io in self.config.get("output", [])}
        for io_name, tensor in zip(self.output_order, outs, strict=False):
            io = cfg_out[io_name]
            got = _config_type(torch, tensor.dtype)
            if got != io["data_type"]:
                # the text libtorch's ReadOutputTensors gives at the first request
                raise ValueError(
                    f"unexpected datatype {server_type(got)} for inference output '{io_name}', expecting "
                    f"{server_type(io['data_type'])}"
                )
            model_shape = list(tensor.shape)
            if self.max_batch_size > 0:
                model_shape = [-1, *model_shape[1:]]
            problem = compare_dims(self.name, io_name, model_shape, config_dims(io), self.max_batch_size)
            if problem:
                raise ValueError(problem)

    @staticmethod
    def _as_list(out: Any) -> list[Any]:
        if isinstance(out, (list, tuple)):
            return list(out)
        return [out]

    def run(self, feeds: dict[str, Any]) -> dict[str, Any]:
        torch = self.torch
        with torch.inference_mode():
            outs = self._as_list(self.module(*(torch.from_numpy(feeds[n]) for n in self.order)))
        return {n: t.numpy() for n, t in zip(self.output_order, outs, strict=False)}

    def finalize(self) -> None:
        self.module = None
