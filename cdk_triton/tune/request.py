"""What one ``cdk-triton tune`` run is asked to do: a typed, checked request (standard library only).

``cdk-triton tune`` parses its arguments into a :class:`TuneRequest`; :func:`cdk_triton.tune.run.run_tune`
(or :func:`~cdk_triton.tune.run.prepare_endpoint`) runs it. Every field is checked by
:meth:`TuneRequest.check` before anything is built, served or written.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from cdk_triton.config.declaration.file import declaration_not_found
from cdk_triton.errors import TritonValidationError
from cdk_triton.tune.variants import Axes

#: the instance type of a tuning endpoint when none is given
DEFAULT_TUNING_INSTANCE = "ml.g5.xlarge"


def _bad(
    prop: str, value: object, problem: str, allowed: str, fix: str, code: str = "TuneInvalid"
) -> TritonValidationError:
    return TritonValidationError(code, prop=prop, value=value, problem=problem, allowed=allowed, fix=fix)


@dataclass(frozen=True, kw_only=True, slots=True)
class Options:
    """What a sweep measures and how it ranks (:func:`cdk_triton.tune.run.tune` reads these).

    Attributes:
        model: the model (or ensemble) to tune.
        axes: what is varied (formats, batching, queue delays, instances) and the client concurrency.
            Default: ``Axes()``.
        budget_s: seconds for the whole sweep. Default: 120.
        repeats: repeats per phase; the median is reported. Default: 3.
        p99_ms: latency SLO, p99 at or under this. Default: none.
        margin: how much a variant must beat the current one by (0.05 = 5 %). Default: 0.05.
        target_rate: requests/s to serve: adds the instances needed and their cost. Default: none.
        price_per_hour: the instance's price per hour. Default: none (a request looks up the vendored
            price of its instance type).
    """

    model: str
    axes: Axes = Axes()
    budget_s: float = 120.0
    repeats: int = 3
    p99_ms: float | None = None
    margin: float = 0.05
    target_rate: float | None = None
    price_per_hour: float | None = None


@dataclass(frozen=True, kw_only=True, slots=True)
class TuneRequest(Options):
    """One tuning run of one model (or ensemble) of a declaration: the :class:`Options` of its sweep and
    where it measures, reports and writes.

    Attributes:
        config: the declaration (``models.yaml``).
        instance_type: the hosting instance type (price lookup, tuning endpoint). Default: none
            (``ml.g5.xlarge`` for a tuning endpoint).
        price_per_hour: (of :class:`Options`) overrides the vendored on-demand price. Default: the
            vendored price of ``instance_type`` when ``target_rate`` is given.
        endpoint_name: measure on this deployed tuning endpoint (boto3). Default: locally.
        tuning_manifest: the manifest of the tuning build; required with ``endpoint_name``.
        endpoint_url: SageMaker Runtime URL override. Default: ``AWS_ENDPOINT_URL_SAGEMAKER_RUNTIME``.
        out_dir: where the table, CSV, JSON and plots go. Default: ``<config dir>/out/tune/<model>``.
        apply: write the winner's fields back into ``config``. Default: False.
        allow_local_apply: let ``apply`` write results measured on the local CPU stand-ins. Default: False.
        plots: write the PNG plots. Default: True.
        progress: show a progress bar on stderr. Default: False.
    """

    config: Path
    instance_type: str | None = None
    endpoint_name: str | None = None
    tuning_manifest: Path | None = None
    endpoint_url: str | None = None
    out_dir: Path | None = None
    apply: bool = False
    allow_local_apply: bool = False
    plots: bool = True
    progress: bool = False

    def check(self) -> None:
        """Every field checked before anything is built, served or written (``TuneInvalid``, ...)."""
        if not Path(self.config).is_file():
            raise declaration_not_found(self.config, prop="--config")
        if self.repeats < 1:
            raise _bad("--repeats", self.repeats, "must be at least 1", "1, 2, 3, ...", "pass --repeats 3")
        if self.budget_s <= 0:
            raise _bad("--budget", self.budget_s, "must be positive", "seconds > 0", "pass --budget 120")
        if not 0 <= self.margin < 10:
            raise _bad(
                "--margin",
                self.margin,
                "must be a fraction",
                "0 <= margin < 10 (0.05 = 5 %)",
                "pass --margin 0.05",
            )
        if self.endpoint_name and not self.tuning_manifest:
            raise _bad(
                "--tuning-manifest",
                None,
                "is required with --endpoint-name",
                "the manifest.json of the tuning build",
                "pass --tuning-manifest build/out/tune-endpoint/manifest.json",
            )

    @property
    def results_dir(self) -> Path:
        """Where the table, CSV, JSON and plots go."""
        return self.out_dir or Path(self.config).parent / "out" / "tune" / self.model

    @property
    def tuning_instance_type(self) -> str:
        """The instance type of a tuning endpoint."""
        return self.instance_type or DEFAULT_TUNING_INSTANCE
