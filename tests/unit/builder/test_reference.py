"""The eager reference: factories, seeds and state_dicts."""

from __future__ import annotations

from pathlib import Path

import pytest

from cdk_triton.builder import run_build
from cdk_triton.errors import BuildError
from tests.unit.builder.helpers import tiny, write_decl


def test_fails_state_dict_mismatch(tmp_path: Path) -> None:
    import torch

    torch.save({"fc.weight": torch.zeros(2, 2)}, tmp_path / "w.pt")
    decl = write_decl(tmp_path, tiny().replace("seed: 0", "seed: 0, state_dict: w.pt"))
    with pytest.raises(BuildError, match=r"\[StateDictMismatch\]"):
        run_build(decl, out_dir=tmp_path / "out", progress=False)
    left = [f.name for f in (tmp_path / "out").rglob("*") if f.is_file()]
    assert left in ([], [".lock"]), left  # nothing written


class _RunsCode:
    """A pickled object whose unpickling would run a command (the pickle attack on weights files)."""

    def __reduce__(self) -> tuple[object, tuple[str]]:
        import os

        return (os.system, ("touch PWNED",))


def test_fails_state_dict_that_unpickles_code(tmp_path: Path) -> None:
    """``torch.load(weights_only=True)`` refuses a pickle that calls os.system: nothing runs, nothing is written."""
    import torch

    torch.save({"fc.weight": _RunsCode()}, tmp_path / "w.pt")
    decl = write_decl(tmp_path, tiny().replace("seed: 0", "seed: 0, state_dict: w.pt"))
    with pytest.raises(BuildError, match=r"Unsupported global|weights_only") as info:
        run_build(decl, out_dir=tmp_path / "out", progress=False)
    assert info.value.code == "StateDictMismatch"
    assert not (tmp_path / "PWNED").exists() and not Path("PWNED").exists()
