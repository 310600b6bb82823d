"""Export time per format (including parity on CPU) for the example classifier and BERT encoder.

python -m bench.build_export
"""

from __future__ import annotations

import argparse
import shutil
import tempfile
from pathlib import Path

import yaml

from bench.build_common import timed, write_result
from cdk_triton.builder import run_build

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = ROOT / "build" / "models.yaml"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument(
        "--models",
        default="classifier_ts,classifier_onnx,bert,preprocess",
        help="comma-separated example models to time (default: one per format + bert)",
    )
    args = ap.parse_args(argv)
    data = yaml.safe_load(EXAMPLE.read_text())
    tmp = Path(tempfile.mkdtemp())
    seconds: dict[str, float] = {}
    try:
        shutil.copytree(ROOT / "build" / "preprocess", tmp / "preprocess")
        shutil.copy(ROOT / "build" / "example_models.py", tmp / "example_models.py")
        for name in args.models.split(","):
            model = next(m for m in data["models"] if m["name"] == name)
            decl = tmp / f"{name}.yaml"
            decl.write_text(
                yaml.safe_dump(
                    {
                        "triton_version": data["triton_version"],
                        "acknowledged_advisories": data.get("acknowledged_advisories", {}),
                        "artifact_location": data["artifact_location"],
                        "models": [model],
                    }
                )
            )
            run_build(decl, out_dir=tmp / "warm", progress=False, force=True)  # warm imports
            seconds[f"{name} ({model['format']})"], _ = timed(
                lambda d=decl, n=name: run_build(d, out_dir=tmp / f"out-{n}", progress=False, force=True)
            )
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    summary = [
        {"label": f"export + parity: {k}", "value": v, "unit": "s", "target": None}
        for k, v in seconds.items()
    ]
    write_result("build_export", "python -m bench.build_export", summary, {"seconds": seconds})
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
