"""The vocabulary is re-exported from cdk_triton.config.declaration and agrees with itself."""

from __future__ import annotations

from cdk_triton.config import declaration as spec
from cdk_triton.config.declaration import vocabulary


def test_every_vocabulary_word_is_reexported() -> None:
    for name in ("DTYPES", "PACKAGINGS", "PRECISIONS", "PYTORCH_PARAMETERS", "WARMUP_DATA"):
        assert getattr(spec, name) is getattr(vocabulary, name)


def test_removed_pytorch_parameters_are_not_current_ones() -> None:
    assert not set(vocabulary.PYTORCH_REMOVED_PARAMETERS) & set(vocabulary.PYTORCH_PARAMETERS)
