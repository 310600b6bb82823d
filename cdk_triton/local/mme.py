"""Multi-model endpoint manager: what SageMaker does around Triton for an MME.

On the first request for a TargetModel it checks and extracts the archive to
``<staging>/<alnum>/model`` (seen by the server as ``/opt/ml/models/<alnum>/model``), asks the
server to load it (``POST /models``), and keeps models in least-recently-used order.

Memory budget: the resident memory (sum of RSS) of ``tritonserver`` and its backend stubs. It is
checked after every load (before the request that caused it runs) and after requests (at most once
a second, in the background: inference can grow a model's memory). While it is exceeded, idle
models other than the most recently used one are unloaded, least recently used first. A load
answered 507 (out of memory) unloads the LRU idle model and retries. A model is never unloaded while
a request on it is in flight, and a request for a model being unloaded waits, then reloads it.
"""

from __future__ import annotations

import collections
import contextlib
import hashlib
import http.client
import json
import logging
import shutil
import threading
import time
import urllib.parse
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from cdk_triton.config import layout
from cdk_triton.config.manifest import EndpointEntry, Manifest, TargetModel
from cdk_triton.errors import TritonValidationError
from cdk_triton.local.errors import LocalServerError
from cdk_triton.local.overlay import CpuOverlay
from cdk_triton.local.repository import prepare_target_model
from cdk_triton.local.server import SAGEMAKER_MODELS_DIR

#: How many load/unload events a ModelManager keeps.
MAX_EVENTS = 1000

log = logging.getLogger("cdk_triton.local")

UNLOADED, LOADING, LOADED, UNLOADING = "unloaded", "loading", "loaded", "unloading"


class ModelLoadError(LocalServerError):
    """The server refused to load a TargetModel; ``status`` and ``server_message`` are the server's."""

    def __init__(self, target: str, status: int, message: str):
        self.status = status
        self.server_message = message
        super().__init__(
            f"loading target model '{target}' failed with HTTP {status}: {message}", code="ModelLoadFailed"
        )


class ModelNotReady(LocalServerError):
    """The target model is still loading after the wait (SageMaker's ModelNotReadyException)."""


class ModelServer(Protocol):
    """What the manager calls on the server: a ``TritonServer``, or the SageMaker Triton container
    (``container.ContainerServer``)."""

    def request(
        self, method: str, path: str, body: bytes | None = None, headers: dict[str, str] | None = None
    ) -> tuple[int, dict[str, str], bytes]: ...

    def rss_bytes(self) -> int: ...

    def protect_shared_memory(self) -> None: ...


#: Stages one TargetModel's archive as a repository root (``dest``): checked, extracted, configs parsed.
Prepare = Callable[[TargetModel, Path], object]


@dataclass
class _State:
    status: str = UNLOADED
    inflight: int = 0
    last_used: float = 0.0
    staged: Path | None = None


@dataclass
class MmeEvent:
    """One load, unload, eviction or 507 retry (tests and `serve` logs read these)."""

    action: str
    target_model: str
    detail: str = ""
    at: float = field(default_factory=time.monotonic)


