"""`make bench` / `python -m bench`: run every benchmark, then refresh the performance table (docs/concepts/proven-where.md).

Each benchmark measures its comparisons side by side in one run and writes bench/results/<name>.json.
`python -m bench NAME ...` runs only those (names: build_package, build_rss, build_noop, build_floor,
build_export, build_fleet, build_auto, memory_estimate, synth_bench, synth_multi_bench, synth_fleet, serve_fleet, local_bench, local_example, local_cold, target_runtime).
"""

from __future__ import annotations

import subprocess
import sys

BENCHMARKS = [
    "build_package",
    "build_rss",
    "build_noop",
    "build_floor",
    "build_export",
    "build_fleet",
    "build_auto",
    "memory_estimate",
    "synth_bench",
    "synth_multi_bench",
    "synth_fleet",
    "serve_fleet",
    "local_bench",
    "local_example",
    "local_cold",
    "target_runtime",
]


def main(argv: list[str]) -> int:
    names = argv or BENCHMARKS
    unknown = sorted(set(names) - set(BENCHMARKS))
    if unknown:
        print(
            f"unknown benchmark(s): {', '.join(unknown)}; choose from {', '.join(BENCHMARKS)}",
            file=sys.stderr,
        )
        return 2
    failed = []
    for name in names:
        print(f"\n== bench.{name} ==", flush=True)
        if subprocess.run([sys.executable, "-m", f"bench.{name}"]).returncode != 0:
            failed.append(name)
    subprocess.run([sys.executable, "-m", "bench.report", "--write"], check=True)
    if failed:
        print(f"failed: {', '.join(failed)}", file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
