"""MultiModel's construct behaviour: the loading graphs and alarms, the working-set warning, and a deploy
verification that reads the TargetModel map and samples the recorded checks per deploy."""

from __future__ import annotations

from typing import Any

from cdk_triton.config import modes
from cdk_triton.constructs import metrics as m
from cdk_triton.constructs.checks.working_set import check_working_set
from cdk_triton.constructs.modes.table import (
    AlarmOptions,
    Alarms,
    Common,
    Dashboard,
    Endpoint,
    Widget,
    register,
)


class MultiModel(Common):
    row = modes.MULTI_MODEL

    def dashboard_graphs(self, dashboard: Dashboard, ep: Endpoint, dims: list[str]) -> list[Widget]:
        """The loading graphs (LoadedModelCount, ModelCacheHit, the loading times), then Triton's."""
        loading = [
            dashboard.graph(
                "MME: loaded models and cache hits",
                [
                    m.widget_metric(m.LOADED_MODEL_COUNT, dims),
                    m.widget_metric(m.MODEL_CACHE_HIT, dims, yAxis="right"),
                ],
            ),
            dashboard.graph(
                "MME: loading wait / download / unload (us)",
                [
                    m.widget_metric(spec, dims)
                    for spec in (m.MODEL_LOADING_WAIT_TIME, m.MODEL_DOWNLOADING_TIME, m.MODEL_UNLOADING_TIME)
                ],
            ),
        ]
        return loading + super().dashboard_graphs(dashboard, ep, dims)

    def define_alarms(self, alarms: Alarms, ep: Endpoint, options: AlarmOptions) -> None:
        """The loading alarms: few cache hits (misses load models), long waits for a model's load."""
        if not options.mme_loading_alarms:
            return
        o = options
        alarms.cache_hit_alarm = alarms.alarm(
            "CacheHitRatio",
            f"cache-hit ratio (ModelCacheHit Average) below {o.cache_hit_ratio} on {ep.endpoint_name}",
            o.cache_hit_ratio,
            comparison="LessThanThreshold",
            **m.alarm_metric(m.MODEL_CACHE_HIT),
            statistic="Average",
            period=o.period_s,
            dimensions=alarms.dims,
        )
        alarms.loading_wait_alarm = alarms.alarm(
            "LoadingWait",
            f"mean ModelLoadingWaitTime above {o.wait_ms:g} ms on {ep.endpoint_name}",
            o.wait_ms * 1000,
            **m.alarm_metric(m.MODEL_LOADING_WAIT_TIME),
            statistic=m.MODEL_LOADING_WAIT_TIME.statistic,
            period=o.period_s,
            dimensions=alarms.dims,
        )

    def instance_warnings(
        self, instance_type: str, instance_count: int, artifacts: Any
    ) -> list[tuple[str, str]]:
        """The working set of one instance against its GPU memory (models load on demand)."""
        return check_working_set(
            instance_type,
            instance_count,
            artifacts.target_model_entries,
            artifacts.built_models,
            readings=artifacts.gpu_readings,
        )

    def verification_spec(self, target_model_parameter_path: str | None) -> dict[str, Any]:
        """The handler reads the logical name -> TargetModel map from SSM."""
        return {"TargetModelParameterPath": target_model_parameter_path}

    def verification_parameter_path(self, target_model_parameter_path: str | None) -> str | None:
        return target_model_parameter_path

    def samples_verification(self) -> bool:
        return True


MULTI_MODEL = register(MultiModel())
