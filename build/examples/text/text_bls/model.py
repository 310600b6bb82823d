"""Text -> BERT's pooled output through business logic scripting: this model calls the `tokenize` model,
then `bert` (both declared in `calls:`, packaged beside it and loaded at start), as the ensemble
`text_encoder` does with steps. It imports no package of its own: the tokenizer's environment is
tokenize's."""

import triton_python_backend_utils as pb_utils


def call(model, inputs, outputs):
    """One BLS call: ``model``'s ``outputs`` for ``inputs`` (name -> array), raising its error."""
    resp = pb_utils.InferenceRequest(
        model_name=model,
        requested_output_names=outputs,
        inputs=[pb_utils.Tensor(name, value) for name, value in inputs.items()],
    ).exec()
    if resp.has_error():
        raise pb_utils.TritonModelException(resp.error().message())
    return {name: pb_utils.get_output_tensor_by_name(resp, name).as_numpy() for name in outputs}


class TritonPythonModel:
    def execute(self, requests):
        out = []
        for r in requests:
            text = pb_utils.get_input_tensor_by_name(r, "TEXT").as_numpy()
            tokens = call("tokenize", {"TEXT": text}, ["input_ids", "attention_mask"])
            pooled = call("bert", tokens, ["pooler_output"])["pooler_output"]
            out.append(pb_utils.InferenceResponse([pb_utils.Tensor("pooler_output", pooled)]))
        return out
