"""The format axis is guarded like the mode axis: no module outside ``config/formats.py`` compares a
format's name (the row answers by name: ``weight_bearing``, ``stub_per_instance``, ``gpu_checkable``,
``kind``, ``gpu_only``), and a GPU-only format added as a row (``tests.toy_format.GPU_ROW``) is routed
to the GPU job, counted by sizing and GPU-checked with no other file edited (the GPU check's half of
the proof is in ``tests/unit/builder/test_gpu_check.py``)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from cdk_triton.config import formats, gpu_costs, sizing
from cdk_triton.errors import TritonValidationError
from tests.toy_format import GPU_ROW

ROOT = Path(__file__).resolve().parents[3]
PACKAGE = ROOT / "cdk_triton"
TABLE = PACKAGE / "config" / "formats.py"
#: Comparisons of a word that is also a format's name but holds another axis, in files another
#: owner changes (path, the line's code): each with the row attribute that should replace it.
ELSEWHERE = {
    # a release fact, not a format: ask row.builds_plans (the constructs' owner)
    ("cdk_triton/constructs/checks/models.py", 'fact == "tensorrt"'),
    # the CPU stand-in's backend name, not a format: the local endpoint's overlay
    ("cdk_triton/local/overlay.py", 'backend == "python"'),
}


def _words() -> set[str]:
    return set(formats.names())


def _named(node: ast.expr, words: set[str]) -> list[str]:
    """The format names a comparison operand holds: a string constant, or the items of a literal
    tuple / list / set (``x in ("python", "onnx")``)."""
    items = node.elts if isinstance(node, (ast.Tuple, ast.List, ast.Set)) else [node]
    return [i.value for i in items if isinstance(i, ast.Constant) and i.value in words]


def _names_formats(node: ast.Assign | ast.AnnAssign) -> bool:
    targets = node.targets if isinstance(node, ast.Assign) else [node.target]
    return any(isinstance(t, ast.Name) and "FORMAT" in t.id.upper() for t in targets)


def format_branches(source: str) -> list[int]:
    """The lines of ``source`` that branch on a format's name: a comparison with one (``==``, ``!=``,
    ``in``), a ``case "onnx":``, a dict keyed by two or more format names (a table by format), or a
    hand-kept list of formats (a name with ``FORMAT`` in it given two or more literally:
    ``WEIGHT_FORMATS = frozenset({"onnx", "torchscript"})``; the same words as source kinds or
    release facts are other axes)."""
    words = _words()
    return sorted({node.lineno for node in ast.walk(ast.parse(source)) if _branches(node, words)})


def _branches(node: ast.AST, words: set[str]) -> bool:
    if isinstance(node, ast.Compare):
        return any(_named(o, words) for o in [node.left, *node.comparators])
    if isinstance(node, ast.MatchValue):
        return bool(_named(node.value, words))
    if isinstance(node, ast.Dict):
        return len(_named(ast.Tuple(elts=[k for k in node.keys if k]), words)) >= 2
    if isinstance(node, (ast.Assign, ast.AnnAssign)) and node.value is not None and _names_formats(node):
        held = [c for c in ast.walk(node.value) if isinstance(c, ast.Constant)]
        return len([c for c in held if c.value in words]) >= 2
    return False


def test_the_scan_sees_each_kind_of_format_branch() -> None:
    src = (
        'a = m.format == "onnx"\n'
        'b = fmt in ("python", "ensemble")\n'
        'match fmt:\n    case "tensorrt":\n        pass\n'
        'd = {"torchscript": 1, "onnx": 2}\n'
        'WEIGHT_FORMATS = frozenset({"onnx", "torchscript"})\n'
        'SOURCE_KINDS = ("factory", "onnx", "python")\n'
        "f = m.row.weight_bearing\n"
        'g = {"python": "3.12", "platform": "x"}\n'
        'h = backend != "pytorch"\n'
    )
    assert format_branches(src) == [1, 2, 4, 6, 7]  # not 8-11: other axes, a row's answer


def test_no_module_outside_the_format_table_compares_a_format() -> None:
    found = set()
    for path in sorted(PACKAGE.rglob("*.py")):
        if path == TABLE:
            continue
        rel = path.relative_to(ROOT).as_posix()
        lines = path.read_text().splitlines()
        for n in format_branches(path.read_text()):
            if not any(rel == p and code in lines[n - 1] for p, code in ELSEWHERE):
                found.add(f"{rel}:{n}: {lines[n - 1].strip()}")
    assert not found, f"ask the format's row (config.formats) instead: {sorted(found)}"


def test_the_exemptions_still_exist() -> None:
    """An exemption whose line is gone (fixed by its owner) is removed here."""
    for path, code in ELSEWHERE:
        assert code in (ROOT / path).read_text(), f"{path} no longer has {code!r}: drop it from ELSEWHERE"


# ---------------------------------------------------------------- a GPU-only format is its row


@pytest.fixture
def toygpu() -> formats.Format:
    with formats.registered(GPU_ROW) as row:
        yield row


def test_a_gpu_only_format_is_routed_to_the_gpu_job(toygpu: formats.Format, tmp_path: Path) -> None:
    from cdk_triton.config.declaration.view import RawDeclaration
    from cdk_triton.pipeline import fanout_commands, fanout_job, gpu_job, gpu_targets

    assert formats.gpu_only_names() == ("tensorrt", "toygpu")
    assignment = {"shards": 1, "assignment": [["g", "c"]]}
    items = fanout_job.shard_items(assignment, {"g": "toygpu", "c": "onnx"}, run="r", prefix="", gpu=True)
    assert [i["models"] for i in items[fanout_job.GPU]] == [["g"]]
    assert [i["models"] for i in items[fanout_job.CPU]] == [["c"]]
    view = RawDeclaration({"models": [{"name": "g", "format": "toygpu"}, {"name": "c", "format": "onnx"}]})
    assert gpu_targets.gpu_only_models(view) == ["g"]
    on_cpu = {
        "triton_version": "24.09",
        "models": [{"name": "g", "format": "toygpu"}],
        "endpoints": [
            {"name": "e", "mode": "SingleModel", "instance_types": ["ml.c5.xlarge"], "models": ["g"]}
        ],
    }
    with pytest.raises(TritonValidationError, match="so toygpu model 'g' has nowhere to run"):
        gpu_targets.gpu_build_targets(on_cpu)
    request = gpu_job.JobRequest(
        kind=gpu_job.PROCESSING, instance_type="ml.g5.xlarge", image_uri="i", role_arn="r",
        bucket="b", prefix="", declaration="models.yaml", job_name="j",
    )  # fmt: skip
    assert "--formats tensorrt,toygpu " in gpu_job.build_script(request)
    commands = fanout_commands.FanOutCommands(declaration="models.yaml", prefix="", shards=1)
    assert "--formats tensorrt,toygpu " in commands.gpu_shard_script("/src")


def test_a_gpu_only_format_has_its_weights_counted(toygpu: formats.Format) -> None:
    config = {"input": [{"name": "x", "data_type": "TYPE_FP32", "dims": [4]}], "output": []}
    assert sizing.model_memory("toygpu", 1000, config)[0] == 1000 + 16
    assert sizing.model_memory("ensemble", 1000, config)[0] == 16  # a composed model holds only its I/O
    peak = {"peak_bytes": 5, "method": "fake"}
    assert sizing.model_memory("toygpu", 1000, config, peak) == (1005, "activations/fake")


def test_the_stub_cost_and_the_in_process_backends_are_the_rows() -> None:
    assert gpu_costs.instance_bytes("python") == gpu_costs.PYTHON_STUB.bytes
    assert gpu_costs.instance_bytes("onnx") == 0 and gpu_costs.instance_bytes("unknown") == 0
    assert gpu_costs.in_process_formats() == ("torchscript", "onnx", "tensorrt")
    with formats.registered(GPU_ROW):  # its backend's fixed cost is unknown: none is added
        assert gpu_costs.server_costs(["toygpu"]) == gpu_costs.server_costs([])
