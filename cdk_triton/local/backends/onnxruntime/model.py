"""CPU stand-in for Triton's onnxruntime backend (serves ``platform: "onnxruntime_onnx"``).

A python-based backend: Triton runs it through the python backend because this directory holds a
``model.py`` and no ``libtriton_onnxruntime.so``. It validates the config against the model as
strictly as the real backend (names, counts, data types, dims, batching), refuses an opset or IR
version the target release's ONNX Runtime cannot load, and batches every request of one
``execute()`` call into one ``session.run``.
"""

from __future__ import annotations

import json
import os
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

_ORT_TO_CONFIG = {
    "tensor(bool)": "TYPE_BOOL",
    "tensor(uint8)": "TYPE_UINT8",
    "tensor(uint16)": "TYPE_UINT16",
    "tensor(uint32)": "TYPE_UINT32",
    "tensor(uint64)": "TYPE_UINT64",
    "tensor(int8)": "TYPE_INT8",
    "tensor(int16)": "TYPE_INT16",
    "tensor(int32)": "TYPE_INT32",
    "tensor(int64)": "TYPE_INT64",
    "tensor(float16)": "TYPE_FP16",
    "tensor(float)": "TYPE_FP32",
    "tensor(double)": "TYPE_FP64",
    "tensor(string)": "TYPE_STRING",
    "tensor(bfloat16)": "TYPE_BF16",
}


def _shape(node: Any) -> list[int]:
    return [d if isinstance(d, int) else -1 for d in node.shape]


def _check_target_limits(path: str, name: str) -> None:
    """Refuse what the target release's ONNX Runtime refuses (limits passed in by the harness)."""
    max_opset = os.environ.get("CDK_TRITON_TARGET_ONNX_MAX_OPSET")
    max_ir = os.environ.get("CDK_TRITON_TARGET_ONNX_MAX_IR_VERSION")
    target = os.environ.get("CDK_TRITON_TARGET_ONNXRUNTIME", "the target ONNX Runtime")
    if not (max_opset or max_ir):
        return
    if os.environ.get("CDK_TRITON_STUB_PYTHON_BIN"):  # serve --runtime target: this is the release's own
        return  # ONNX Runtime, which refuses what it cannot load by itself (and onnx is not installed here)
    import onnx

    proto = onnx.load(path, load_external_data=False)
    if max_ir and proto.ir_version > int(max_ir):
        raise RuntimeError(
            f"Load model from {path} failed:Unsupported model IR version: {proto.ir_version}, "
            f"max supported IR version: {max_ir} (model '{name}'; {target})"
        )
    if max_opset:
        for opset in proto.opset_import:
            if opset.domain in ("", "ai.onnx") and opset.version > int(max_opset):
                raise RuntimeError(
                    f"Load model from {path} failed:ONNX Runtime only *guarantees* support for models stamped "
                    f"with official released onnx opset versions. Opset {opset.version} is under development "
                    "and support for this is limited. The operator schemas and or other functionality may "
                    "change before next ONNX release and in this case ONNX Runtime will not guarantee backward "
                    f"compatibility. Current official support for domain ai.onnx is till opset {max_opset}. "
                    f"(model '{name}'; {target})"
                )


class TritonPythonModel(BatchingModel):
    """One ONNX Runtime CPU session per model instance."""

    def initialize(self, args: dict[str, Any]) -> None:
        import onnxruntime as ort

        self.config = json.loads(args["model_config"])
        super().initialize(args)
        path = model_file(args, self.config, "model.onnx")
        if not os.path.exists(path):
            raise RuntimeError(
                f"unable to find '{path}' for model instance '{args.get('model_instance_name')}'"
            )
        _check_target_limits(path, self.name)
        options = ort.SessionOptions()
        intra = thread_parameter(self.config, "intra_op_thread_count")
        inter = thread_parameter(self.config, "inter_op_thread_count")
        options.intra_op_num_threads = intra if intra is not None else 0
        options.inter_op_num_threads = inter if inter is not None else 0
        # no spin-waiting thread pools: the instance shares the cores with tritonserver, the front and
        # the client (spinning 2 intra-op threads cost 0.36-0.44 ms of stub CPU per image, 0.24-0.29 not)
        options.add_session_config_entry("session.intra_op.allow_spinning", "0")
        options.add_session_config_entry("session.inter_op.allow_spinning", "0")
        self.session = ort.InferenceSession(path, options, providers=["CPUExecutionProvider"])
        self._validate()
        self.output_names = [name for name, _ in self.outputs]

    def _validate(self) -> None:
        name, mbs = self.name, self.max_batch_size
        model_in = {n.name: n for n in self.session.get_inputs()}
        model_out = {n.name: n for n in self.session.get_outputs()}
        cfg_in = self.config.get("input", [])
        if len(model_in) != len(cfg_in):
            raise ValueError(
                f"unable to load model '{name}', configuration expects {len(cfg_in)} inputs, model provides "
                f"{len(model_in)}"
            )
        for kind, cfg, model in (
            ("input", cfg_in, model_in),
            ("output", self.config.get("output", []), model_out),
        ):
            for io in cfg:
                node = model.get(io["name"])
                if node is None:
                    raise ValueError(
                        f"unexpected inference {kind} '{io['name']}', allowed {kind}s are: "
                        + ", ".join(sorted(model))
                    )
                model_type = _ORT_TO_CONFIG.get(node.type, node.type)
                if model_type != io["data_type"]:
                    # onnxruntime_backend ValidateInputs/ValidateOutputs, quote slip included: the model's
                    # type as TRITONSERVER_DataTypeString (FP32), the config's as written (TYPE_INT64)
                    raise ValueError(
                        f"unable to load model '{name}, unexpected datatype {server_type(model_type)} for {kind} "
                        f"'{io['name']}', expecting {io['data_type']}"
                    )
                dims = [int(d) for d in (io.get("reshape") or {}).get("shape", [])] or config_dims(io)
                problem = compare_dims(name, io["name"], _shape(node), dims, mbs)
                if problem:
                    raise ValueError(problem)

    def run(self, feeds: dict[str, Any]) -> dict[str, Any]:
        values = self.session.run(self.output_names, feeds)
        return dict(zip(self.output_names, values, strict=True))

    def finalize(self) -> None:
        self.session = None
