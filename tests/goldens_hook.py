"""With CDK_TRITON_GOLDENS_DIR set, every template a test synthesizes is dumped there (bench/goldens.py).

Off by default: the hook patches nothing unless the variable is set. A refactor records the dumps before
and after (``python -m bench.goldens record``) and compares them.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

import pytest

from bench.goldens import DUMP_ENV, canonical

_TMP = re.compile(r"/tmp/[^\"\s]*")
_state: dict[str, Any] = {"test": "", "n": 0}


def _dump(name: str, template: Any) -> None:
    out = Path(os.environ[DUMP_ENV]) / re.sub(r"[^A-Za-z0-9._-]+", "_", _state["test"])[:180]
    out.mkdir(parents=True, exist_ok=True)
    _state["n"] += 1
    text = _TMP.sub("<TMP>", canonical(template))
    (out / f"{_state['n']:03d}-{re.sub(r'[^A-Za-z0-9._-]+', '_', name)}.json").write_text(text)


def _stacks(assembly: Any) -> list[Any]:
    found = list(assembly.stacks)
    for nested in assembly.nested_assemblies:
        found += _stacks(nested.nested_assembly)
    return found


def pytest_configure(config: pytest.Config) -> None:
    if not os.environ.get(DUMP_ENV):
        return
    import aws_cdk as cdk
    from aws_cdk import assertions

    from_stack = assertions.Template.from_stack.__func__  # type: ignore[attr-defined]

    def dumping_from_stack(cls: Any, stack: cdk.Stack, *args: Any, **kwargs: Any) -> Any:
        tpl = from_stack(cls, stack, *args, **kwargs)
        _dump(f"from_stack-{stack.node.path}", tpl.to_json())
        return tpl

    def dumping(synth: Any) -> Any:
        def dumping_synth(self: cdk.Stage, *args: Any, **kwargs: Any) -> Any:
            assembly = synth(self, *args, **kwargs)
            for stack in _stacks(assembly):
                _dump(f"synth-{stack.hierarchical_id}", stack.template)
            return assembly

        return dumping_synth

    assertions.Template.from_stack = classmethod(dumping_from_stack)  # type: ignore[method-assign,assignment]
    for cls in (cdk.Stage, cdk.App):  # jsii gives App a synth of its own
        cls.synth = dumping(cls.__dict__["synth"])  # type: ignore[method-assign]


def pytest_runtest_setup(item: pytest.Item) -> None:
    _state["test"], _state["n"] = item.nodeid, 0
