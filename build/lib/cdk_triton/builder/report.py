"""Progress reporting: rich progress bars and warnings on stderr, or silence."""

from __future__ import annotations

from typing import Any


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