class ModelManager:
    """Loads, tracks and evicts the TargetModels of one MME.

    Args:
        server: the running server (MME mode).
        manifest / entry: the manifest and the MME endpoint entry.
        staging: host directory bound at ``/opt/ml/models`` in the server's mount namespace.
        overlay: the CPU overlay applied to each extracted archive (None: served as built).
        memory_budget_bytes: resident memory (server + backend stubs) above which idle models are
            unloaded, least recently used first. Default: no budget.
        load_wait_timeout: seconds a request waits for a model another request is loading before
            ModelNotReady (SageMaker answers ModelNotReadyException after 60 s). Default: 60.
        prepare: how an archive is staged. Default: ``repository.prepare_target_model`` with ``overlay``.
    """

    def __init__(
        self,
        *,
        server: ModelServer,
        manifest: Manifest,
        entry: EndpointEntry,
        staging: Path,
        overlay: CpuOverlay | None,
        memory_budget_bytes: int | None = None,
        load_wait_timeout: float = 60.0,
        prepare: Prepare | None = None,
    ) -> None:
        self.server = server
        self._prepare = prepare
        self.manifest = manifest
        self.entry = entry
        self.staging = staging
        self.overlay = overlay
        self.memory_budget_bytes = memory_budget_bytes
        self.load_wait_timeout = load_wait_timeout
        self._cond = threading.Condition()
        self._states: dict[str, _State] = {}
        # the most recent load/unload/evict events (bounded: `serve` may run for days)
        self.events: collections.deque[MmeEvent] = collections.deque(maxlen=MAX_EVENTS)
        self._budget_checked = 0.0
        #: resident memory each TargetModel added when it loaded (the largest seen): what a load needs
        self.cost_bytes: dict[str, int] = {}
        self._load_lock = threading.Lock()  # one load at a time: its room is made and measured alone
        self._budget_thread: threading.Thread | None = None
        self._by_name = {t.target_model: t for t in entry.target_models.values()}
        self._by_name.update(entry.target_models)

    # ------------------------------------------------------------------ names
    def resolve(self, name: str) -> TargetModel:
        """A logical name (manifest key) or a hashed TargetModel value -> the TargetModel."""
        target = self._by_name.get(name)
        if target is None:
            uri = layout.target_model_uri(self.entry.s3_prefix or "", name)
            key = f"{self.manifest.artifact_location.normalized_prefix}{uri}"
            raise TritonValidationError(
                "UnknownTargetModel",
                prop="TargetModel",
                value=name,
                problem=f"is not a model of endpoint '{self.entry.name}' (no object at {uri}; key {key})",
                allowed=_some(sorted(self.entry.target_models)) + " or their TargetModel values",
                fix="pass a logical name from the manifest or its hashed TargetModel value",
            )
        return target

    def loaded(self) -> list[str]:
        """TargetModel values currently loaded, least recently used first."""
        with self._cond:
            items = [(s.last_used, n) for n, s in self._states.items() if s.status == LOADED]
        return [n for _, n in sorted(items)]

    # ------------------------------------------------------------------ use
    @contextlib.contextmanager
    def use(self, name: str) -> Iterator[TargetModel]:
        """Hold a loaded TargetModel for one request (loads it first; never evicted while held)."""
        target = self.resolve(name)
        self._acquire(target)
        try:
            yield target
        finally:
            with self._cond:
                st = self._states[target.target_model]
                st.inflight -= 1
                st.last_used = time.monotonic()
                self._cond.notify_all()
            self._check_budget_soon(keep=target.target_model)

    def _check_budget_soon(self, keep: str) -> None:
        """After a request: check the budget in the background, at most once a second."""
        if self.memory_budget_bytes is None:
            return
        with self._cond:
            now = time.monotonic()
            busy = self._budget_thread is not None and self._budget_thread.is_alive()
            if busy or now - self._budget_checked < 1.0:
                return
            self._budget_checked = now
            self._budget_thread = threading.Thread(
                target=self._enforce_budget_quietly, args=(keep,), name="cdk-triton-budget", daemon=True
            )
            self._budget_thread.start()

    def _enforce_budget_quietly(self, keep: str) -> None:
        try:
            self._enforce_budget(keep=keep)
        except (OSError, http.client.HTTPException, LocalServerError) as exc:  # the server is stopping
            log.debug("memory budget check failed: %s", exc)

    def _acquire(self, target: TargetModel) -> None:
        key = target.target_model
        deadline = time.monotonic() + self.load_wait_timeout
        with self._cond:
            st = self._states.setdefault(key, _State())
            while True:
                if st.status == LOADED:
                    st.inflight += 1
                    st.last_used = time.monotonic()
                    return
                if st.status == UNLOADED:
                    st.status = LOADING
                    break
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    raise ModelNotReady(f"target model '{key}' is still {st.status}", code="ModelNotReady")
                self._cond.wait(remaining)
        try:
            if not self._load_lock.acquire(timeout=max(deadline - time.monotonic(), 0.0)):
                raise ModelNotReady(
                    f"target model '{key}' is still queued behind another load", code="ModelNotReady"
                )
            try:
                self._make_room(key, deadline)
                before = self.server.rss_bytes() if self.memory_budget_bytes is not None else 0
                self._load(target)
                if self.memory_budget_bytes is not None:
                    added = max(self.server.rss_bytes() - before, 0)
                    self.cost_bytes[key] = max(self.cost_bytes.get(key, 0), added)
            finally:
                self._load_lock.release()
        except BaseException:
            with self._cond:
                st.status = UNLOADED
                self._cond.notify_all()
            raise
        with self._cond:
            st.status = LOADED
            st.inflight += 1
            st.last_used = time.monotonic()
            self._cond.notify_all()
        self._enforce_budget(keep=key)

    def reset(self) -> None:
        """The server restarted empty: every model loads again on its next request."""
        with self._cond:
            for st in self._states.values():
                if st.status == LOADED:
                    st.status = UNLOADED
            self._cond.notify_all()
        self._event("reset", "*", "server restarted")

    def load(self, name: str) -> TargetModel:
        """Load a TargetModel now (as a first request would)."""
        with self.use(name) as target:
            return target

    # ------------------------------------------------------------------ server calls
    def _stage(self, target: TargetModel) -> str:
        alnum = hashlib.sha256(target.target_model.encode()).hexdigest()[:24]
        root = self.staging / alnum
        if root.exists():
            shutil.rmtree(root)
        root.mkdir(parents=True)
        if self._prepare is not None:
            self._prepare(target, root / "model")
        else:
            prepare_target_model(self.manifest, target, root / "model", self.overlay)
        self._states[target.target_model].staged = root
        return f"{SAGEMAKER_MODELS_DIR}/{alnum}/model"

    def _load(self, target: TargetModel) -> None:
        key = target.target_model
        url = self._stage(target)
        body = json.dumps({"model_name": key, "url": url}).encode()
        while True:
            t0 = time.monotonic()
            status, _, data = self.server.request(
                "POST", "/models", body, {"Content-Type": "application/json"}
            )
            if status == 200:
                self.server.protect_shared_memory()
                self._event("load", key, f"{time.monotonic() - t0:.2f} s")
                return
            if status == 409:  # already registered: it is loaded
                self._event("load", key, "already loaded (409)")
                return
            message = error_text(data)
            if status == 507:
                victim = self._pick_victim(exclude=key)
                if victim is None:
                    raise ModelLoadError(key, status, message)
                self._event("retry-after-507", key, f"unloading {victim}")
                self._unload(victim, reason="507")
                continue
            raise ModelLoadError(key, status, message)

    def _pick_victim(self, exclude: str, *, busy: bool = False) -> str | None:
        """The least recently used idle model (or, with ``busy``, a busy one if none is idle): UNLOADING."""
        with self._cond:
            candidates = [
                (s.inflight > 0, s.last_used, n)
                for n, s in self._states.items()
                if n != exclude and s.status == LOADED and (busy or s.inflight == 0)
            ]
            if not candidates:
                return None
            _, _, name = min(candidates)
            self._states[name].status = UNLOADING  # new requests for it wait from now on
            return name

    def _make_room(self, key: str, deadline: float) -> None:
        """Before a load: unload models until the budget holds what this model takes once loaded.

        The cost is the resident memory the model added when it last loaded (for a first load, the
        largest cost seen). A busy victim takes no new request and is unloaded when its in-flight
        requests end; waiting longer than ``load_wait_timeout`` is ModelNotReady (429).
        """
        if self.memory_budget_bytes is None:
            return
        need = self.cost_bytes.get(key) or max(self.cost_bytes.values(), default=0)
        while self.server.rss_bytes() + need > self.memory_budget_bytes:
            victim = self._pick_victim(exclude=key, busy=True)
            if victim is None:
                return  # nothing else is loaded: this model alone may exceed the budget
            with self._cond:
                st = self._states[victim]
                while st.inflight:
                    remaining = deadline - time.monotonic()
                    if remaining <= 0:
                        st.status = LOADED
                        self._cond.notify_all()
                        raise ModelNotReady(
                            f"target model '{key}' waits for memory: '{victim}' still has requests in flight",
                            code="ModelNotReady",
                        )
                    self._cond.wait(remaining)
            self._unload(victim, reason=f"memory budget {self.memory_budget_bytes} bytes: room for {key}")

    def _unload(self, name: str, *, reason: str) -> None:
        """Unload a model already marked UNLOADING."""
        try:
            status, _, data = self.server.request("DELETE", f"/models/{urllib.parse.quote(name, safe='')}")
            if status not in (200, 404):
                log.warning("unloading %s answered %s: %s", name, status, error_text(data))
        finally:
            st = self._states[name]
            staged, st.staged = st.staged, None
            if staged is not None:  # still UNLOADING: nobody stages this model meanwhile
                shutil.rmtree(staged, ignore_errors=True)
            with self._cond:
                st.status = UNLOADED
                self._cond.notify_all()
        self._event("unload", name, reason)

    def unload(self, name: str) -> None:
        """Unload a TargetModel now (waits for its in-flight requests)."""
        key = self.resolve(name).target_model
        with self._cond:
            st = self._states.setdefault(key, _State())
            while st.status in (LOADING, UNLOADING) or (st.status == LOADED and st.inflight):
                self._cond.wait(1.0)
            if st.status != LOADED:
                return
            st.status = UNLOADING
        self._unload(key, reason="requested")

    def _enforce_budget(self, keep: str) -> None:
        if self.memory_budget_bytes is None:
            return
        while self.server.rss_bytes() > self.memory_budget_bytes:
            victim = self._pick_victim(exclude=keep)
            if victim is None:
                return
            self._unload(victim, reason=f"memory budget {self.memory_budget_bytes} bytes exceeded")

    def _event(self, action: str, name: str, detail: str) -> None:
        log.info("mme %s %s %s", action, name, detail)
        with self._cond:
            self.events.append(MmeEvent(action=action, target_model=name, detail=detail))


def _some(names: list[str], shown: int = 20) -> str:
    """The first names of a (fleet-sized) list and how many more."""
    more = f" and {len(names) - shown} more" if len(names) > shown else ""
    return ", ".join(names[:shown]) + more


def error_text(data: bytes) -> str:
    try:
        parsed = json.loads(data)
        if isinstance(parsed, dict) and "error" in parsed:
            return str(parsed["error"])
    except ValueError:
        pass
    return data.decode(errors="replace")
