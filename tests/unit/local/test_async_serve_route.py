"""The async route ``serve`` registers (no tritonserver): an entry with an ``async:`` block gets output and
failure under the layout's keys of the location (default: the manifest's folder; a folder or s3://),
a real-time entry none, and ``AsyncClient`` (``invoke --async``) puts the input, waits and returns the output."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

from cdk_triton.config.async_inference import AsyncValues
from cdk_triton.local.client import AsyncClient
from cdk_triton.local.endpoint import async_route
from cdk_triton.local.front import Reply, RuntimeFront


def _entry(values: AsyncValues | None) -> SimpleNamespace:
    return SimpleNamespace(name="clf", async_inference=values)


def test_the_route_follows_the_layout_under_the_location(tmp_path: Path) -> None:
    manifest = SimpleNamespace(path=str(tmp_path / "out" / "manifest.json"))
    route = async_route(manifest, _entry(AsyncValues(invocation_timeout_s=30)))  # type: ignore[arg-type]
    assert route is not None and route.invocation_timeout_s == 30
    assert route.output_location == f"{tmp_path}/out/async/clf/output/"
    assert route.failure_location == f"{tmp_path}/out/async/clf/failure/"
    s3 = async_route(manifest, _entry(AsyncValues()), "s3://b/p")  # type: ignore[arg-type]
    assert s3 is not None and s3.output_location == "s3://b/p/async/clf/output/"
    assert s3.invocation_timeout_s == 900
    assert async_route(manifest, _entry(None)) is None  # type: ignore[arg-type]


class Upper:
    name = "clf"

    def handle_invocation(self, body: bytes, headers: dict[str, str]) -> Reply:
        if body == b"bad":
            return 400, {}, b"bad input"
        return 200, {"Content-Type": "application/json"}, body.upper()


def test_async_client_puts_the_input_invokes_and_waits_for_the_output(tmp_path: Path) -> None:
    manifest = SimpleNamespace(path=str(tmp_path / "manifest.json"))
    entry = _entry(AsyncValues(invocation_timeout_s=5))
    route = async_route(manifest, entry)  # type: ignore[arg-type]
    assert route is not None
    front = RuntimeFront().start()
    try:
        front.add_async(Upper(), route)  # type: ignore[arg-type]
        client = AsyncClient(SimpleNamespace(manifest=manifest, entry=entry, name="clf", url=front.url))
        status, _, data = client.invoke(b'{"x": "abc"}', "application/json")
        assert (status, data) == (200, b'{"X": "ABC"}')
        assert client.last["OutputLocation"].startswith(f"{tmp_path}/async/clf/output/")
        assert list((tmp_path / "async" / "clf" / "input").iterdir())  # the payload went through a file
        status, _, data = client.invoke(b"bad", "application/json")
        assert status == 500 and b"bad input" in data
    finally:
        front.stop()
