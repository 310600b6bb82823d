"""``cdk-triton serve --runtime container``: the docker command, the ECR login, the front's route.

No Docker here: a recording stand-in for the docker CLI (``docker_stand_in.py``, a script on PATH) records
every call and answers ``image inspect`` / ``login`` / ``pull`` / ``run`` / ``inspect`` / ``rm`` as docker
would, starting a fake container that answers Triton's SageMaker routes on the published port. boto3's
ECR call goes through botocore's Stubber. What the real image does with the mount and the environment is
not run here (docs/guides/container.md).
"""

from __future__ import annotations

import base64
import datetime
import json
import shlex
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from cdk_triton import cli
from cdk_triton.config.manifest import manifest_from_dict, read_manifest
from cdk_triton.errors import TritonValidationError
from cdk_triton.local import container
from cdk_triton.local.container import ContainerEndpoint, find_docker, setup_container
from cdk_triton.local.errors import LocalServerError
from tests.unit.builder.helpers import tiny, write_decl
from tests.unit.local import docker_stand_in
from tests.unit.local.test_components import components_doc

ROOT = Path(__file__).resolve().parents[3]
IMAGE_24_09 = "763104351884.dkr.ecr.us-east-1.amazonaws.com/sagemaker-tritonserver:24.09-py3"
GPU_GROUP = "    instance_groups: [{kind: KIND_GPU, count: 1}]\n"


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A project folder whose ``build/out`` holds a built SME ``classifier`` (one KIND_GPU model, one
    default) and an MME ``multi``, as ``cdk-triton build --config build/models.yaml --out build/out`` leaves it."""
    from cdk_triton.builder import run_build

    root = tmp_path_factory.mktemp("project")
    decl = write_decl(
        root / "build",
        tiny("on_gpu") + GPU_GROUP + tiny("on_cpu"),
        endpoints="""
  - name: classifier
    mode: SingleModel
    instance_types: [ml.g5.xlarge]
    models: [on_gpu, on_cpu]
    default_model: on_gpu
    packaging: directory
  - name: multi
    mode: MultiModel
    instance_types: [ml.g5.xlarge]
    models: [on_gpu, on_cpu]
