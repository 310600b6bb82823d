"""Progress reporting (rich progress bars on stderr, or silence) and the build's summary rows."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from cdk_triton.builder.context import BuildContext


class Reporter:
    """Progress and messages: rich progress bars when enabled, silent otherwise."""

    def __init__(self, enabled: bool) -> None:
        self.enabled = enabled
        self._progress: Any = None
        self._tasks: dict[str, Any] = {}

    def __enter__(self) -> Reporter:
        if self.enabled:
            from rich.console import Console
            from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

            self._progress = Progress(
                TextColumn("{task.description:<10}"),
                BarColumn(),
                TextColumn("{task.completed:.0f}/{task.total:.0f} {task.fields[unit]}"),
                TextColumn("{task.fields[what]}"),
                TimeElapsedColumn(),
                console=Console(stderr=True),
                transient=False,
            )
            self._progress.__enter__()
        return self

    def __exit__(self, *exc: object) -> None:
        if self._progress is not None:
            self._progress.__exit__(*exc)

    def start(self, phase: str, total: int, unit: str = "") -> None:
        if self._progress is not None:
            self._tasks[phase] = self._progress.add_task(phase, total=max(total, 1), what="", unit=unit)

    def advance(self, phase: str, amount: int = 1, what: str = "") -> None:
        if self._progress is not None and phase in self._tasks:
            self._progress.update(self._tasks[phase], advance=amount, what=what)

    def finish(self, phase: str) -> None:
        if self._progress is not None and phase in self._tasks:
            t = self._tasks[phase]
            self._progress.update(t, completed=self._progress.tasks[t].total, what="done")

    def warn(self, text: str) -> None:
        if self._progress is not None:
            self._progress.console.print(f"[yellow]warning:[/yellow] {text}")


def summary_rows(ctx: BuildContext) -> list[dict[str, str]]:
    """One row per model of the build: format, exported/cached/skipped, largest parity difference."""
    rows = []
    for n in ctx.built:
        rec = ctx.plan[n].record
        parity = rec.exported.parity_max_abs_diff if rec is not None else None
        rows.append(
            {
                "model": n,
                "format": rec.format if rec is not None else "",
                "status": "exported" if n in ctx.fresh else "cached",
                "parity": f"{parity:.2e}" if parity is not None else "-",
            }
        )
    for n in ctx.result.skipped_models:
        rows.append({"model": n, "format": ctx.plan[n].spec.format, "status": "skipped", "parity": "-"})
    return rows
