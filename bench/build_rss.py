"""Peak RSS while packing a large repository (streaming: memory must stay flat; target < 300 MB).

python -m bench.build_rss --size-mb 512      # 2 GB: --size-mb 2048
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

from bench.build_common import make_repository, write_result

CHILD = """
import json, resource, sys, time
from pathlib import Path
from cdk_triton.builder.package import pack
repo = Path(sys.argv[1])
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
t = time.perf_counter()
path, sha, size = pack([(d.name, d) for d in sorted(repo.iterdir())], Path(sys.argv[2]), "repo")
print(json.dumps({"rss_after_import_kb": before, "peak_rss_kb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss,
                  "seconds": time.perf_counter() - t, "archive_bytes": size}))
"""


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument(
        "--size-mb", type=int, default=512, help="repository size in MB (default 512; 2048 for 2 GB)"
    )
    args = ap.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp_:
        tmp = Path(tmp_)
        repo = make_repository(tmp / "repo", args.size_mb)
        proc = subprocess.run(
            [sys.executable, "-c", CHILD, str(repo), str(tmp / "out")],
            check=True,
            capture_output=True,
            text=True,
        )
        res = json.loads(proc.stdout.strip().splitlines()[-1])
    peak_mb = res["peak_rss_kb"] / 1024
    summary = [
        {
            "label": f"peak RSS packing a {args.size_mb} MB repository",
            "value": peak_mb,
            "unit": "MB",
            "target": "< 300 MB",
        },
        {"label": "peak RSS / repository size", "value": peak_mb / args.size_mb, "unit": "x", "target": None},
    ]
    details = {**res, "size_mb": args.size_mb, "rss_after_import_mb": res["rss_after_import_kb"] / 1024}
    write_result("build_rss", f"python -m bench.build_rss --size-mb {args.size_mb}", summary, details)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