""",
    )
    run_build(decl, out_dir=root / "build" / "out", progress=False)
    return root


@pytest.fixture
def docker(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """PATH = the docker stand-in's folder and the system's (no nvidia-smi there); yields its state folder."""
    state = tmp_path / "docker-state"
    bin_dir = tmp_path / "bin"
    docker_stand_in.install(bin_dir, state)
    monkeypatch.setenv("PATH", f"{bin_dir}:/usr/bin:/bin")
    for name in ("AWS_REGION", "AWS_DEFAULT_REGION"):
        monkeypatch.delenv(name, raising=False)
    yield state
    for argv in docker_stand_in.calls(state):  # no fake container outlives its test
        if argv[:1] == ["run"]:
            docker_stand_in.main(["rm", "--force", argv[argv.index("--name") + 1]], str(state))


@pytest.fixture
def no_aws(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError(f"AWS was called: {args}")

    monkeypatch.setattr("boto3.client", refuse)


def fake_gpu(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    smi = tmp_path / "gpu-bin" / "nvidia-smi"
    smi.parent.mkdir()
    smi.write_text("#!/bin/sh\necho 'GPU 0: NVIDIA H100 80GB HBM3 (UUID: GPU-0)'\n")
    smi.chmod(0o755)
    monkeypatch.setenv("PATH", f"{smi.parent}:{os_path()}")


def os_path() -> str:
    import os

    return os.environ["PATH"]


def serve(*words: str) -> list[str]:
    return ["serve", "--runtime", "container", *words]


def option(argv: list[str], flag: str) -> list[str]:
    return [argv[i + 1] for i, a in enumerate(argv) if a == flag]


# ---------------------------------------------------------------------------- --dry-run


def test_dry_run_prints_the_docker_command_as_the_user_runs_it(
    project: Path,
    docker: Path,
    no_aws: None,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.chdir(project)
    assert cli.main(serve("--dry-run", "--endpoint", "classifier")) == 0
    out, err = capsys.readouterr()
    assert len(out.splitlines()) == 1
    argv = shlex.split(out)
    assert argv[:3] == ["docker", "run", "--detach"]
    assert argv[-2:] == [IMAGE_24_09, "serve"]
    host, target, mode = option(argv, "--volume")[0].rsplit(":", 2)
    assert (target, mode) == ("/opt/ml/model", "ro")
    assert sorted(p.name for p in Path(host).iterdir()) == ["on_cpu", "on_gpu"]
    assert option(argv, "--env") == ["SAGEMAKER_TRITON_DEFAULT_MODEL_NAME=on_gpu"]
    (publish,) = option(argv, "--publish")
    assert publish.startswith("127.0.0.1:") and publish.endswith(":8080")
    assert "--gpus" not in argv
    # no GPU: the copy's KIND_GPU group is KIND_CPU, said aloud (one line per model); the build is untouched
    assert "kind: KIND_CPU" in (Path(host) / "on_gpu" / "config.pbtxt").read_text()
    built = next((project / "build/out").glob("**/on_gpu/config.pbtxt"))
    assert "KIND_GPU" in built.read_text()
    moved = [line for line in err.splitlines() if "KIND_GPU" in line]
    assert len(moved) == 1 and "model on_gpu" in moved[0] and "KIND_CPU" in moved[0]
    assert docker_stand_in.calls(docker) == []  # neither docker nor AWS


def test_the_container_gets_the_environment_the_constructs_write(project: Path, tmp_path: Path) -> None:
    import aws_cdk as cdk
    from aws_cdk.assertions import Template

    from cdk_triton.constructs import ModelArtifacts, TritonModel

    manifest = read_manifest(project / "build/out/manifest.json")
    for endpoint in ("classifier", "multi"):
        app = cdk.App()
        stack = cdk.Stack(app, f"S{endpoint}", env=cdk.Environment(region="us-east-1"))
        TritonModel(stack, "Model", artifacts=ModelArtifacts.from_manifest(manifest, endpoint))
        (model,) = Template.from_stack(stack).find_resources("AWS::SageMaker::Model").values()
        written = model["Properties"]["PrimaryContainer"]
        plan = setup_container(manifest, endpoint, workdir=tmp_path / endpoint)
        assert list(plan.environment.items()) == list(written["Environment"].items())
        assert plan.image == written["Image"] == IMAGE_24_09


def test_dry_run_of_a_multi_model_endpoint(
    project: Path,
    docker: Path,
    no_aws: None,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.chdir(project)
    words = (
        "--dry-run",
        "--endpoint",
        "multi",
        "--region",
        "eu-west-1",
        "--env",
        "SAGEMAKER_TRITON_LOG_VERBOSE=0",
    )
    assert cli.main(serve(*words)) == 0
    argv = shlex.split(capsys.readouterr().out)
    host, target, _ = option(argv, "--volume")[0].rsplit(":", 2)
    assert target == "/opt/ml/models" and list(Path(host).iterdir()) == []  # staged on first request
    assert option(argv, "--env") == ["SAGEMAKER_MULTI_MODEL=true", "SAGEMAKER_TRITON_LOG_VERBOSE=0"]
    assert argv[-2] == "763104351884.dkr.ecr.eu-west-1.amazonaws.com/sagemaker-tritonserver:24.09-py3"
    assert docker_stand_in.calls(docker) == []


def test_gpus_are_passed_through_when_nvidia_smi_lists_one(
    project: Path,
    docker: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    fake_gpu(tmp_path, monkeypatch)
    monkeypatch.chdir(project)
    assert cli.main(serve("--dry-run", "--endpoint", "classifier")) == 0
    out, err = capsys.readouterr()
    argv = shlex.split(out)
    assert option(argv, "--gpus") == ["all"]
    host = option(argv, "--volume")[0].rsplit(":", 2)[0]
    assert "kind: KIND_GPU" in (Path(host) / "on_gpu" / "config.pbtxt").read_text()
    assert "KIND" not in err


def test_the_region_comes_from_aws_region(
    project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    manifest = read_manifest(project / "build/out/manifest.json")
    monkeypatch.setenv("AWS_DEFAULT_REGION", "ap-south-1")
    monkeypatch.setenv("AWS_REGION", "eu-central-1")
    assert setup_container(manifest, "multi", workdir=tmp_path).region == "eu-central-1"
    monkeypatch.delenv("AWS_REGION")
    assert setup_container(manifest, "multi", workdir=tmp_path).region == "ap-south-1"
    monkeypatch.delenv("AWS_DEFAULT_REGION")
    assert setup_container(manifest, "multi", workdir=tmp_path, region="us-west-2").image.startswith(
        "763104351884.dkr.ecr.us-west-2."
    )


@pytest.fixture(scope="module")
def example_project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder holding the example build where ``cdk-triton build --config build/models.yaml`` writes it
    (``build/out``), so ``serve`` runs there with its default ``--manifest``, as a user runs it."""
    from cdk_triton.builder import run_build  # in process: the suite has torch imported already

    project = tmp_path_factory.mktemp("example")
    run_build(ROOT / "build" / "models.yaml", out_dir=project / "build" / "out", progress=False)
    return project


