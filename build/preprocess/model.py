"""Triton python-backend preprocessing: UINT8 HWC images -> normalized FP32 CHW tensors.

numpy only: the Triton image has neither torch nor PIL.
"""

import json

import numpy as np
import triton_python_backend_utils as pb_utils

MEAN = np.array([0.4914, 0.4822, 0.4465], dtype=np.float32).reshape(1, 3, 1, 1)
STD = np.array([0.2470, 0.2435, 0.2616], dtype=np.float32).reshape(1, 3, 1, 1)


class TritonPythonModel:
    def initialize(self, args):
        config = json.loads(args["model_config"])
        out = pb_utils.get_output_config_by_name(config, "PIXELS")
        self.out_dtype = pb_utils.triton_string_to_numpy(out["data_type"])

    def execute(self, requests):
        responses = []
        for request in requests:
            image = pb_utils.get_input_tensor_by_name(request, "IMAGE").as_numpy()  # [N, H, W, 3] uint8
            chw = np.transpose(image.astype(np.float32) / 255.0, (0, 3, 1, 2))
            pixels = ((chw - MEAN) / STD).astype(self.out_dtype)
            responses.append(pb_utils.InferenceResponse(output_tensors=[pb_utils.Tensor("PIXELS", pixels)]))
        return responses

    def finalize(self):
        pass
