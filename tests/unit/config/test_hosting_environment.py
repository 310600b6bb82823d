"""``hosting_options`` / ``sagemaker_environment``: the one author of a Triton Model's container environment,
called by the constructs (the template's ``Environment``) and by ``serve --runtime container``."""

from __future__ import annotations

from cdk_triton.config.server_options import (
    MME_MODELS_DIR,
    SME_MODEL_DIR,
    ServerOptions,
    hosting_options,
    sagemaker_environment,
)


def test_a_single_model_endpoint_names_its_default_model_and_the_callees() -> None:
    opts = hosting_options(
        ServerOptions(),
        multi_model=False,
        default_model="classifier",
        models=["classifier"],
        load_models=["b"],
    )
    assert sagemaker_environment(opts) == {
        "SAGEMAKER_TRITON_DEFAULT_MODEL_NAME": "classifier",
        "SAGEMAKER_TRITON_ADDITIONAL_ARGS": "--load-model=b",
    }


def test_the_only_model_is_the_default_and_several_models_leave_it_unset() -> None:
    only = hosting_options(ServerOptions(), multi_model=False, default_model=None, models=["m"])
    assert only.default_model_name == "m"
    several = hosting_options(ServerOptions(), multi_model=False, default_model=None, models=["a", "b"])
    assert several.default_model_name is None


def test_what_the_options_set_wins_over_what_the_artifacts_imply() -> None:
    given = ServerOptions(default_model_name="ensemble", load_models=("x",))
    opts = hosting_options(
        given, multi_model=False, default_model="other", models=["ensemble"], load_models=["y"]
    )
    assert (opts.default_model_name, opts.load_models) == ("ensemble", ("x",))


def test_a_multi_model_endpoint_sets_multi_model_and_no_default() -> None:
    opts = hosting_options(
        ServerOptions(log_verbose=0), multi_model=True, default_model="a", models=["a"], load_models=["b"]
    )
    assert sagemaker_environment(opts) == {
        "SAGEMAKER_MULTI_MODEL": "true",
        "SAGEMAKER_TRITON_LOG_VERBOSE": "0",
    }


def test_cloudwatch_publishing_then_raw_variables_come_last_in_that_order() -> None:
    env = sagemaker_environment(
        ServerOptions(multi_model=True),
        cloudwatch_log_group="/log/group",
        extra={"MY_VAR": "1", "SAGEMAKER_TRITON_CLOUDWATCH_LOG_GROUP": "/raw"},
    )
    assert list(env) == [
        "SAGEMAKER_MULTI_MODEL",
        "SAGEMAKER_TRITON_PUBLISH_METRICS_TO_CLOUDWATCH",
        "SAGEMAKER_TRITON_CLOUDWATCH_LOG_GROUP",
        "MY_VAR",
    ]
    assert env["SAGEMAKER_TRITON_CLOUDWATCH_LOG_GROUP"] == "/raw"


def test_sagemaker_mounts_the_model_where_the_container_reads_it() -> None:
    assert (SME_MODEL_DIR, MME_MODELS_DIR) == ("/opt/ml/model", "/opt/ml/models")
