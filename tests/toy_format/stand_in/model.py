"""CPU stand-in of the toy backend: ``tanh(x @ weight.T + bias)`` from ``<version>/model.json``."""

import json
import os

import numpy as np
import triton_python_backend_utils as pb_utils


class TritonPythonModel:
    def initialize(self, args):
        config = json.loads(args["model_config"])
        path = os.path.join(args["model_repository"], args["model_version"], "model.json")
        with open(path) as fh:
            weights = json.load(fh)
        self.weight = np.asarray(weights["weight"], dtype=np.float32)
        self.bias = np.asarray(weights["bias"], dtype=np.float32)
        self.input = config["input"][0]["name"]
        self.output = config["output"][0]["name"]

    def execute(self, requests):
        responses = []
        for request in requests:
            x = pb_utils.get_input_tensor_by_name(request, self.input).as_numpy()
            y = np.tanh(x @ self.weight.T + self.bias).astype(np.float32)
            responses.append(pb_utils.InferenceResponse([pb_utils.Tensor(self.output, y)]))
        return responses
