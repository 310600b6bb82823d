"""Packaging throughput: cdk-triton's isal tar.gz vs `tar czf` vs uncompressed tar, same repository.

python -m bench.build_package --size-mb 128
"""

from __future__ import annotations

import argparse
import subprocess
import tempfile
from pathlib import Path

from bench.build_common import make_repository, timed, write_result
from cdk_triton.builder.package import pack, write_tar


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--size-mb", type=int, default=128, help="repository size in MB (default 128)")
    ap.add_argument("--threads", type=int, default=1, help="isal compression threads (default 1)")
    args = ap.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp_:
        tmp = Path(tmp_)
        repo = make_repository(tmp / "repo", args.size_mb)
        size = sum(p.stat().st_size for p in repo.rglob("*") if p.is_file())
        mb = size / 1e6
        dirs = [(d.name, d) for d in sorted(repo.iterdir())]
        t_isal, (archive, _, isal_bytes) = timed(
            lambda: pack(dirs, tmp / "isal", "repo", threads=args.threads)
        )
        t_czf, _ = timed(
            lambda: subprocess.run(["tar", "czf", str(tmp / "gnu.tar.gz"), "-C", str(repo), "."], check=True)
        )
        t_cf, _ = timed(
            lambda: subprocess.run(["tar", "cf", str(tmp / "gnu.tar"), "-C", str(repo), "."], check=True)
        )

        def plain() -> None:
            with (tmp / "py.tar").open("wb") as fh:
                write_tar(fh, dirs)

        t_plain, _ = timed(plain)
        czf_bytes = (tmp / "gnu.tar.gz").stat().st_size
    summary = [
        {"label": "isal tar.gz vs tar czf (speed)", "value": t_czf / t_isal, "unit": "x", "target": ">= 8x"},
        {"label": "isal tar.gz throughput", "value": mb / t_isal, "unit": "MB/s", "target": None},
        {
            "label": "isal tar.gz vs uncompressed tar cf (time ratio)",
            "value": t_isal / t_cf,
            "unit": "x",
            "target": None,
        },
    ]
    details = {
        "size_mb": round(mb, 1),
        "threads": args.threads,
        "seconds": {
            "isal_tar_gz": t_isal,
            "tar_czf": t_czf,
            "tar_cf": t_cf,
            "python_tar_uncompressed": t_plain,
        },
        "mb_per_s": {
            "isal_tar_gz": mb / t_isal,
            "tar_czf": mb / t_czf,
            "tar_cf": mb / t_cf,
            "python_tar_uncompressed": mb / t_plain,
        },
        "compressed_bytes": {"isal": isal_bytes, "tar_czf": czf_bytes},
        "archive": archive.name,
    }
    write_result("build_package", f"python -m bench.build_package --size-mb {args.size_mb}", summary, details)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
