"""ServerOptions: one object rendered to the container environment and to tritonserver argv."""

from __future__ import annotations

import pytest

from cdk_triton.config.server_options import (
    ENV_FIELDS,
    PingMode,
    ServerOptions,
    check_raw_environment,
    resolve_default_model,
)
from cdk_triton.errors import TritonValidationError, TritonValidationErrors


def test_defaults_render_no_environment_and_serve_script_argv() -> None:
    opts = ServerOptions()
    assert opts.to_environment() == {}
    argv = opts.to_argv(model_repository="/opt/ml/model", model_dirs=["resnet"])
    assert argv[:3] == ["--allow-sagemaker=true", "--allow-http=false", "--model-control-mode=explicit"]
    assert "--model-namespacing=true" in argv
    assert "--sagemaker-port=8080" in argv
    assert "--allow-grpc=false" in argv and "--allow-metrics=false" in argv
    assert "--log-verbose=1" in argv
    assert "--backend-config=python,shm-default-byte-size=16777216" in argv
    assert "--backend-config=python,shm-growth-byte-size=1048576" in argv
    assert argv[-1] == "--load-model=resnet"


def test_every_field_round_trips_through_the_environment() -> None:
    opts = ServerOptions(
        default_model_name="ensemble",
        ping_mode=PingMode.LIVE,
        model_namespacing=False,
        port=9090,
        safe_port_range=(9000, 9100),
        allow_grpc=True,
        grpc_port=9001,
        allow_metrics=True,
        metrics_port=9002,
        thread_count=4,
        buffer_manager_thread_count=2,
        log_verbose=0,
        log_info=False,
        log_warning=True,
        log_error=True,
        shm_default_byte_size=1 << 20,
        shm_growth_byte_size=1 << 19,
        tensorflow_version="2",
        model_load_gpu_limit=0.75,
        response_cache_byte_size=1 << 20,
        load_models=("callee", "other"),
        additional_args=("--exit-timeout-secs=5",),
        publish_metrics_to_cloudwatch=True,
        cloudwatch_log_group="/triton/x",
        cloudwatch_metric_namespace="Triton/X",
    )
    env = opts.to_environment()
    # every env var of the contract but MULTI_MODEL (mutually exclusive with a default model) is rendered
    assert set(env) == set(ENV_FIELDS) - {"SAGEMAKER_MULTI_MODEL", "SAGEMAKER_TRITON_INFERENCE_TYPE"}
    assert env["SAGEMAKER_TRITON_DISABLE_MODEL_NAMESPACING"] == "false"  # inverted name: false disables
    assert ServerOptions.from_environment(env) == opts


def test_argv_follows_environment() -> None:
    opts = ServerOptions(
        model_namespacing=False,
        port=9090,
        allow_grpc=True,
        thread_count=3,
        model_load_gpu_limit=0.5,
        response_cache_byte_size=4096,
        default_model_name="m",
        load_models=("callee",),
    )
    argv = opts.to_argv(model_repository="/r", gpu_count=2)
    assert "--model-namespacing=false" in argv
    assert "--sagemaker-port=9090" in argv
    assert "--allow-grpc=true" in argv and "--grpc-port=8001" in argv
    assert "--sagemaker-thread-count=3" in argv
    assert argv.count("--model-load-gpu-limit") == 2 and "1:0.5" in argv
    assert argv.index("--load-model=m") < argv.index("--load-model=callee")  # the callee beside the default
    assert "--cache-config=local,size=4096" in argv
    assert opts.server_environment() == {"SAGEMAKER_TRITON_DEFAULT_MODEL_NAME": "m"}


def test_multi_model_loads_nothing_and_sets_flag() -> None:
    opts = ServerOptions(multi_model=True)
    assert opts.to_environment() == {"SAGEMAKER_MULTI_MODEL": "true"}
    assert not any(a.startswith("--load-model") for a in opts.to_argv(model_repository="/tmp/sagemaker"))


def test_publishing_turns_metrics_on() -> None:
    env = ServerOptions(
        publish_metrics_to_cloudwatch=True, cloudwatch_metric_namespace="Triton/A"
    ).to_environment()
    assert env["SAGEMAKER_TRITON_ALLOW_METRICS"] == "true"
    assert env["SAGEMAKER_TRITON_METRICS_PORT"] == "8002"
    assert env["SAGEMAKER_TRITON_PUBLISH_METRICS_TO_CLOUDWATCH"] == "true"


