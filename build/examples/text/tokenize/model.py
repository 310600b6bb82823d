"""Text -> BERT inputs: HF tokenizers' WordPiece over the committed vocabulary (vocab.txt beside this file;
nothing downloaded). TEXT (STRING [1]) -> input_ids, attention_mask (INT64 [16]): [CLS] text [SEP], padded."""

from pathlib import Path

import numpy as np
import triton_python_backend_utils as pb_utils
from tokenizers import Tokenizer, models, normalizers, pre_tokenizers, processors

SEQUENCE = 16


def wordpiece(vocab: Path) -> Tokenizer:
    """A BERT-style WordPiece tokenizer (lower case, [CLS] ... [SEP], padded and truncated to SEQUENCE)."""
    tok = Tokenizer(models.WordPiece.from_file(str(vocab), unk_token="[UNK]"))
    tok.normalizer = normalizers.BertNormalizer(lowercase=True)
    tok.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    cls, sep, pad = (tok.token_to_id(t) for t in ("[CLS]", "[SEP]", "[PAD]"))
    tok.post_processor = processors.TemplateProcessing(
        single="[CLS] $A [SEP]", special_tokens=[("[CLS]", cls), ("[SEP]", sep)]
    )
    tok.enable_truncation(SEQUENCE)
    tok.enable_padding(length=SEQUENCE, pad_id=pad, pad_token="[PAD]")
    return tok


class TritonPythonModel:
    def initialize(self, args):
        self.tokenizer = wordpiece(Path(__file__).with_name("vocab.txt"))

    def execute(self, requests):
        out = []
        for r in requests:
            text = pb_utils.get_input_tensor_by_name(r, "TEXT").as_numpy()
            batch = [t.decode("utf-8") if isinstance(t, bytes) else str(t) for t in text.reshape(-1)]
            enc = self.tokenizer.encode_batch(batch)
            ids = np.array([e.ids for e in enc], dtype=np.int64)
            mask = np.array([e.attention_mask for e in enc], dtype=np.int64)
            out.append(
                pb_utils.InferenceResponse(
                    [pb_utils.Tensor("input_ids", ids), pb_utils.Tensor("attention_mask", mask)]
                )
            )
        return out
