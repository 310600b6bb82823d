"""Target compatibility checks: ONNX opsets, TorchScript versions, python model imports."""

from __future__ import annotations

from pathlib import Path

import pytest

from cdk_triton.builder import compat
from cdk_triton.errors import BuildError


def test_opset_is_chosen_within_the_target() -> None:
    assert compat.choose_opset("24.09", None, torch_max=23) == 21  # ONNX Runtime 1.19 -> 21
    assert compat.choose_opset("24.09", None, torch_max=20) == 20
    with pytest.raises(BuildError, match="OnnxOpsetTooNew"):
        compat.choose_opset("24.09", 22, torch_max=23)


def test_torchscript_warning_names_versions() -> None:
    w = compat.torchscript_warning("2.13.0+cpu", "24.09")
    assert w and "2.5.0" in w and "onnx" in w
    assert compat.torchscript_warning("2.5.1", "24.09") is None


def test_python_model_imports_are_checked(tmp_path: Path) -> None:
    (tmp_path / "model.py").write_text("import json, numpy as np\nfrom PIL import Image\nimport helper\n")
    (tmp_path / "helper.py").write_text("import os\n")
    with pytest.raises(BuildError, match=r"imports 'PIL' \(model.py:2\).*\[PythonModelImport\]"):
        compat.check_python_model(tmp_path, name="pre")
    (tmp_path / "model.py").write_text(
        "import json\nimport numpy as np\nimport triton_python_backend_utils\n"
    )
    compat.check_python_model(tmp_path, name="pre")
