"""A stateful Triton python model: the running sum of VALUE per sequence (correlation id).

Triton's sequence batcher routes every request of a sequence to this instance and sets the control
tensors: START (1 on a sequence's first request: the sum restarts), END (1 on its last: the state is
dropped), READY (0 on the empty slots of a batch) and CORRID (the sequence's correlation id). Clients
send them as KServe v2 request parameters: ``sequence_id``, ``sequence_start``, ``sequence_end``.

numpy only: the Triton image has neither torch nor PIL. The python backend keeps no implicit state,
so the state lives here, one entry per live sequence.
"""

import numpy as np
import triton_python_backend_utils as pb_utils


def _scalar(request, name):
    return pb_utils.get_input_tensor_by_name(request, name).as_numpy().reshape(-1)[0]


class TritonPythonModel:
    def initialize(self, args):
        self.sums = {}  # correlation id -> running sum (a numpy array shaped like VALUE)

    def execute(self, requests):
        responses = []
        for request in requests:
            value = pb_utils.get_input_tensor_by_name(request, "VALUE").as_numpy()
            if not int(_scalar(request, "READY")):
                responses.append(pb_utils.InferenceResponse([pb_utils.Tensor("SUM", np.zeros_like(value))]))
                continue
            corrid = _scalar(request, "CORRID")
            corrid = corrid.decode() if isinstance(corrid, bytes) else int(corrid)
            previous = 0 if int(_scalar(request, "START")) else self.sums.get(corrid, 0)
            total = (previous + value).astype(value.dtype)
            if int(_scalar(request, "END")):
                self.sums.pop(corrid, None)
            else:
                self.sums[corrid] = total
            responses.append(pb_utils.InferenceResponse([pb_utils.Tensor("SUM", total)]))
        return responses

    def finalize(self):
        self.sums.clear()
