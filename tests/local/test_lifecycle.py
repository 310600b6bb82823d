"""Start, readiness, failure, stop: hard timeouts, whole process group gone, shared memory cleaned."""

from __future__ import annotations

import dataclasses
import glob
import json
import os
import shutil
from pathlib import Path

import pytest

from cdk_triton.config.manifest import read_manifest
from cdk_triton.config.server_options import ServerOptions
from cdk_triton.errors import TritonValidationError
from cdk_triton.local import CpuOverlay, LocalEndpoint, LocalServerError
from cdk_triton.local.repository import sha256_file, tree_sha256
from cdk_triton.local.server import TritonServer, pids_in_group
from tests.unit.local.support import write_tar_gz


def test_argv_comes_from_server_options_plus_local_flags(tmp_path: Path) -> None:
    options = ServerOptions(default_model_name="pipeline", log_verbose=0, thread_count=4)
    server = TritonServer(
        options=options, model_repository=tmp_path, workdir=tmp_path, model_dirs=["pipeline"]
    )
    argv = server.argv("tritonserver", "/b")
    expected = dataclasses.replace(options, port=server.port).to_argv(
        model_repository=str(tmp_path), model_dirs=["pipeline"]
    )
    assert argv[1 : 1 + len(expected)] == expected
    local = argv[1 + len(expected) :]
    assert "--backend-directory=/b" in local and "--pinned-memory-pool-byte-size=0" in local
    assert any(a.startswith("--backend-config=python,shm-region-prefix-name=cdk_triton_") for a in local)
    assert {
        "--allow-sagemaker=true",
        "--allow-http=false",
        "--model-control-mode=explicit",
        "--model-namespacing=true",
        "--load-model=pipeline",
        "--sagemaker-thread-count=4",
    } <= set(argv)
    assert server.environment({})["SAGEMAKER_TRITON_DEFAULT_MODEL_NAME"] == "pipeline"


def test_unset_default_model_is_exported_like_the_serve_script(tmp_path: Path) -> None:
    # serve: one model directory and no SAGEMAKER_TRITON_DEFAULT_MODEL_NAME -> `export` it and --load-model it
    server = TritonServer(
        options=ServerOptions(), model_repository=tmp_path, workdir=tmp_path, model_dirs=["only"]
    )
    assert "--load-model=only" in server.argv("tritonserver", "/b")
    assert server.environment({})["SAGEMAKER_TRITON_DEFAULT_MODEL_NAME"] == "only"
    assert "SAGEMAKER_TRITON_DEFAULT_MODEL_NAME" not in ServerOptions().server_environment()
    assert "SAGEMAKER_TRITON_DEFAULT_MODEL_NAME" not in ServerOptions(multi_model=True).server_environment(
        model_dirs=["x"]
    )


def test_overlay_defaults_follow_the_cpu_measurements() -> None:
    overlay = CpuOverlay()
    assert overlay.count("onnxruntime") == (os.cpu_count() or 1)
    assert overlay.intra_op_threads == 1


def test_tampered_artifact_is_refused_before_the_server_starts(manifest, tmp_path: Path) -> None:
    entry = manifest.endpoint("local")
    copy = tmp_path / "out"
    shutil.copytree(manifest.base_dir, copy)
    (copy / entry.local_path / "onnx_model" / "1" / "model.onnx").write_bytes(b"tampered")
    with pytest.raises(TritonValidationError) as info:
        LocalEndpoint(read_manifest(copy / "manifest.json"), "local", workdir=tmp_path / "w").start()
    assert info.value.code == "ArtifactHashMismatch"
    assert not (tmp_path / "w" / "tritonserver.log").exists()


def test_extra_file_in_the_repository_breaks_the_tree_hash(manifest, tmp_path: Path) -> None:
    copy = tmp_path / "out"
    shutil.copytree(manifest.base_dir, copy)
    (copy / manifest.endpoint("local").local_path / "onnx_model" / "1" / "extra.bin").write_bytes(b"x")
    with pytest.raises(TritonValidationError) as info:
        LocalEndpoint(read_manifest(copy / "manifest.json"), "local", workdir=tmp_path / "w").start()
    assert info.value.code == "ArtifactHashMismatch" and "repository tree" in str(info.value)


@pytest.mark.triton
def test_failed_default_model_fails_the_start_with_the_load_error(manifest, tmp_path: Path) -> None:
    # a rebuilt copy whose ts_model config names an input the TorchScript model does not have
    copy = tmp_path / "out"
    shutil.copytree(manifest.base_dir, copy)
    cfg = copy / manifest.endpoint("local").local_path / "ts_model" / "config.pbtxt"
    cfg.write_bytes(cfg.read_bytes().replace(b"INPUT__0", b"features"))
    doc = json.loads((copy / "manifest.json").read_text())
    doc["models"]["ts_model"]["files"]["config.pbtxt"] = sha256_file(cfg)
    doc["endpoints"]["local"]["sha256"] = tree_sha256(copy / manifest.endpoint("local").local_path)
    (copy / "manifest.json").write_text(json.dumps(doc))
    ep = LocalEndpoint(
        read_manifest(copy / "manifest.json"),
        "local",
        server_options=ServerOptions(default_model_name="ts_model"),
        overlay=CpuOverlay(instance_count=1),
        workdir=tmp_path / "w",
    )
    with pytest.raises(LocalServerError) as info:
        ep.start()
    assert info.value.code == "ServerStartFailed"
    assert "is neither an input argument to the model nor does it follow the <name>__<index>" in str(
        info.value
    )
    assert ep.server is None


