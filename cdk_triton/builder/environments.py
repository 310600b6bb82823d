"""Pack a python model's execution environment: its declared requirements, resolved from wheels only
for the target container's Python and platform, written as a reproducible, content-addressed
``.tar.gz`` that Triton's python backend loads through ``EXECUTION_ENV_PATH``
(the rules: ``cdk_triton.config.python_env``).

Resolution runs ``pip download --only-binary=:all: --platform <container> --python-version <X.Y>
--implementation cp`` (``--no-index --find-links <wheelhouse>`` when ``CDK_TRITON_WHEELHOUSE`` names
one); the wheels are unpacked into ``lib/pythonX.Y/site-packages`` (no bytecode, no console scripts),
``bin/activate`` prepends that folder to ``PYTHONPATH`` relative to its own path, and the tar has
sorted members, mtime 0, uid/gid 0 and a gzip header with mtime 0: the same inputs give the same
bytes. The key hashes the normalized requirements, the Python, the platform and the resolved wheels'
names and sha256; the archive is cached at ``<out>/cache/envs/<key16>-py<X.Y>.tar.gz`` and shared by
every model (and every build of that output) with the same key.
"""

from __future__ import annotations

import gzip
import hashlib
import io
import json
import os
import re
import subprocess
import sys
import tarfile
import tempfile
import zipfile
from dataclasses import dataclass
from pathlib import Path

from cdk_triton.config import python_env
from cdk_triton.errors import BuildError

#: ``bin/activate``: locates itself (bash, as the stub launcher sources it), prepends site-packages
_ACTIVATE = """\
# cdk-triton execution environment: wheels for Python {python} ({platform}); sourced (bash) by Triton's
# python backend before it starts the stub. No interpreter inside: on first activation this folder
# becomes a virtual environment of the python3 found on PATH (the container's), whose site-packages
# stay visible; the stub finds it by searching PATH for python3 and reading pyvenv.cfg beside it.
_cdk_env="$(cd "$(dirname "${{BASH_SOURCE[0]:-$0}}")/.." && pwd)"
_cdk_site="$_cdk_env/lib/python{python}/site-packages"
if [ ! -e "$_cdk_env/pyvenv.cfg" ]; then
    _cdk_base="$(command -v python3)"
    _cdk_real="$(readlink -f "$_cdk_base")"
    "$_cdk_base" -c 'import site; print("\\n".join(site.getsitepackages()))' > "$_cdk_site/_cdk_triton_base.pth"
    ln -sf "$_cdk_real" "$_cdk_env/bin/python3"
    printf 'home = %s\\ninclude-system-site-packages = true\\nversion = {python}\\n' "$(dirname "$_cdk_real")" \\
        > "$_cdk_env/pyvenv.cfg.$$" && mv "$_cdk_env/pyvenv.cfg.$$" "$_cdk_env/pyvenv.cfg"
fi
export PATH="$_cdk_env/bin:$PATH"
export PYTHONPATH="$_cdk_site${{PYTHONPATH:+:$PYTHONPATH}}"
export PYTHONNOUSERSITE=1
export PYTHONDONTWRITEBYTECODE=1
unset _cdk_env _cdk_site _cdk_base _cdk_real
"""


@dataclass(frozen=True, kw_only=True, slots=True)
class PackedEnv:
    """One packed environment.

    Attributes:
        key: sha256 of the normalized requirements, Python, platform and resolved wheels.
        archive: the cached ``.tar.gz``.
        python: the Python minor version it is for (``3.10``).
        platform: the wheel platform tag resolved for.
        wheels: the resolved wheel file names (numpy left out: the container's).
        top_level: the import names the wheels provide (``top_level.txt``, else ``RECORD``).
        size: the archive's bytes.
        unpacked: the bytes of its files once Triton extracts it (into the volume's /tmp).
    """

    key: str
    archive: Path
    python: str
    platform: str
    wheels: tuple[str, ...]
    top_level: frozenset[str]
    size: int
    unpacked: int

    @property
    def volume_bytes(self) -> int:
        """What it takes on the endpoint's volume: the archive in the downloaded model data, again in
        its unpacked copy, and the folder Triton extracts it to."""
        return 2 * self.size + self.unpacked


def wheelhouse() -> Path | None:
    """The wheelhouse resolution reads offline (``CDK_TRITON_WHEELHOUSE``), or None for the index."""
    v = os.environ.get("CDK_TRITON_WHEELHOUSE")
    return Path(v).resolve() if v else None


