"""The rules of a python model's packed execution environment, written once for the build (which packs
it) and the local endpoint (which serves it).

How Triton loads one (python_backend ``src/pb_env.cc`` and ``src/stub_launcher.cc``, and its README
"Creating Custom Execution Environments", read 2026-11-27 at
https://github.com/triton-inference-server/python_backend/blob/main/README.md): the model's
``EXECUTION_ENV_PATH`` parameter names a ``.tar.gz`` that is extracted to a temporary folder, which
must hold ``bin/activate``; the stub is started as ``source <env>/bin/activate && exec env
LD_LIBRARY_PATH=<env>/lib:$LD_LIBRARY_PATH <stub>``; a path starting ``$$TRITON_MODEL_DIRECTORY``
must stay inside the model folder. The environment's Python minor version must be the stub's.

cdk-triton packs the archive from wheels only (no interpreter inside: the container's Python runs
the stub, and ``bin/activate`` prepends the environment's ``site-packages`` to ``PYTHONPATH``).
"""

from __future__ import annotations

import re
from pathlib import Path

#: the archive's name inside the model folder (beside config.pbtxt, outside the version folder)
ENV_ARCHIVE = "python_env.tar.gz"

#: the parameter that names it, as Triton documents it
ENV_PARAMETER = "EXECUTION_ENV_PATH"

#: the value of that parameter: a path inside the model folder
ENV_PARAMETER_VALUE = f"$$TRITON_MODEL_DIRECTORY/{ENV_ARCHIVE}"

#: the description the build writes at the archive's root (requirements, python, platform, wheels)
ENV_METADATA = "cdk-triton-env.json"

#: packages the Triton container provides to every python model: never packed
CONTAINER_PACKAGES = frozenset({"numpy", "triton-python-backend-utils"})

#: the numpy range the container's python backend runs with (numpy 2 breaks the 2.51 backend's
#: outputs, measured here with the nvidia-pytriton 0.7.0 server); a resolution needing another numpy is refused
CONTAINER_NUMPY = "numpy<2"

#: the container's glibc by its system Python (the base image of build.py: ubuntu 20.04 -> 2.31,
#: 22.04 -> 2.35, 24.04 -> 2.39; the same sources as the release table's python fact)
_GLIBC_BY_PYTHON = {"3.8": "2_31", "3.10": "2_35", "3.12": "2_39"}

#: a PEP 508 requirement cdk-triton accepts: a name, optional extras, optional version specifiers and
#: an optional environment marker; no URLs, paths or pip options (the wheels must come from an index
#: or the wheelhouse)
_NAME = r"[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?"
_REQUIREMENT = re.compile(
    rf"^\s*(?P<name>{_NAME})\s*(?:\[\s*{_NAME}(?:\s*,\s*{_NAME})*\s*\])?\s*"
    r"(?P<spec>(?:(?:===|==|!=|<=|>=|~=|<|>)\s*[A-Za-z0-9.*+!_-]+\s*,?\s*)*)"
    r"(?:;\s*(?P<marker>[^;]+))?\s*$"
)


def container_platform(python: str) -> str:
    """The wheel platform tag of the container whose system Python is ``python`` (pip expands a
    ``manylinux_2_X`` tag to every older glibc)."""
    return f"manylinux_{_GLIBC_BY_PYTHON.get(python, '2_35')}_x86_64"


def platform_tags(platform: str) -> list[str]:
    """Every wheel platform tag a ``manylinux_2_X_<arch>`` host runs, newest first: ``manylinux_2_X`` down to
    ``manylinux_2_5`` and the legacy aliases (``manylinux2014`` = 2_17, ``manylinux2010`` = 2_12,
    ``manylinux1`` = 2_5). pip 26 does not expand an explicit ``--platform`` itself (measured 2026-11-27:
    ``--platform manylinux_2_35_x86_64`` finds no ``manylinux_2_17`` wheel), so the build passes them all."""
    m = re.fullmatch(r"manylinux_2_(\d+)_(\w+)", platform)
    if not m:
        return [platform]
    glibc, arch = int(m.group(1)), m.group(2)
    legacy = {17: "manylinux2014", 12: "manylinux2010", 5: "manylinux1"}
    out = []
    for minor in range(glibc, 4, -1):
        out.append(f"manylinux_2_{minor}_{arch}")
        if minor in legacy:
            out.append(f"{legacy[minor]}_{arch}")
    return out


def distribution_name(requirement: str) -> str | None:
    """The normalized distribution name of a requirement line, or None when it is not one cdk-triton
    accepts (see :data:`_REQUIREMENT`)."""
    m = _REQUIREMENT.match(requirement)
    return normalize_name(m.group("name")) if m else None


def normalize_name(name: str) -> str:
    """PEP 503 normalization (``Foo_Bar.baz`` -> ``foo-bar-baz``)."""
    return re.sub(r"[-_.]+", "-", name).lower()


def normalize(requirements: tuple[str, ...] | list[str]) -> tuple[str, ...]:
    """The requirement lines as the environment's key hashes them: names normalized, whitespace dropped
    (collapsed in markers), sorted, duplicates dropped."""
    return tuple(sorted({_canonical(r) for r in requirements}))


def _canonical(line: str) -> str:
    """No whitespace before the marker, the name normalized; the marker's whitespace collapsed."""
    head, sep, marker = line.partition(";")
    head = re.sub(r"\s+", "", head)
    m = re.match(_NAME, head)
    if m:
        head = normalize_name(m.group(0)) + head[m.end() :]
    return head + (f"; {' '.join(marker.split())}" if sep else "")


def cached_env(out_dir: Path, env_key: str, python: str) -> Path:
    """Where the build caches a packed environment: ``<out>/cache/envs/<key16>-py<python>.tar.gz``."""
    return out_dir / "cache" / "envs" / f"{env_key[:16]}-py{python}.tar.gz"


def local_variant(out_dir: Path, env_key: str, python: str) -> Path:
    """Where the build keeps the environment of key ``env_key`` (the target's) packed again for the
    build host's Python ``python``, for the local endpoint whose stub runs that Python:
    ``<out>/cache/envs/<key16>.for-py<python>.tar.gz``."""
    return out_dir / "cache" / "envs" / f"{env_key[:16]}.for-py{python}.tar.gz"