@pytest.mark.triton
def test_start_timeout_kills_the_whole_group(manifest, tmp_path: Path) -> None:
    ep = LocalEndpoint(
        manifest, "local", overlay=CpuOverlay(instance_count=1), start_timeout=0.3, workdir=tmp_path / "w"
    )
    with pytest.raises(LocalServerError) as info:
        ep.start()
    assert info.value.code == "ServerStartTimeout"
    assert "server log" in str(info.value)


@pytest.mark.triton
def test_stop_leaves_no_process_and_no_shared_memory(manifest) -> None:
    ep = LocalEndpoint(manifest, "local", overlay=CpuOverlay(instance_count=1)).start()
    server = ep.server
    assert server is not None
    pgid = server.proc.pid
    assert len(pids_in_group(pgid)) >= 3  # launcher, tritonserver, backend stubs
    assert glob.glob(f"/dev/shm/{server.shm_prefix}*")
    workdir = ep.workdir
    ep.stop()
    assert pids_in_group(pgid) == []
    assert glob.glob(f"/dev/shm/{server.shm_prefix}*") == []
    assert not os.path.exists(server.socket_path)
    assert workdir is not None and not workdir.exists()


def test_without_a_namespace_the_server_gets_a_free_host_port_and_mme_is_refused(
    manifest, tmp_path: Path
) -> None:
    server = TritonServer(
        options=ServerOptions(), model_repository=tmp_path, workdir=tmp_path, namespace=False
    )
    assert server.namespace is None and server.port != 8080
    ep = LocalEndpoint(manifest, "multi", namespace=False, workdir=tmp_path / "w")
    with pytest.raises(LocalServerError) as info:
        ep.start()
    assert info.value.code == "NamespaceUnavailable"


def test_sme_tar_gz_packaging_is_checked_and_extracted(manifest, tmp_path: Path) -> None:
    from cdk_triton.config.manifest import manifest_from_dict
    from cdk_triton.local.repository import prepare_sme_repository
    from tests.local.artifacts import pack

    entry = manifest.endpoint("local")
    source = manifest.resolve(entry.local_path)
    doc = json.loads(Path(manifest.path).read_text())
    archive = Path(manifest.path).parent / "sme" / "local" / "local-test.tar.gz"
    digest, size = pack(source, entry.models, archive)
    doc["endpoints"]["local"].update(
        packaging="tar.gz",
        local_path="sme/local/local-test.tar.gz",
        s3_uri="s3://bucket/cdk-triton/sme/local/local-test.tar.gz",
        sha256=digest,
        size_bytes=size,
    )
    tarred = manifest_from_dict(doc, source=manifest.path)
    try:
        changes = prepare_sme_repository(tarred, tarred.endpoint("local"), tmp_path / "repo", CpuOverlay())
        assert {c.model for c in changes} == {"onnx_model", "preprocess", "ts_model"}
        assert (
            sha256_file(tmp_path / "repo" / "onnx_model" / "1" / "model.onnx")
            == (manifest.models["onnx_model"].files["1/model.onnx"])
        )
        doc["endpoints"]["local"]["sha256"] = "f" * 64
        bad = manifest_from_dict(doc, source=manifest.path)
        with pytest.raises(TritonValidationError) as info:
            prepare_sme_repository(bad, bad.endpoint("local"), tmp_path / "repo2", CpuOverlay())
        assert info.value.code == "ArtifactHashMismatch"
    finally:
        archive.unlink()


@pytest.mark.parametrize("filters", [True, False], ids=["data_filter", "python_3_11_0_to_3"])
def test_archives_extract_only_inside_their_root(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, filters: bool
) -> None:
    import tarfile

    from cdk_triton.local.repository import extract_archive

    if not filters:  # Python 3.11.0-3.11.3 have no extraction filters: the members are checked by hand
        monkeypatch.delattr(tarfile, "data_filter")

    extract_archive(
        write_tar_gz(tmp_path / "good.tar.gz", {"m/config.pbtxt": b"x", "m/1/model.py": b"y"}),
        tmp_path / "ok",
    )
    assert (tmp_path / "ok" / "m" / "1" / "model.py").read_bytes() == b"y"
    with pytest.raises((TritonValidationError, tarfile.TarError)):
        extract_archive(write_tar_gz(tmp_path / "evil.tar.gz", {"../evil": b"x"}), tmp_path / "bad" / "root")
    assert not (tmp_path / "bad" / "evil").exists()
