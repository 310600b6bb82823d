"""The floor of a no-op build, as a bare script (nothing but what it must import): start Python, parse
models.yaml with the build's YAML loader (PyYAML's libyaml CSafeLoader where installed), read the
manifest, stat every output file. ``python bench/floor_noop.py CONFIG OUT``."""

import json
import os
import sys

import yaml

config, out = sys.argv[1], sys.argv[2]
with open(config, encoding="utf-8") as fh:
    decl = yaml.load(fh.read(), Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))  # noqa: S506
with open(os.path.join(out, "manifest.json"), encoding="utf-8") as fh:
    manifest = json.load(fh)
n = 0
for dirpath, _, filenames in os.walk(out):
    for f in filenames:
        os.stat(os.path.join(dirpath, f))
        n += 1
sys.exit(0 if len(decl["models"]) + len(manifest["models"]) + n > 0 else 1)
