"""``cdk-triton serve --runtime target``: the CPU stand-in backends run in the release's own runtimes.

By default (``--runtime stand-in``) the python-based stand-ins of the ``onnxruntime`` and ``pytorch``
backends (``local/backends``) run with the torch / onnxruntime installed beside cdk-triton. With
``--runtime target`` every Triton python stub of the server runs with the interpreter of the manifest's
release environment (``cdk_triton.runtimes.environments``: Triton 24.09 -> libtorch 2.5.0, ONNX Runtime
1.19.2, numpy<2), so a local answer comes from the same library versions as the endpoint's.

How: the stub finds its Python environment by searching ``PATH`` for ``python3`` (and reading the
``pyvenv.cfg`` beside it); :func:`use_target_runtime` creates or finds the environment and names its
``bin/`` in :data:`~cdk_triton.config.target_runtime.STUB_PYTHON_VARIABLE`, which
``runtime.server_base_environment`` puts first on the server's ``PATH``. A python model with a packed
environment still activates its own archive (``EXECUTION_ENV_PATH``), which goes first on ``PATH`` inside
its stub, as on SageMaker. The environment's Python is this interpreter's, so the stub matches.
"""

from __future__ import annotations

import os
from pathlib import Path

from cdk_triton.config import formats
from cdk_triton.config import target_runtime as rules
from cdk_triton.config.manifest import read_manifest
from cdk_triton.local.errors import LocalServerError
from cdk_triton.runtimes import environments


def runtimes_of(manifest_path: str | os.PathLike[str]) -> tuple[str, frozenset[str]]:
    """(release, the CPU runtimes its models need) of a manifest."""
    manifest = read_manifest(manifest_path)
    needed = set()
    for m in manifest.models.values():
        row = formats.FORMATS.get(m.format)
        if row is not None and row.release_fact in rules.CPU_RUNTIMES:
            needed.add(str(row.release_fact))
    return manifest.triton_version, frozenset(needed)


def use_target_runtime(manifest_path: str | os.PathLike[str]) -> environments.RuntimeEnv:
    """Create or find the manifest release's environment and make the server's stubs run in it (this
    process and the servers it starts, a detached ``serve`` included).

    Raises:
        LocalServerError(TargetRuntimeUnavailable): the environment cannot be created here.
    """
    release, runtimes = runtimes_of(manifest_path)
    try:
        env = environments.ensure_environment(release, runtimes)
    except environments.RuntimeUnavailable as exc:
        pins = " ".join(rules.requirements(release, sorted(runtimes)))
        raise LocalServerError(
            f"serve --runtime target needs Triton {release}'s runtimes ({pins}) in an environment under "
            f"{rules.root()}, and none could be created here: {exc}; serve with --runtime stand-in (the default), "
            f"or make the package index reachable ({environments.INDEX_VARIABLE} names a mirror)",
            code="TargetRuntimeUnavailable",
        ) from None
    os.environ[rules.STUB_PYTHON_VARIABLE] = str(Path(env.python).parent)
    return env
