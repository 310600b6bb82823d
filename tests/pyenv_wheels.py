"""Tiny wheels the python-environment tests build for themselves (no index, no network)."""

from __future__ import annotations

import base64
import hashlib
import zipfile
from pathlib import Path


def make_wheel(
    house: Path,
    name: str,
    version: str = "1.0",
    *,
    module: str | None = None,
    source: str = "VALUE = 42\n",
    requires: tuple[str, ...] = (),
    tag: str = "py3-none-any",
    requires_python: str | None = None,
    top_level: bool = True,
) -> Path:
    """A wheel of one module ``module`` (default: ``name``) in ``house``; returns its path."""
    module = module or name.replace("-", "_")
    dist = f"{name.replace('-', '_')}-{version}"
    house.mkdir(parents=True, exist_ok=True)
    path = house / f"{dist}-{tag}.whl"
    meta = f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n"
    meta += "".join(f"Requires-Dist: {r}\n" for r in requires)
    if requires_python:
        meta += f"Requires-Python: {requires_python}\n"
    files = {
        f"{module}/__init__.py": source,
        f"{dist}.dist-info/METADATA": meta,
        f"{dist}.dist-info/WHEEL": f"Wheel-Version: 1.0\nGenerator: tests\nRoot-Is-Purelib: true\nTag: {tag}\n",
        f"{dist}.dist-info/entry_points.txt": f"[console_scripts]\n{module}-cli = {module}:main\n",
    }
    if top_level:
        files[f"{dist}.dist-info/top_level.txt"] = module + "\n"
    record = []
    for n, text in files.items():
        digest = base64.urlsafe_b64encode(hashlib.sha256(text.encode()).digest()).rstrip(b"=").decode()
        record.append(f"{n},sha256={digest},{len(text.encode())}")
    record.append(f"{dist}.dist-info/RECORD,,")
    files[f"{dist}.dist-info/RECORD"] = "\n".join(record) + "\n"
    with zipfile.ZipFile(path, "w") as z:
        for n, text in sorted(files.items()):
            info = zipfile.ZipInfo(n, date_time=(1980, 1, 1, 0, 0, 0))
            z.writestr(info, text)
    return path