def test_fails_on_unknown_triton_variable_with_suggestion() -> None:
    errs = check_raw_environment(
        {"SAGEMAKER_TRITON_DEFAULT_MODEL": "x", "SAGEMAKER_PROGRAM": "ok", "OTHER": "1"}
    )
    assert [e.code for e in errs] == ["UnknownTritonEnvironmentVariable"]
    assert "did you mean SAGEMAKER_TRITON_DEFAULT_MODEL_NAME?" in str(errs[0])
    with pytest.raises(TritonValidationError):
        ServerOptions.from_environment({"SAGEMAKER_TRITON_THREADCOUNT": "2"})


@pytest.mark.parametrize(
    ("kwargs", "code"),
    [
        ({"port": 0}, "InvalidPort"),
        ({"safe_port_range": (9100, 9000)}, "InvalidPortRange"),
        ({"allow_grpc": True, "grpc_port": 8080, "port": 8080}, "PortConflict"),
        ({"thread_count": 0}, "InvalidThreadCount"),
        ({"log_verbose": -1}, "InvalidLogLevel"),
        ({"shm_default_byte_size": 0}, "InvalidByteSize"),
        ({"model_load_gpu_limit": 1.5}, "InvalidGpuLimit"),
        ({"multi_model": True, "default_model_name": "m"}, "DefaultModelInMme"),
        ({"default_model_name": "a b"}, "InvalidModelName"),
        ({"multi_model": True, "load_models": ("m",)}, "DefaultModelInMme"),
        ({"load_models": ("a b",)}, "InvalidModelName"),
        ({"publish_metrics_to_cloudwatch": True, "allow_metrics": False}, "MetricsPublishingNeedsMetrics"),
        ({"cloudwatch_metric_namespace": "X"}, "CloudWatchSettingsWithoutPublishing"),
        (
            {"publish_metrics_to_cloudwatch": True, "cloudwatch_metric_namespace": "AWS/SageMaker"},
            "InvalidMetricNamespace",
        ),
        ({"publish_metrics_to_cloudwatch": True, "cloudwatch_log_group": "bad group"}, "InvalidLogGroupName"),
        ({"additional_args": ("verbose",)}, "InvalidAdditionalArg"),
        ({"additional_args": ("--load-model=x",)}, "ManagedFlagInAdditionalArgs"),
    ],
)
def test_fails_on_invalid_options(kwargs: dict[str, object], code: str) -> None:
    errs = ServerOptions(**kwargs).validate(path="Stack/Model")  # type: ignore[arg-type]
    assert code in [e.code for e in errs]
    err = next(e for e in errs if e.code == code)
    text = str(err)
    assert err.prop in text and "allowed:" in text and "fix:" in text and f"[{code}]" in text
    assert text.endswith("at Stack/Model")


def test_validated_raises_every_problem_at_once() -> None:
    with pytest.raises(TritonValidationErrors) as exc:
        ServerOptions(port=0, thread_count=0).validated()
    assert exc.value.codes == ["InvalidPort", "InvalidThreadCount"]


def test_default_model_rule_of_serve_script() -> None:
    assert resolve_default_model(["only"]) == "only"
    for dirs in ([], ["a", "b"]):
        with pytest.raises(TritonValidationError) as exc:
            resolve_default_model(dirs)
        assert exc.value.code == "AmbiguousDefaultModel"


def test_validate_runs_the_named_checks_in_order() -> None:
    from cdk_triton.config import server_options as so

    assert [c.__name__ for c in so.CHECKS] == [
        "check_ports",
        "check_ports_distinct",
        "check_counts_and_sizes",
        "check_default_model",
        "check_cloudwatch_publishing",
        "check_cloudwatch_names",
        "check_additional_args",
    ]
    opts = ServerOptions(port=0, thread_count=0, additional_args=("x",))
    assert [e.code for e in so.check_ports(opts)] == ["InvalidPort"]
    assert [(e.code, e.path) for e in opts.validate(path="S/E")] == [
        ("InvalidPort", "S/E"),
        ("InvalidThreadCount", "S/E"),
        ("InvalidAdditionalArg", "S/E"),
    ]
    assert all(e.path is None for e in opts.validate())
