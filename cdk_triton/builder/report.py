"""Progress reporting: rich progress bars (with an ETA), each model's state and warnings on stderr,
or silence. A warning is one line (what, how many, what to do); its full detail (a CVE list) is shown only
with ``verbose`` (``cdk-triton build --verbose`` / ``cdk-triton demo --verbose``)."""

from __future__ import annotations

from typing import Any

#: how many running models the export bar names before "+N more"
SHOWN_RUNNING = 4


class Reporter:
    """Progress and messages: rich progress bars when enabled, silent otherwise.

    ``states`` keeps each model's last state (``exporting``, ``exported``, ``failed``) either way;
    ``verbose`` also prints each warning's detail under it."""

    def __init__(
        self,
        enabled: bool,
        *,
        console: Any | None = None,
        verbose: bool = False,
        shown: set[str] | None = None,
    ) -> None:
        self.enabled = enabled
        self.verbose = verbose
        #: the warnings already printed in this run (shared by the builds of one demo: each is said once)
        self.shown: set[str] = set() if shown is None else shown
        self._console = console
        self._progress: Any = None
        self._tasks: dict[str, Any] = {}
        self.states: dict[str, str] = {}
        self._running: list[str] = []

    def __enter__(self) -> Reporter:
        if self.enabled:
            from rich.console import Console
            from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn

            self._progress = Progress(
                TextColumn("{task.description:<10}"),
                BarColumn(),
                TextColumn("{task.completed:.0f}/{task.total:.0f} {task.fields[unit]}"),
                TimeElapsedColumn(),
                TextColumn("eta"),
                TimeRemainingColumn(),
                TextColumn("{task.fields[what]}"),
                console=self._console or Console(stderr=True),
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

    def model(self, name: str, state: str, *, detail: str = "", seconds: float | None = None) -> None:
        """A model's export state: ``exporting`` (named on the bar while it runs), then ``exported``
        or ``failed`` (one line each, the bar advanced)."""
        self.states[name] = state
        if state == "exporting":
            self._running.append(name)
        elif name in self._running:
            self._running.remove(name)
        if self._progress is None:
            return
        shown = ", ".join(self._running[:SHOWN_RUNNING])
        if len(self._running) > SHOWN_RUNNING:
            shown += f" +{len(self._running) - SHOWN_RUNNING} more"
        done = 0 if state == "exporting" else 1
        self.advance("export", done, what=shown)
        if state == "exported":
            took = f" ({seconds:.1f} s)" if seconds is not None else ""
            self._progress.console.print(f"[green]exported[/green] {name}{took}")
        elif state == "failed":
            self._progress.console.print(f"[red]failed[/red] {name}: {detail}")

    def note(self, text: str) -> None:
        """One line of what the build is doing that asks nothing of the user (not a warning)."""
        if self._progress is not None:
            from rich.markup import escape

            self._progress.console.print(escape(text), highlight=False)

    def warn(self, text: str, *, detail: str | None = None) -> None:
        """One warning line; ``detail`` (the full list behind it) below it when verbose."""
        if self._progress is not None and text not in self.shown:
            self.shown.add(text)
            from rich.markup import escape

            # escaped: a code such as [cdk-triton:HighAdvisory] is text, not a style tag
            self._progress.console.print(f"[yellow]warning:[/yellow] {escape(text)}", highlight=False)
            if detail and self.verbose:
                self._progress.console.print(f"  detail: {detail}", markup=False, highlight=False)
