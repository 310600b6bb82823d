"""Memory-budget semantics of the MME model manager, against a fake server (no tritonserver).

Budget = resident memory of tritonserver and its backend stubs. While it is exceeded, idle models
other than the most recently used are unloaded, least recently used first; a model with a request
in flight is never unloaded; the budget is also checked after requests, not only after loads.
"""

from __future__ import annotations

import threading
import time
from pathlib import Path

from cdk_triton.config.manifest import manifest_from_dict
from cdk_triton.local.mme import ModelManager
from cdk_triton.local.overlay import CpuOverlay

NAMES = ("a", "b", "c")


class FakeServer:
    """Answers POST /models and DELETE /models/<m> like Triton; memory = per_model x loaded models."""

    def __init__(self, per_model: int) -> None:
        self.per_model = per_model
        self.loaded: set[str] = set()
        self.lock = threading.Lock()

    def request(self, method: str, path: str, body: bytes | None = None, headers=None, **_: object):
        import json

        with self.lock:
            if method == "POST" and path == "/models":
                self.loaded.add(json.loads(body or b"{}")["model_name"])
            elif method == "DELETE":
                self.loaded.discard(path.rsplit("/", 1)[1])
        return 200, {}, b""

    def protect_shared_memory(self) -> None:
        pass

    def rss_bytes(self) -> int:
        with self.lock:
            return self.per_model * len(self.loaded)


def _manager(tmp_path: Path, server: FakeServer, budget: int) -> ModelManager:
    targets = {
        n: {
            "logical_name": n,
            "target_model": f"{n}.tar.gz",
            "model": n,
            "models": [n],
            "local_path": f"mme/{n}.tar.gz",
            "sha256": "0" * 64,
            "size_bytes": 1,
            "s3_uri": f"s3://b/mme/{n}.tar.gz",
        }
        for n in NAMES
    }
    doc = {
        "schema_version": 1,
        "triton_version": "24.09",
        "uploaded": False,
        "artifact_location": {"bucket": "b"},
        "models": {},
        "endpoints": {
            "m": {
                "name": "m",
                "mode": "MultiModel",
                "instance_types": ["ml.g5.xlarge"],
                "s3_prefix": "s3://b/mme/",
                "target_models": targets,
            }
        },
    }
    manifest = manifest_from_dict(doc, source=str(tmp_path / "manifest.json"))
    manager = ModelManager(
        server=server,  # type: ignore[arg-type]
        manifest=manifest,
        entry=manifest.endpoint("m"),
        staging=tmp_path,
        overlay=CpuOverlay(),
        memory_budget_bytes=budget,
    )
    manager._stage = lambda target: f"/opt/ml/models/x/{target.target_model}"  # type: ignore[method-assign]
    return manager


def _evicted(manager: ModelManager) -> list[str]:
    return [e.target_model for e in manager.events if e.action == "unload" and "memory budget" in e.detail]


def test_budget_unloads_the_least_recently_used_idle_model_first(tmp_path: Path) -> None:
    server = FakeServer(per_model=50)
    manager = _manager(tmp_path, server, budget=100)
    for name in NAMES:
        manager.load(name)
        time.sleep(0.002)  # distinct last-used times
    assert _evicted(manager) == ["a.tar.gz"]  # 150 > 100 after c: a (LRU) goes, 100 is within the budget
    assert manager.loaded() == ["b.tar.gz", "c.tar.gz"]


def test_budget_never_unloads_a_model_with_a_request_in_flight(tmp_path: Path) -> None:
    server = FakeServer(per_model=60)
    manager = _manager(tmp_path, server, budget=100)
    with manager.use("a"):
        manager.load("b")  # 120 > 100: a is busy, b is the newest: nothing can go
        assert set(manager.loaded()) == {"a.tar.gz", "b.tar.gz"}
        manager.load("c")  # 180 > 100: only b is idle and not the newest
        assert _evicted(manager) == ["b.tar.gz"]
        assert set(manager.loaded()) == {"a.tar.gz", "c.tar.gz"}


def test_budget_is_checked_after_requests_too(tmp_path: Path) -> None:
    server = FakeServer(per_model=10)
    manager = _manager(tmp_path, server, budget=100)
    manager.load("a")
    manager.load("b")
    assert _evicted(manager) == []
    if manager._budget_thread is not None:
        manager._budget_thread.join(5)  # the check after the load of b
    server.per_model = 60  # inference grew the models' memory: 120 > 100 with no new load
    manager._budget_checked = 0.0
    with manager.use("b"):
        pass
    assert manager._budget_thread is not None
    manager._budget_thread.join(5)
    assert _evicted(manager) == ["a.tar.gz"] and manager.loaded() == ["b.tar.gz"]


def test_a_request_for_a_model_being_evicted_waits_and_reloads(tmp_path: Path) -> None:
    server = FakeServer(per_model=10)
    manager = _manager(tmp_path, server, budget=1000)
    manager.load("a")
    with manager._cond:  # what _pick_victim does: a is now UNLOADING
        manager._states["a.tar.gz"].status = "unloading"
    done: list[str] = []

    def request() -> None:
        with manager.use("a") as target:
            done.append(target.target_model)

    worker = threading.Thread(target=request)
    worker.start()
    time.sleep(0.05)
    assert done == []  # waits for the unload instead of failing
    manager._unload("a.tar.gz", reason="test")
    worker.join(5)
    assert done == ["a.tar.gz"] and manager.loaded() == ["a.tar.gz"]


def test_event_log_keeps_only_the_most_recent_events(tmp_path: Path) -> None:
    from cdk_triton.local.mme import MAX_EVENTS

    manager = _manager(tmp_path, FakeServer(per_model=1), budget=10**9)
    for _ in range(MAX_EVENTS // 2 + 1):  # each round trip logs a load and an unload
        manager.load("a")
        manager.unload("a")
    manager.load("b")
    assert len(manager.events) == MAX_EVENTS
    assert manager.events[-1].target_model == "b.tar.gz" and manager.events[-1].action == "load"