def pack(
    requirements: tuple[str, ...],
    *,
    python: str,
    platform: str,
    out_dir: Path,
    name: str,
    max_bytes: int | None = None,
) -> PackedEnv:
    """The environment of ``requirements`` for ``python`` / ``platform``, from the cache or packed now.

    Raises (BuildError, before anything is written to the model or the cache): PythonEnvNoWheel,
    PythonEnvPythonMismatch, PythonEnvNumpy (from the resolution), PythonEnvTooLarge (over ``max_bytes``)."""
    reqs = python_env.normalize(requirements)
    cache = out_dir / "cache" / "envs"
    with tempfile.TemporaryDirectory(prefix="cdk-triton-env-") as tmp:
        wheels = _download(reqs, python=python, platform=platform, dest=Path(tmp), name=name)
        kept = [
            w
            for w in wheels
            if python_env.normalize_name(w.name.split("-")[0]) not in python_env.CONTAINER_PACKAGES
        ]
        resolution = [(w.name, hashlib.sha256(w.read_bytes()).hexdigest()) for w in kept]
        key = hashlib.sha256(
            json.dumps(
                {"requirements": reqs, "python": python, "platform": platform, "wheels": resolution},
                sort_keys=True,
            ).encode()
        ).hexdigest()
        archive = python_env.cached_env(out_dir, key, python)
        top = frozenset(n for w in kept for n in _top_level(w))
        if archive.is_file():
            data = None
            size = archive.stat().st_size
            unpacked = _unpacked_bytes(archive)
        else:
            meta: dict[str, object] = {
                "key": key,
                "requirements": list(reqs),
                "python": python,
                "platform": platform,
                "wheels": [w for w, _ in resolution],
            }
            data = _archive(kept, python=python, platform=platform, metadata=meta)
            size = len(data)
            unpacked = _unpacked_bytes(io.BytesIO(data))
        need = 2 * size + unpacked
        if max_bytes is not None and need > max_bytes:
            raise BuildError(
                f"python model '{name}': its environment ({', '.join(reqs)}) takes {need / 1e6:.1f} MB of the "
                f"endpoint's volume ({size / 1e6:.1f} MB packed, twice, and {unpacked / 1e6:.1f} MB extracted), "
                f"more than the {max_bytes / 1e6:.0f} MB the largest volume holds: drop or "
                "replace the largest requirements, or give the endpoint a larger volume",
                code="PythonEnvTooLarge",
            )
        if data is not None:
            cache.mkdir(parents=True, exist_ok=True)
            part = archive.with_suffix(f".{os.getpid()}.part")
            part.write_bytes(data)
            part.replace(archive)  # atomic: a concurrent build writes the same bytes
    return PackedEnv(
        key=key,
        archive=archive,
        python=python,
        platform=platform,
        wheels=tuple(w for w, _ in resolution),
        top_level=top,
        size=size,
        unpacked=unpacked,
    )


def _unpacked_bytes(archive: Path | io.BytesIO) -> int:
    with (
        tarfile.open(fileobj=archive, mode="r:gz")
        if isinstance(archive, io.BytesIO)
        else tarfile.open(archive, "r:gz") as tar
    ):
        return sum(m.size for m in tar.getmembers())


