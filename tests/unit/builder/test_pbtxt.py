"""config.pbtxt from the ModelConfig protobuf."""

from __future__ import annotations

from pathlib import Path

from cdk_triton.builder.pbtxt import IoTensor, build_config, parse_pbtxt, to_pbtxt
from tests.unit.builder.helpers import spec_of, tiny


def test_config_round_trips_through_text_format(tmp_path: Path) -> None:
    spec = spec_of(
        tmp_path,
        tiny("c", "onnx") + "    dynamic_batching: {preferred_batch_sizes: [2, 4], "
        "max_queue_delay_microseconds: 50}\n    instance_groups: [{kind: KIND_GPU, count: 2}]\n"
        "    warmup: [{batch_size: 2, data: random}]\n    response_cache: true\n"
        "    onnx: {tensorrt_accelerator: true}\n",
    )
    m = spec.model("c")
    cfg = build_config(
        m,
        inputs=[IoTensor(name="x", dtype="FP32", dims=(4,))],
        outputs=[IoTensor(name="y", dtype="FP32", dims=(3,))],
        cc_model_filenames={"8.6": "model_sm86.plan"},
    )
    text = to_pbtxt(cfg)
    back = parse_pbtxt(text)
    assert back == cfg
    assert back.dynamic_batching.preferred_batch_size == [2, 4]
    assert back.instance_group[0].count == 2 and back.response_cache.enable
    assert back.model_warmup[0].inputs["x"].random_data and back.model_warmup[0].batch_size == 2
    assert back.optimization.execution_accelerators.gpu_execution_accelerator[0].name == "tensorrt"
    assert back.cc_model_filenames["8.6"] == "model_sm86.plan"
