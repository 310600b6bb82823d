"""The declaration file itself: one author for its two errors, whichever layer reads ``models.yaml``.

The build (``builder.declarations``), the pipeline's GPU targets (``pipeline.gpu_targets``) and
``cdk-triton tune`` (request, write-back) each read the file with their own YAML library (``config``
is standard library only), and all of them report a missing file and a file their parser refused
with these errors (``DeclarationNotFound``, ``InvalidYaml``: ``config.errors.DECLARATION_FILE_ERRORS``).
"""

from __future__ import annotations

import os
from pathlib import Path

from cdk_triton.errors import TritonValidationError

#: the fix of a missing declaration when the caller has no better one
DEFAULT_FIX = "pass --config build/models.yaml"


def declaration_not_found(
    path: str | os.PathLike[str], *, prop: str = "config", fix: str = DEFAULT_FIX
) -> TritonValidationError:
    """``DeclarationNotFound``: ``path`` is not a file."""
    return TritonValidationError(
        "DeclarationNotFound",
        prop=prop,
        value=str(path),
        problem="does not exist",
        allowed="a models.yaml file",
        fix=fix,
    )


def invalid_yaml(
    path: str | os.PathLike[str], exc: Exception, *, prop: str = "config"
) -> TritonValidationError:
    """``InvalidYaml``: the file a YAML parser (PyYAML or ruamel.yaml) refused, with its position."""
    return TritonValidationError(
        "InvalidYaml",
        prop=prop,
        value=str(path),
        problem=f"is not valid YAML ({exc})".replace("\n", " "),
        allowed="YAML",
        fix="fix the syntax at the position shown",
        path=str(path),
    )


def read_declaration_text(
    path: str | os.PathLike[str], *, prop: str = "config", fix: str = DEFAULT_FIX
) -> str:
    """The text of the declaration at ``path``; ``DeclarationNotFound`` when it is not a file."""
    p = Path(path)
    if not p.is_file():
        raise declaration_not_found(p, prop=prop, fix=fix)
    return p.read_text("utf-8")
