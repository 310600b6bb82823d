"""Synth of one MME with 100, 1,000 and 5,000 TargetModels: time and template size per N, and how they grow.

Each size: a manifest generated from the test fixture (the example's ``multi`` endpoint with N
TargetModels, each with a recorded sample), one ``TritonEndpoint`` with ``add_verification()`` (the
sample and its S3 spec), ``app.synth()`` into a temp dir, timed in this process after one warm-up synth
(best of ``--rounds``; the manifest is built outside the timing).
Prints time, template bytes, resources and the verification's checked/total per N, then the growth
ratios N -> 10N -> 50N (time and size grow with N; the verification's properties do not).
Writes bench/results/synth_fleet.json.

Run: ``python -m bench.synth_fleet [--sizes 100 1000 5000] [--rounds 3]``.
"""

from __future__ import annotations

import argparse
import copy
import hashlib
import json
import os
import platform
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

os.environ.setdefault("JSII_SILENCE_WARNING_END_OF_LIFE_NODE_VERSION", "20")

import aws_cdk as cdk  # noqa: E402

from cdk_triton.config.manifest import Manifest, manifest_from_dict  # noqa: E402
from cdk_triton.constructs import ModelArtifacts, TritonEndpoint  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = ROOT / "tests" / "fixtures" / "manifests" / "example.json"
RESULTS = ROOT / "bench" / "results" / "synth_fleet.json"
SAMPLE = {"request": "samples/classifier.request.json", "response": "samples/classifier.response.json"}


def fleet_manifest(n: int) -> Manifest:
    """The example manifest whose ``multi`` endpoint holds ``n`` TargetModels with recorded samples."""
    data: dict[str, Any] = json.loads(EXAMPLE.read_text())
    mme = data["endpoints"]["multi"]
    proto = mme["target_models"]["resnet_ts"]
    targets = {}
    for i in range(n):
        name = f"model_{i:05d}"
        digest = hashlib.sha256(name.encode()).hexdigest()
        archive = f"{name}-{digest[:12]}.tar.gz"
        t = copy.deepcopy(proto)
        t.update(
            logical_name=name,
            model=name,
            models=[name],
            sha256=digest,
            target_model=archive,
            local_path=f"mme/multi/{archive}",
            s3_uri=f"{mme['s3_prefix']}{archive}",
            sample=dict(SAMPLE),
        )
        targets[name] = t
        data["models"][name] = {**copy.deepcopy(data["models"][proto["model"]]), "name": name}
    mme["target_models"] = targets
    return manifest_from_dict(data, source=str(EXAMPLE))


def synth_once(manifest: Manifest) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as out:
        start = time.perf_counter()
        app = cdk.App(outdir=out, context={"aws:cdk:enable-path-metadata": True})
        stack = cdk.Stack(app, "Fleet", env=cdk.Environment(account="123456789012", region="us-east-1"))
        ep = TritonEndpoint(
            stack,
            "Mme",
            artifacts=ModelArtifacts.from_manifest(manifest, "multi"),
            instance_type="ml.g5.xlarge",
            endpoint_name="multi",
        )
        v = ep.add_verification()
        app.synth()
        seconds = time.perf_counter() - start
        text = (Path(out) / "Fleet.template.json").read_text()
    template = json.loads(text)
    [cr] = [r for r in template["Resources"].values() if r["Type"] == "Custom::TritonVerification"]
    return {
        "seconds": seconds,
        "template_bytes": len(text.encode()),
        "resources": len(template["Resources"]),
        "verification_property_bytes": len(json.dumps(cr["Properties"])),
        "checked": len(v.selection.sampled) if v.selection else len(v.checks),
        "total": v.selection.total if v.selection else len(v.checks),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[100, 1000, 5000])
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args(argv)
    rows = []
    synth_once(fleet_manifest(10))  # warm-up: jsii, the Lambda and S3-asset modules, the handler asset
    for n in args.sizes:
        manifest = fleet_manifest(n)
        runs = [synth_once(manifest) for _ in range(args.rounds)]
        best = min(runs, key=lambda r: r["seconds"])
        rows.append({"target_models": n, **best})
        print(
            f"N={n:>5}: synth {best['seconds']:.2f} s, template {best['template_bytes']:,} bytes, "
            f"{best['resources']} resources, verification properties {best['verification_property_bytes']:,} bytes, "
            f"checks {best['checked']}/{best['total']}",
            flush=True,
        )
    summary = []
    for a, b in zip(rows, rows[1:], strict=False):
        growth = b["target_models"] / a["target_models"]
        t_ratio, s_ratio = b["seconds"] / a["seconds"], b["template_bytes"] / a["template_bytes"]
        print(
            f"{a['target_models']} -> {b['target_models']} ({growth:.0f}x N): time {t_ratio:.2f}x, size {s_ratio:.2f}x"
        )
        label = f"{a['target_models']:,} -> {b['target_models']:,} TargetModels ({growth:.0f}x)"
        summary += [
            {
                "label": f"synth time growth, {label}",
                "value": t_ratio,
                "unit": "x",
                "target": f"<= {growth:.0f}x",
            },
            {
                "label": f"template size growth, {label}",
                "value": s_ratio,
                "unit": "x",
                "target": f"<= {growth:.0f}x",
            },
        ]
    for r in rows:
        summary += [
            {
                "label": f"synth, {r['target_models']:,} TargetModels",
                "value": r["seconds"],
                "unit": "s",
                "target": "",
            },
            {
                "label": f"template, {r['target_models']:,} TargetModels",
                "value": r["template_bytes"] / 1000,
                "unit": "kB",
                "target": "<= 1,000 kB",
            },
        ]
    result = {
        "name": "synth_fleet",
        "command": "python -m bench.synth_fleet",
        "machine": f"{platform.machine()} {os.cpu_count()} cores, Python {platform.python_version()}, {platform.system()}",
        "rows": rows,
        "summary": summary,
    }
    tmp = RESULTS.with_suffix(".json.tmp")
    tmp.write_text(json.dumps(result, indent=1) + "\n")
    tmp.replace(RESULTS)
    return 0


if __name__ == "__main__":
    sys.exit(main())
