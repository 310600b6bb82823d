"""The foreground ``serve``: several manifest endpoints behind one front until SIGTERM / SIGINT.

``with Serving(request) as serving``: the front starts and every endpoint is checked (its settings
without effect are in :attr:`Serving.notes`) before any server starts; :meth:`Serving.start_each`
starts them one by one, :meth:`Serving.wait` blocks until a signal or an endpoint that keeps
crashing, and leaving the block stops every server and the front. In a serve that
:func:`cdk_triton.local.detached.start` runs, each ready endpoint publishes its state file.
"""

from __future__ import annotations

import contextlib
import os
import signal
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from types import FrameType
from typing import Any

from cdk_triton.config.server_options.release import PING_MODE
from cdk_triton.local.components import ComponentsEndpoint
from cdk_triton.local.detached import ServeRequest, ServeState, publish, withdraw
from cdk_triton.local.endpoint import LocalEndpoint
from cdk_triton.local.errors import LocalServerError
from cdk_triton.local.front import RuntimeFront
from cdk_triton.local.overlay import CpuOverlay


@dataclass(frozen=True, kw_only=True, slots=True)
class ServedEndpoint:
    """One endpoint that serves: its invocation URL, MME TargetModel headers and server log."""

    name: str
    mode: str
    url: str
    log: str
    target_models: dict[str, str] = field(default_factory=dict)
    components: dict[str, str] = field(default_factory=dict)  # logical name -> InferenceComponentName
    async_output: str | None = None  # an asynchronous endpoint: where its results are written


class Serving:
    """Serve a :class:`ServeRequest` in this process (a context manager).

    Args:
        request: what to serve.
        state_dir: publish each ready endpoint's state file here. Default: none (not detached).
    """

    def __init__(self, request: ServeRequest, *, state_dir: Path | None = None) -> None:
        self.request = request
        self.manifest, self.names = request.read()
        self.env = request.environment()
        self.options = request.server_options()
        self.state_dir = state_dir
        self.front: RuntimeFront | None = None
        self.endpoints: list[LocalEndpoint | ComponentsEndpoint] = []
        self._stop = threading.Event()
        self._handlers: dict[int, Any] = {}

    def __enter__(self) -> Serving:
        for sig in (signal.SIGTERM, signal.SIGINT):
            self._handlers[sig] = signal.signal(sig, self._on_signal)
        try:
            self.front = RuntimeFront(port=self.request.port).start()
            budget = self.request.memory_budget_mb
            for name in self.names:
                kind = (
                    ComponentsEndpoint
                    if self.manifest.endpoint(name).hosting_mode.components
                    else LocalEndpoint
                )
                self.endpoints.append(
                    kind(
                        self.manifest,
                        name,
                        front=self.front,
                        overlay=CpuOverlay(instance_count=self.request.instance_count),
                        memory_budget_bytes=budget * 2**20 if budget else None,
                        start_timeout=self.request.start_timeout,
                        server_options=self.options,
                        ping_mode_inherited=PING_MODE in self.env,
                    )
                )
                if isinstance(self.endpoints[-1], LocalEndpoint):  # async: SingleModel only
                    self.endpoints[-1].async_location = self.request.async_location
        except BaseException:
            self.close()
            raise
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _on_signal(self, signum: int, frame: FrameType | None) -> None:
        self._stop.set()

    @property
    def url(self) -> str:
        """The front's URL (boto3 ``endpoint_url``)."""
        assert self.front is not None, "use Serving as a context manager"
        return self.front.url

    @property
    def notes(self) -> list[tuple[str, str]]:
        """(endpoint, message) of each setting the manifest's release reads without effect."""
        return [(ep.name, note.message) for ep in self.endpoints for note in ep.settings_without_effect]

    def start_each(self) -> Iterator[ServedEndpoint]:
        """Start the endpoints one by one; yield each once it serves (and has published its state)."""
        for ep in self.endpoints:
            ep.start()
            info = ep.describe()
            if self.state_dir is not None:
                publish(self.state_dir, self._state(ep, info))
            yield ServedEndpoint(
                name=ep.name,
                mode=info["mode"],
                url=f"{self.url}/endpoints/{ep.name}/invocations",
                log=info["log"],
                target_models=dict(info["target_models"] or {}),
                components=dict(info.get("components") or {}),
                async_output=route.output_location if (route := getattr(ep, "async_route", None)) else None,
            )

    def _state(self, ep: LocalEndpoint | ComponentsEndpoint, info: dict[str, Any]) -> ServeState:
        return ServeState(
            pid=os.getpid(),
            url=self.url,
            endpoint=ep.name,
            manifest=str(Path(self.request.manifest).resolve()),
            log=info["log"],
            mode=info["mode"],
            server_pgid=ep.server.proc.pid if ep.server and ep.server.proc else None,
            started=time.time(),
        )

    def wait(self) -> LocalServerError | None:
        """Block until SIGTERM / SIGINT (None) or an endpoint that keeps crashing (its error).

        A crashed server is restarted by its ``LocalEndpoint``; one that keeps crashing ends the serve.
        """
        while not self._stop.wait(0.5):
            for ep in self.endpoints:
                if ep.failed is not None:
                    return ep.failed
        return None

    def close(self) -> None:
        """Stop every server and the front; withdraw the state files; restore the signal handlers."""
        for ep in self.endpoints:
            ep.stop()
            if self.state_dir is not None:
                withdraw(self.state_dir, ep.name)
        if self.front is not None:
            self.front.stop()
            self.front = None
        for sig, handler in self._handlers.items():
            with contextlib.suppress(ValueError, TypeError):
                signal.signal(sig, handler)
        self._handlers.clear()
