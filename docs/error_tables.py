"""The error-code tables, generated from each layer's catalogue (``errors.py``).

One source for two readers: the package READMEs carry them between ``<!-- errors:NAME -->`` markers
(``tests/unit/test_error_catalogues.py`` fails when one is stale) and the site's ``reference/errors.md``
(``docs/hooks.py``). Rewrite the README tables after changing a catalogue with
``.venv/bin/python -m docs.error_tables``. Imports only ``cdk_triton``: the docs build imports nothing
from ``tests/``.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Mapping
from pathlib import Path

from cdk_triton.builder import errors as builder_errors
from cdk_triton.capacity import errors as capacity_errors
from cdk_triton.config import errors as config_errors
from cdk_triton.constructs import errors as construct_errors
from cdk_triton.local import errors as local_errors
from cdk_triton.pipeline import errors as pipeline_errors
from cdk_triton.registry import errors as registry_errors
from cdk_triton.scaffold import errors as scaffold_errors
from cdk_triton.tune import errors as tune_errors

ROOT = Path(__file__).resolve().parents[1]

#: package -> the codes it owns (each code in exactly one).
OWNED: dict[str, Mapping[str, str]] = {
    "config": config_errors.ALL_CODES,
    "builder": builder_errors.ALL_CODES,
    "constructs": construct_errors.CONSTRUCT_ERRORS,
    "local": {**local_errors.ALL_CODES, **local_errors.FRONT_ERRORS},
    "pipeline": pipeline_errors.ALL_CODES,
    "tune": tune_errors.ALL_CODES,
    "registry": registry_errors.ALL_CODES,
    "capacity": capacity_errors.ALL_CODES,
    "scaffold": scaffold_errors.ALL_CODES,
}


def _rows(label: str, catalogue: Mapping[str, str]) -> list[tuple[str, str, str]]:
    return [(code, label, text) for code, text in catalogue.items()]


def _builder() -> str:
    rows = _rows("TritonValidationError", builder_errors.VALIDATION_ERRORS)
    rows += _rows("TritonValidationError (config)", builder_errors.SURFACED)
    rows += _rows("BuildError", builder_errors.BUILD_ERRORS)
    return config_errors.markdown_table(("code", "raised as", "meaning"), rows)


def _constructs() -> str:
    surfaced = {code: f"(config) {text}" for code, text in construct_errors.SURFACED.items()}
    return config_errors.code_table({**construct_errors.CONSTRUCT_ERRORS, **surfaced})


def _local() -> str:
    rows = _rows("TritonValidationError", local_errors.VALIDATION_ERRORS)
    rows += _rows("TritonValidationError (config)", local_errors.SURFACED)
    rows += _rows("LocalServerError", local_errors.SERVER_ERRORS)
    rows += _rows("front (HTTP)", local_errors.FRONT_ERRORS)
    return config_errors.markdown_table(("code", "raised as", "meaning"), rows)


def _pipeline() -> str:
    rows = _rows("TritonValidationError", pipeline_errors.VALIDATION_ERRORS)
    rows += _rows("GpuJobError (launcher, at run time)", pipeline_errors.LAUNCHER_ERRORS)
    rows += _rows("TritonValidationError (config)", pipeline_errors.SURFACED)
    return config_errors.markdown_table(("code", "raised as", "meaning"), rows)


def _registry() -> str:
    rows = _rows("TritonValidationError", registry_errors.VALIDATION_ERRORS)
    rows += _rows("RegistryError", registry_errors.CALL_ERRORS)
    rows += _rows("TritonValidationError (config)", registry_errors.SURFACED)
    return config_errors.markdown_table(("code", "raised as", "meaning"), rows)


#: README -> (block name, table generator).
TABLES: dict[str, tuple[str, Callable[[], str]]] = {
    "cdk_triton/config/README.md": ("config", lambda: config_errors.code_table(config_errors.ALL_CODES)),
    "cdk_triton/builder/README.md": ("builder", _builder),
    "cdk_triton/constructs/README.md": ("constructs", _constructs),
    "cdk_triton/local/README.md": ("local", _local),
    "cdk_triton/pipeline/README.md": ("pipeline", _pipeline),
    "cdk_triton/registry/README.md": ("registry", _registry),
    "cdk_triton/scaffold/README.md": (
        "scaffold",
        lambda: config_errors.code_table(scaffold_errors.ALL_CODES),
    ),
}


def package_table(package: str) -> str:
    """The error table of one package: its README's, or the plain code table of its catalogue."""
    for readme, (_, table) in TABLES.items():
        if Path(readme).parent.name == package:
            return table()
    return config_errors.code_table(dict(OWNED[package]))


def rewrite() -> None:
    """Rewrite every README error table from its catalogue."""
    for readme, (name, table) in TABLES.items():
        path = ROOT / readme
        path.write_text(config_errors.replace_generated(path.read_text(), name, table()))
        print(f"wrote {readme}", file=sys.stderr)


if __name__ == "__main__":
    rewrite()