def test_dry_run_of_the_example_build(
    example_project: Path,
    docker: Path,
    no_aws: None,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.chdir(example_project)
    assert cli.main(serve("--dry-run", "--endpoint", "classifier")) == 0
    out, err = capsys.readouterr()
    argv = shlex.split(out)
    assert argv[-2:] == [IMAGE_24_09, "serve"]
    assert option(argv, "--env") == ["SAGEMAKER_TRITON_DEFAULT_MODEL_NAME=classifier"]
    assert option(argv, "--volume")[0].endswith(":/opt/ml/model:ro")
    assert "model resnet: instance_group" in err  # the example's KIND_GPU step, moved on this CPU


# ---------------------------------------------------------------------------- running it


def stubbed_ecr(password: str = "secret") -> Any:
    import boto3
    from botocore.stub import Stubber

    client = boto3.client("ecr", region_name="us-east-1", aws_access_key_id="x", aws_secret_access_key="x")
    stub = Stubber(client)
    stub.add_response(
        "get_authorization_token",
        {
            "authorizationData": [
                {
                    "authorizationToken": base64.b64encode(f"AWS:{password}".encode()).decode(),
                    "proxyEndpoint": "https://763104351884.dkr.ecr.us-east-1.amazonaws.com",
                    "expiresAt": datetime.datetime(2030, 1, 1),
                }
            ]
        },
        expected_params={"registryIds": ["763104351884"]},
    )
    stub.activate()
    return client


def runtime_client(url: str) -> Any:
    import boto3

    return boto3.client(
        "sagemaker-runtime",
        endpoint_url=url,
        region_name="us-east-1",
        aws_access_key_id="x",
        aws_secret_access_key="x",
    )


def test_an_sme_container_is_pulled_after_an_ecr_login_and_invoked_through_the_front(
    project: Path, docker: Path, tmp_path: Path
) -> None:
    manifest = read_manifest(project / "build/out/manifest.json")
    plan = setup_container(manifest, "classifier", workdir=tmp_path / "c")
    exe = find_docker()
    with ContainerEndpoint(manifest, plan, docker=exe, ecr=stubbed_ecr(), start_timeout=30) as ep:
        assert ep.image_source == "pulled"
        answer = runtime_client(ep.url).invoke_endpoint(
            EndpointName="classifier", Body=b'{"inputs": []}', ContentType="application/json"
        )
        doc = json.loads(answer["Body"].read())
        assert doc == {
            "model": "on_gpu",
            "models": ["on_cpu", "on_gpu"],
            "bytes": 14,
            "mount": "/opt/ml/model",
        }
    calls = docker_stand_in.calls(docker)
    kinds = [c[0] if c[0] != "image" else "image inspect" for c in calls]
    assert kinds[:5] == ["version", "image inspect", "login", "pull", "run"]
    assert calls[2] == [
        "login",
        "--username",
        "AWS",
        "--password-stdin",
        "https://763104351884.dkr.ecr.us-east-1.amazonaws.com",
    ]
    assert docker_stand_in.logins(docker) == ["secret"]  # through stdin, never on the command line
    assert calls[4] == plan.docker_run(exe)[1:]
    assert calls[-1] == ["rm", "--force", plan.name]


def test_a_local_image_is_not_pulled_and_an_mme_stages_each_target_model_as_sagemaker_does(
    project: Path, docker: Path, tmp_path: Path
) -> None:
    (docker / "image").write_text(IMAGE_24_09)
    manifest = read_manifest(project / "build/out/manifest.json")
    plan = setup_container(manifest, "multi", workdir=tmp_path / "m")
    said: list[str] = []
    with ContainerEndpoint(manifest, plan, docker=find_docker(), say=said.append, start_timeout=30) as ep:
        assert ep.image_source == "local"
        runtime = runtime_client(ep.url)
        target = manifest.endpoint("multi").target_models["on_gpu"].target_model
        answer = runtime.invoke_endpoint(
            EndpointName="multi", Body=b"{}", ContentType="application/json", TargetModel=target
        )
        assert json.loads(answer["Body"].read()) == {"model": target, "bytes": 2}
        (staged,) = plan.mount.glob("*/model/on_gpu/config.pbtxt")
        assert "kind: KIND_CPU" in staged.read_text()
        assert len(said) == 1 and "model on_gpu: instance_group" in said[0]
        with pytest.raises(runtime.exceptions.ValidationError, match="TargetModel must be specified"):
            runtime.invoke_endpoint(EndpointName="multi", Body=b"{}", ContentType="application/json")
    kinds = [c[0] for c in docker_stand_in.calls(docker)]
    assert kinds[:3] == ["version", "image", "run"] and kinds[-1] == "rm"
    assert "login" not in kinds and "pull" not in kinds


def test_serve_runs_the_container_and_answers_boto3_until_stopped(
    project: Path, docker: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    (docker / "image").write_text(IMAGE_24_09)
    monkeypatch.chdir(project)
    seen: dict[str, Any] = {}

    def invoke_then_stop(served: list[ContainerEndpoint], stop: Any) -> int:
        front = served[0].front
        assert front is not None
        body = runtime_client(front.url).invoke_endpoint(EndpointName="classifier", Body=b"{}")["Body"].read()
        seen.update(json.loads(body))
        return 0

    monkeypatch.setattr(container, "_wait", invoke_then_stop)
    assert cli.main(serve("--endpoint", "classifier")) == 0
    out = capsys.readouterr().out
    assert seen["model"] == "on_gpu"
    assert "endpoint classifier: docker run --detach" in out and "/endpoints/classifier/invocations" in out
    assert docker_stand_in.calls(docker)[-1][:2] == ["rm", "--force"]


# ---------------------------------------------------------------------------- failures


def test_fails_without_docker_on_path(
    project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.chdir(project)
    assert cli.main(serve("--endpoint", "classifier")) == 1
    err = capsys.readouterr().err
    assert "[DockerUnavailable]" in err and "no `docker` on PATH" in err
    assert "install Docker" in err and "--runtime stand-in" in err and "--runtime target" in err
    assert "KIND_GPU" not in err  # checked before any copy is made


def test_fails_when_the_docker_daemon_does_not_answer(docker: Path) -> None:
    (docker / "daemon-down").write_text("")
    with pytest.raises(LocalServerError, match="Cannot connect to the Docker daemon") as info:
        find_docker()
    assert info.value.code == "DockerUnavailable" and "--runtime stand-in" in str(info.value)


def test_fails_when_ecr_refuses_the_token(project: Path, docker: Path, tmp_path: Path) -> None:
    import boto3
    from botocore.stub import Stubber

    client = boto3.client("ecr", region_name="us-east-1", aws_access_key_id="x", aws_secret_access_key="x")
    stub = Stubber(client)
    stub.add_client_error("get_authorization_token", "AccessDeniedException", "not authorized", 400)
    stub.activate()
    manifest = read_manifest(project / "build/out/manifest.json")
    plan = setup_container(manifest, "classifier", workdir=tmp_path / "c")
    with pytest.raises(LocalServerError, match="ecr:GetAuthorizationToken for registry 763104351884") as info:
        ContainerEndpoint(manifest, plan, docker=find_docker(), ecr=client).start()
    assert info.value.code == "ImagePullFailed" and "docker pull" in str(info.value)
    assert "run" not in [c[0] for c in docker_stand_in.calls(docker)]


def test_fails_when_the_pull_fails(project: Path, docker: Path, tmp_path: Path) -> None:
    (docker / "pull-fails").write_text("")
    manifest = read_manifest(project / "build/out/manifest.json")
    plan = setup_container(manifest, "classifier", workdir=tmp_path / "c")
    with pytest.raises(LocalServerError, match="no space left on device") as info:
        ContainerEndpoint(manifest, plan, docker=find_docker(), ecr=stubbed_ecr()).start()
    assert info.value.code == "ImagePullFailed"


def test_fails_when_the_container_exits_before_ping(project: Path, docker: Path, tmp_path: Path) -> None:
    (docker / "image").write_text(IMAGE_24_09)
    (docker / "run-exits").write_text("")
    manifest = read_manifest(project / "build/out/manifest.json")
    plan = setup_container(manifest, "classifier", workdir=tmp_path / "c")
    with pytest.raises(LocalServerError, match="exited before /ping answered") as info:
        ContainerEndpoint(manifest, plan, docker=find_docker(), start_timeout=30).start()
    assert info.value.code == "ContainerStartFailed" and "fake tritonserver log line" in str(info.value)
    assert docker_stand_in.calls(docker)[-1] == ["rm", "--force", plan.name]


@pytest.mark.parametrize(
    ("words", "flag"),
    [
        (("--runtime", "container", "--detach"), "--detach"),
        (("--runtime", "container", "--instance-count", "2"), "--instance-count"),
        (("--dry-run",), "--dry-run"),
        (("--region", "eu-west-1"), "--region"),
    ],
)
def test_fails_on_a_flag_of_the_other_runtime(
    project: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    words: tuple[str, ...],
    flag: str,
) -> None:
    monkeypatch.chdir(project)
    assert cli.main(["serve", "--endpoint", "classifier", *words]) == 2
    err = capsys.readouterr().err
    assert "[ContainerServeFlag]" in err and flag in err


def test_fails_for_an_inference_components_endpoint(tmp_path: Path) -> None:
    doc = components_doc()
    manifest = manifest_from_dict(doc, source=str(ROOT / "tests/fixtures/manifests/example.json"))
    with pytest.raises(TritonValidationError) as info:
        setup_container(manifest, "ics", workdir=tmp_path)
    assert info.value.code == "ContainerServeFlag" and "--runtime stand-in" in str(info.value)


def test_fails_for_a_region_without_the_image(
    project: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(project)
    assert cli.main(serve("--dry-run", "--endpoint", "classifier", "--region", "mars-north-1")) == 2
    assert "[ImageNotInRegion]" in capsys.readouterr().err


def test_docker_is_found_on_path(docker: Path) -> None:
    assert find_docker() == shutil.which("docker")


def test_a_gpu_only_model_is_named_when_no_gpu_is_visible(tmp_path: Path) -> None:
    from cdk_triton.local.overlay import describe_moves, gpu_only_models, move_gpu_groups_to_cpu

    model = tmp_path / "plan"
    model.mkdir()
    (model / "config.pbtxt").write_text(
        'name: "plan"\nplatform: "tensorrt_plan"\ninstance_group { kind: KIND_GPU count: 2 gpus: 0 }\n'
    )
    moves = move_gpu_groups_to_cpu(tmp_path)
    assert [(m.model, m.after) for m in moves] == [("plan", [{"count": 2, "kind": "KIND_CPU"}])]
    assert "gpus" not in (model / "config.pbtxt").read_text()
    lines = describe_moves(moves, gpu_only_models(tmp_path), where="endpoint e")
    assert len(lines) == 2 and "model plan needs a GPU" in lines[1]


def test_serve_ends_with_the_log_when_a_container_exits(
    project: Path, docker: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import threading

    (docker / "image").write_text(IMAGE_24_09)
    manifest = read_manifest(project / "build/out/manifest.json")
    plan = setup_container(manifest, "classifier", workdir=tmp_path / "c")
    with ContainerEndpoint(manifest, plan, docker=find_docker(), start_timeout=30) as ep:
        docker_stand_in.main(["rm", "--force", plan.name], str(docker))  # the container dies
        assert container._wait([ep], threading.Event(), every=0.1) == 1
        assert not ep.healthy
        status, _, body = ep.handle_invocation(b"{}", {})
        assert status == 503 and b"not running" in body
    assert "exited; its log ends:\nI1206 fake tritonserver log line" in capsys.readouterr().err
