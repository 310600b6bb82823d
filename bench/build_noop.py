"""No-op rebuild vs full build for N declared models (default 50): the cache makes unchanged builds cheap.

python -m bench.build_noop --models 50 --format torchscript
"""

from __future__ import annotations

import argparse
import shutil
import tempfile
import textwrap
from pathlib import Path

from bench.build_common import timed, write_result
from cdk_triton.builder import run_build

FACTORY = textwrap.dedent("""
    import torch
    from torch import nn

    def mlp(features: int = 16, hidden: int = 32, outputs: int = 8) -> nn.Module:
        return nn.Sequential(nn.Linear(features, hidden), nn.ReLU(), nn.Linear(hidden, outputs)).eval()
""")


def declaration(root: Path, n: int, fmt: str) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    (root / "bench_models.py").write_text(FACTORY)
    lines = ["triton_version: '24.09'", "artifact_location: s3://bench-bucket/bench/"]
    # the benchmark's acknowledgment of 24.09's critical NVIDIA advisories (nothing it builds is deployed)
    lines += ["acknowledged_advisories:"] + [
        f"  {cve}: 'benchmark: built to be timed, never deployed'"
        for cve in ("CVE-2025-23310", "CVE-2025-23311", "CVE-2025-23316", "CVE-2025-23317", "CVE-2026-24207")
    ]
    lines.append("models:")
    for i in range(n):
        lines += [
            f"  - name: m{i:03d}",
            f"    format: {fmt}",
            f"    source: {{factory: bench_models:mlp, seed: {i}}}",
            "    inputs: [{name: x, dtype: FP32, shape: [16]}]",
            "    outputs: [{name: y, dtype: FP32, shape: [8]}]",
            "    max_batch_size: 8",
        ]
    lines += [
        "endpoints:",
        "  - name: many",
        "    mode: MultiModel",
        "    instance_types: [ml.g5.xlarge]",
        f"    models: [{', '.join(f'm{i:03d}' for i in range(n))}]",
    ]
    path = root / "models.yaml"
    path.write_text("\n".join(lines) + "\n")
    return path


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--models", type=int, default=50)
    ap.add_argument("--format", default="torchscript", choices=["torchscript", "onnx"])
    args = ap.parse_args(argv)
    tmp = Path(tempfile.mkdtemp())
    try:
        decl = declaration(tmp / "decl", args.models, args.format)
        out = tmp / "out"
        t_full, full = timed(lambda: run_build(decl, out_dir=out, progress=False))
        t_noop, noop = timed(lambda: run_build(decl, out_dir=out, progress=False))
        assert noop.exported == 0 and noop.packaged == 0, "a no-op rebuild must not export or package"
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    summary = [
        {
            "label": f"full / no-op build time, {args.models} {args.format} models",
            "value": t_full / t_noop,
            "unit": "x",
            "target": None,
        },
        {"label": f"no-op rebuild, {args.models} models", "value": t_noop, "unit": "s", "target": None},
    ]
    details = {
        "models": args.models,
        "format": args.format,
        "full_seconds": t_full,
        "noop_seconds": t_noop,
        "full": {"exported": full.exported, "packaged": full.packaged},
        "noop": {"exported": noop.exported, "packaged": noop.packaged, "skipped": noop.skipped},
    }
    write_result(
        "build_noop",
        f"python -m bench.build_noop --models {args.models} --format {args.format}",
        summary,
        details,
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
