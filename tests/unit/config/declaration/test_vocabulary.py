"""The vocabulary is re-exported from cdk_triton.config.declaration and agrees with itself."""

from __future__ import annotations

from cdk_triton.config import declaration as spec
from cdk_triton.config.declaration import vocabulary


def test_every_vocabulary_word_is_reexported() -> None:
    for name in ("DTYPES", "FORMATS", "PACKAGINGS", "PRECISIONS", "PYTORCH_PARAMETERS", "WARMUP_DATA"):
        assert getattr(spec, name) is getattr(vocabulary, name)


def test_sources_for_format_cover_every_format_but_ensemble() -> None:
    assert set(vocabulary.SOURCES_FOR_FORMAT) == set(vocabulary.FORMATS) - {"ensemble"}
    assert {k for ks in vocabulary.SOURCES_FOR_FORMAT.values() for k in ks} == set(vocabulary.SOURCE_KINDS)
    assert not set(vocabulary.PYTORCH_REMOVED_PARAMETERS) & set(vocabulary.PYTORCH_PARAMETERS)
