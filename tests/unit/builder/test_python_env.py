"""Python models with requirements: the build packs an execution environment from wheels (a tiny
wheelhouse the tests build themselves; pip runs with --no-index)."""

from __future__ import annotations

import gzip
import io
import json
import tarfile
from pathlib import Path

import pytest

from cdk_triton.config import python_env
from cdk_triton.errors import BuildError, TritonValidationError
from tests.pyenv_wheels import make_wheel
from tests.unit.builder.helpers import write_decl

MODEL_PY = """\
import numpy as np
import triton_python_backend_utils as pb_utils
import {module}


class TritonPythonModel:
    def execute(self, requests):
        out = []
        for r in requests:
            x = pb_utils.get_input_tensor_by_name(r, "x").as_numpy()
            y = (x + {module}.VALUE).astype(np.float32)
            out.append(pb_utils.InferenceResponse([pb_utils.Tensor("y", y)]))
        return out
"""


def decl(tmp: Path, reqs: list[str], *, module: str = "greet", names: tuple[str, ...] = ("shout",)) -> Path:
    src = tmp / "pymodel"
    src.mkdir(parents=True, exist_ok=True)
    (src / "model.py").write_text(MODEL_PY.format(module=module))
    body = "".join(
        f"""
  - name: {n}
    format: python
    source: {{python: pymodel}}
    requirements: {json.dumps(reqs)}
    inputs: [{{name: x, dtype: FP32, shape: [4]}}]
    outputs: [{{name: y, dtype: FP32, shape: [4]}}]
    max_batch_size: 4
"""
        for n in names
    )
    return write_decl(tmp, body)