def _download(reqs: tuple[str, ...], *, python: str, platform: str, dest: Path, name: str) -> list[Path]:
    """``pip download`` the wheels of ``reqs`` (and their dependencies) for the target into ``dest``."""
    cmd = pip_download_command(python=python, platform=platform, dest=dest / "wheels", work=dest)
    house = wheelhouse()
    if house is not None:
        cmd += ["--no-index", "--find-links", str(house)]
    proc = subprocess.run([*cmd, *reqs], capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        raise resolution_error(
            proc.stderr + proc.stdout, reqs, python=python, platform=platform, name=name, house=house
        )
    return sorted((dest / "wheels").glob("*.whl"))


def pip_download_command(*, python: str, platform: str, dest: Path, work: Path) -> list[str]:
    """The ``pip download`` command (without the requirements) that resolves wheels only for ``python`` /
    ``platform`` into ``dest``, numpy constrained to the container's: the build's and ``fill``'s."""
    constraints = work / "constraints.txt"
    constraints.write_text(python_env.CONTAINER_NUMPY + "\n", "utf-8")
    return [
        sys.executable, "-m", "pip", "download", "--quiet", "--disable-pip-version-check",
        "--only-binary=:all:", *(a for tag in python_env.platform_tags(platform) for a in ("--platform", tag)),
        "--python-version", python, "--implementation", "cp", "--dest", str(dest), "-c", str(constraints),
    ]  # fmt: skip


def resolution_error(
    text: str, reqs: tuple[str, ...], *, python: str, platform: str, name: str, house: Path | None
) -> BuildError:
    """The coded error of a failed resolution, from pip's own words."""
    tail = " | ".join(line.strip() for line in text.strip().splitlines()[-4:])
    where = f"wheelhouse {house}" if house else "the package index"
    what = f"python model '{name}': requirements {list(reqs)} for Python {python} ({platform}) from {where}"
    if "numpy" in text.lower() and ("conflict" in text.lower() or "numpy<2" in text):
        return BuildError(
            f"{what} need a numpy other than the container's ({python_env.CONTAINER_NUMPY}): pin a version of "
            f"the requirement that supports numpy 1 [pip: {tail}]",
            code="PythonEnvNumpy",
        )
    if "Requires-Python" in text or "requires a different Python" in text:
        return BuildError(
            f"{what}: a requirement does not support Python {python}, the target container's: pin a version "
            f"that does, or target a release with another Python (triton_version) [pip: {tail}]",
            code="PythonEnvPythonMismatch",
        )
    return BuildError(
        f"{what}: no wheel fits the target (wheels only: sdists are never built): pin a version with a "
        f"{platform} / py3-none-any wheel for cp{python.replace('.', '')}, or add one to the wheelhouse "
        f"(CDK_TRITON_WHEELHOUSE) [pip: {tail}]",
        code="PythonEnvNoWheel",
    )


def _top_level(wheel: Path) -> list[str]:
    """The import names a wheel provides: its ``top_level.txt``, else the first parts of ``RECORD``."""
    with zipfile.ZipFile(wheel) as z:
        names = z.namelist()
        top = next((n for n in names if n.endswith(".dist-info/top_level.txt")), None)
        if top:
            return [t.strip() for t in z.read(top).decode().splitlines() if t.strip()]
        found = set()
        for n in names:
            first = n.split("/")[0]
            if first.endswith((".dist-info", ".data")):
                continue
            found.add(re.sub(r"\.(py|so|pyd)$|\..*\.so$", "", first))
        return sorted(found)


_TAR_EPOCH = 0


def _archive(wheels: list[Path], *, python: str, platform: str, metadata: dict[str, object]) -> bytes:
    """The environment's ``.tar.gz`` bytes: members sorted, mtime 0, uid/gid 0, gzip mtime 0."""
    site = f"lib/python{python}/site-packages"
    files: dict[str, tuple[bytes, int]] = {
        "bin/activate": (_ACTIVATE.format(python=python, platform=platform).encode(), 0o644),
        python_env.ENV_METADATA: ((json.dumps(metadata, indent=1, sort_keys=True) + "\n").encode(), 0o644),
    }
    for w in wheels:
        with zipfile.ZipFile(w) as z:
            for info in z.infolist():
                if info.is_dir() or info.filename.endswith(".pyc") or "__pycache__" in info.filename:
                    continue
                parts = info.filename.split("/")
                if parts[0].endswith(".data"):  # purelib/platlib go to site-packages; scripts are dropped
                    if len(parts) < 3 or parts[1] not in ("purelib", "platlib"):
                        continue
                    parts = parts[2:]
                mode = 0o755 if (info.external_attr >> 16) & 0o111 else 0o644
                files[f"{site}/{'/'.join(parts)}"] = (z.read(info), mode)
    dirs = sorted({"/".join(p.split("/")[:i]) for p in files for i in range(1, p.count("/") + 1)})
    raw = io.BytesIO()
    with tarfile.open(fileobj=raw, mode="w", format=tarfile.PAX_FORMAT) as tar:
        for path in sorted({*dirs, *files}):
            if path in files:
                data, mode = files[path]
                tar.addfile(_info(path, len(data), mode, tarfile.REGTYPE), io.BytesIO(data))
            else:
                tar.addfile(_info(path, 0, 0o755, tarfile.DIRTYPE))
    out = io.BytesIO()
    with gzip.GzipFile(fileobj=out, mode="wb", compresslevel=9, mtime=0, filename="") as gz:
        gz.write(raw.getvalue())
    return out.getvalue()


def _info(name: str, size: int, mode: int, kind: bytes) -> tarfile.TarInfo:
    t = tarfile.TarInfo(name)
    t.size, t.mode, t.type, t.mtime = size, mode, kind, _TAR_EPOCH
    t.uid = t.gid = 0
    t.uname = t.gname = ""
    return t


def read_metadata(archive: Path) -> dict[str, object]:
    """The description at a packed environment's root (:data:`~cdk_triton.config.python_env.ENV_METADATA`)."""
    with tarfile.open(archive, "r:gz") as tar:
        f = tar.extractfile(python_env.ENV_METADATA)
        assert f is not None
        return dict(json.loads(f.read()))