@pytest.fixture
def house(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    h = tmp_path / "wheelhouse"
    make_wheel(h, "greet", "1.0", source="VALUE = 42\n", requires=("colors==2.0",))
    make_wheel(h, "colors", "2.0", module="colors", source="RED = 1\n", top_level=False)
    make_wheel(h, "needs-numpy2", "1.0", module="n2", requires=("numpy>=2",))
    make_wheel(h, "numpy", "2.0.0")
    make_wheel(h, "only-new-python", "1.0", module="onp", requires_python=">=3.13")
    monkeypatch.setenv("CDK_TRITON_WHEELHOUSE", str(h))
    return h


def _build(decl_path: Path, out: Path, **kw: object) -> None:
    from cdk_triton.builder.steps import run_build

    run_build(decl_path, out_dir=out, progress=False, **kw)


def _model_dir(out: Path, name: str) -> Path:
    return next(p for p in (out / "cache" / "models").glob(f"{name}-*") if p.is_dir())


def test_environment_is_packed_wired_and_reproducible(tmp_path: Path, house: Path) -> None:
    out = tmp_path / "out"
    _build(decl(tmp_path / "a", ["greet==1.0"], names=("shout", "yell")), out)
    model = _model_dir(out, "shout")
    cfg = (model / "config.pbtxt").read_text()
    assert 'key: "EXECUTION_ENV_PATH"' in cfg and "$$TRITON_MODEL_DIRECTORY/python_env.tar.gz" in cfg
    data = (model / python_env.ENV_ARCHIVE).read_bytes()
    assert data[4:8] == b"\0\0\0\0"  # gzip header mtime 0
    with tarfile.open(fileobj=io.BytesIO(data), mode="r:gz") as tar:
        members = tar.getmembers()
        names = [m.name for m in members]
        meta = json.loads(tar.extractfile(python_env.ENV_METADATA).read())  # type: ignore[union-attr]
        activate = tar.extractfile("bin/activate").read().decode()  # type: ignore[union-attr]
    assert names == sorted(names) and {(m.mtime, m.uid, m.gid) for m in members} == {(0, 0, 0)}
    assert "lib/python3.10/site-packages/greet/__init__.py" in names
    assert "lib/python3.10/site-packages/colors/__init__.py" in names  # a dependency, found by RECORD
    assert not [n for n in names if n.endswith(".pyc") or n.startswith("bin/") and n != "bin/activate"]
    assert meta["python"] == "3.10" and meta["wheels"] == [
        "colors-2.0-py3-none-any.whl",
        "greet-1.0-py3-none-any.whl",
    ]
    assert "BASH_SOURCE" in activate and str(tmp_path) not in activate  # locates itself
    # shared: both models hold the same bytes, packed once into the cache for the target's Python
    assert (_model_dir(out, "yell") / python_env.ENV_ARCHIVE).read_bytes() == data
    assert len(list((out / "cache" / "envs").glob("*-py3.10.tar.gz"))) == 1
    # reproducible: another output directory, the same bytes
    _build(decl(tmp_path / "b", ["greet == 1.0"]), tmp_path / "out2")
    assert (_model_dir(tmp_path / "out2", "shout") / python_env.ENV_ARCHIVE).read_bytes() == data
    # the sample ran with the environment on the path: y = x + greet.VALUE
    record = json.loads(next((out / "cache" / "models").glob("shout-*.json")).read_text())
    got = record["sample"]["response"]["outputs"][0]["data"]
    sent = record["sample"]["request"]["inputs"][0]["data"]
    assert got == pytest.approx([v + 42 for v in sent])


def test_activate_locates_itself_and_makes_the_python_on_path_see_the_wheels(
    tmp_path: Path, house: Path
) -> None:
    """What Triton's stub launcher does: ``source <env>/bin/activate && exec ...``; the stub's embedded
    Python then finds its environment through the python3 on PATH (this host's variant, Python 3.11)."""
    import subprocess
    import sys

    out = tmp_path / "out"
    _build(decl(tmp_path, ["greet==1.0"]), out)
    with tarfile.open(_model_dir(out, "shout") / python_env.ENV_ARCHIVE) as tar:
        key = json.loads(tar.extractfile(python_env.ENV_METADATA).read())["key"]  # type: ignore[union-attr]
    host = f"{sys.version_info.major}.{sys.version_info.minor}"
    env = tmp_path / "moved" / "0"
    env.mkdir(parents=True)
    with tarfile.open(python_env.local_variant(out, key, host)) as tar:
        tar.extractall(env, filter="data")
    script = (
        f"source {env}/bin/activate && python3 -c 'import sys, greet, numpy; print(sys.prefix, greet.VALUE)'"
    )
    path = f"{Path(sys.executable).parent}:/usr/bin:/bin"  # the local server's PATH: its Python first
    got = subprocess.run(
        ["bash", "-c", script], capture_output=True, text=True, check=True, env={"PATH": path}
    ).stdout.split()
    assert got == [str(env), "42"]
    assert (env / "pyvenv.cfg").is_file() and (env / "bin" / "python3").is_symlink()


@pytest.mark.parametrize(
    ("reqs", "code"),
    [
        (["absent==1.0"], "PythonEnvNoWheel"),
        (["needs-numpy2==1.0"], "PythonEnvNumpy"),
        (["only-new-python==1.0"], "PythonEnvPythonMismatch"),
    ],
)
def test_resolution_errors_are_coded_and_write_nothing(
    tmp_path: Path, house: Path, reqs: list[str], code: str
) -> None:
    out = tmp_path / "out"
    with pytest.raises(BuildError) as e:
        _build(decl(tmp_path, reqs), out)
    assert e.value.code == code and "shout" in str(e.value)
    assert not list((out / "cache" / "models").glob("shout-*")) and not (out / "cache" / "envs").exists()


def test_imports_are_checked_against_what_the_wheels_provide(tmp_path: Path, house: Path) -> None:
    with pytest.raises(BuildError) as e:
        _build(decl(tmp_path, ["greet==1.0"], module="pandas"), tmp_path / "out")
    assert e.value.code == "PythonModelImport" and "'pandas'" in str(e.value)


@pytest.mark.parametrize(
    ("reqs", "code"),
    [(["git+https://x/y.git"], "InvalidRequirement"), (["numpy==1.26"], "ContainerRequirement")],
)
def test_declaration_refuses_bad_requirements(tmp_path: Path, reqs: list[str], code: str) -> None:
    from cdk_triton.builder.declarations import load_declaration

    with pytest.raises(TritonValidationError) as e:
        load_declaration(decl(tmp_path, reqs))
    assert code in str(e.value) and "models[0].requirements[0]" in str(e.value)


def test_gzip_header_is_fixed() -> None:
    from cdk_triton.builder.environments import _archive

    a = _archive([], python="3.10", platform="p", metadata={})
    assert a == _archive([], python="3.10", platform="p", metadata={})
    assert gzip.decompress(a)


def test_an_environment_larger_than_the_volume_is_refused(
    tmp_path: Path, house: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from cdk_triton.builder.export import python as py_export

    monkeypatch.setattr(py_export, "max_env_bytes", lambda: 100)
    with pytest.raises(BuildError) as e:
        _build(decl(tmp_path, ["greet==1.0"]), tmp_path / "out")
    assert e.value.code == "PythonEnvTooLarge" and "100 B" not in str(e.value)
    assert not (tmp_path / "out" / "cache" / "envs").exists()


FLEET = """
  - name: both
    mode: SingleModel
    instance_types: [ml.c5.xlarge]
    models: [shout, yell]
    default_model: shout
    packaging: directory
"""


def test_environment_bytes_count_in_sizes_and_identical_ones_upload_once(
    tmp_path: Path, house: Path, moto_s3: object
) -> None:
    """The environment lives in the model folder: its bytes are in the model's size (capacity, startup
    timeouts), the endpoint's (the volume check); two models with the same requirements pack it once and
    the upload puts its bytes once (the second key is a server-side copy)."""
    from collections import Counter
    from typing import Any

    from cdk_triton.config import sizing
    from cdk_triton.config.manifest import read_manifest

    client: Any = moto_s3
    client.create_bucket(Bucket="test-bucket")
    puts: Counter[str] = Counter()
    client.meta.events.register(
        "provide-client-params.s3.*",
        lambda event_name, params, **kw: puts.update(
            [f"{event_name.split('.')[-1]}:{params.get('Key', '')}"]
        ),
    )
    path = decl(tmp_path, ["greet==1.0"], names=("shout", "yell"))
    path.write_text(path.read_text() + "endpoints:" + FLEET)
    result = run_build_upload(path, tmp_path / "out", client)
    m = read_manifest(result.manifest_path)
    env = (_model_dir(tmp_path / "out", "shout") / python_env.ENV_ARCHIVE).stat().st_size
    assert len(list((tmp_path / "out" / "cache" / "envs").glob("*-py3.10.tar.gz"))) == 1  # packed once
    for name in ("shout", "yell"):
        entry = m.models[name]
        assert python_env.ENV_ARCHIVE in entry.files and (entry.size_bytes or 0) > env
        assert (sizing.recorded_model_bytes(entry)[0] or 0) > env  # capacity, the startup timeout
    ep = m.endpoint("both")
    assert (ep.size_bytes or 0) > 2 * env  # the volume check and the download timeout read it
    env_puts = [k for k in puts if k.startswith("PutObject:") and k.endswith(python_env.ENV_ARCHIVE)]
    env_copies = [k for k in puts if k.startswith("CopyObject:") and k.endswith(python_env.ENV_ARCHIVE)]
    assert len(env_puts) == 1 and len(env_copies) == 1, dict(puts)


def run_build_upload(path: Path, out: Path, client: object) -> object:
    from cdk_triton.builder.steps import run_build

    return run_build(path, out_dir=out, progress=False, upload=True, s3_client=client)


def test_platform_tags_name_every_older_manylinux_for_pip() -> None:
    """pip 26 does not expand an explicit --platform: the build names every tag the container runs."""
    from cdk_triton.config.python_env import platform_tags

    tags = platform_tags("manylinux_2_35_x86_64")
    assert tags[0] == "manylinux_2_35_x86_64" and tags[-1] == "manylinux1_x86_64"
    assert {"manylinux_2_17_x86_64", "manylinux2014_x86_64", "manylinux_2_28_x86_64"} <= set(tags)
    assert platform_tags("any") == ["any"]


def test_string_samples_are_text_and_bytes_in_kserve_json() -> None:
    import numpy as np

    from cdk_triton.builder.samples import random_tensor, v2_tensors
    from cdk_triton.config.declaration import TensorSpec

    arr = random_tensor(TensorSpec(name="TEXT", dtype="STRING", shape=(1,)), 2, np.random.default_rng(0))
    assert arr.shape == (2, 1) and arr.dtype == object and all(isinstance(v, bytes) for v in arr.ravel())
    (tensor,) = v2_tensors({"TEXT": arr})
    assert tensor["datatype"] == "BYTES" and tensor["data"] == [v.decode() for v in arr.ravel()]
    assert all(w.isalpha() and w.islower() for t in tensor["data"] for w in t.split())
