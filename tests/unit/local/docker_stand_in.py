"""A recording stand-in for the ``docker`` CLI and the SageMaker Triton container it would start.

``install(bin_dir, state_dir)`` writes an executable ``docker`` into ``bin_dir``: each call appends its argv
(and for ``login`` the password read from stdin) as one JSON line to ``state_dir/calls.jsonl`` and answers
as docker does:

- ``version``: the server version; with ``state_dir/daemon-down`` docker's "Cannot connect" error, rc 1;
- ``image inspect IMAGE``: rc 0 once ``pull`` made the image (``state_dir/image``), else "No such image";
- ``login --password-stdin``, ``pull`` (rc 1 with ``state_dir/pull-fails``), ``logs``, ``rm --force``;
- ``run --detach ... --publish 127.0.0.1:P:8080 --volume HOST:TARGET:ro --env K=V ... IMAGE serve``: starts
  :func:`serve_fake_container` in the background on P (``state_dir/run-exits``: it exits at once), prints
  a container id;
- ``inspect --format {{.State.Running}} NAME``: ``true`` while that process lives.

The fake container answers Triton's SageMaker routes: ``GET /ping``; ``POST /invocations`` (SME: JSON
naming SAGEMAKER_TRITON_DEFAULT_MODEL_NAME and the models under the mount); ``POST /models`` (MME: 200 when
the url, read through the mount, is a staged repository, else 400); ``POST /models/<name>/invoke``
(404 unless loaded).
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

SCRIPT = """#!{python}
import sys
sys.path.insert(0, {root!r})
from tests.unit.local.docker_stand_in import main
sys.exit(main(sys.argv[1:], {state!r}))
"""


def install(bin_dir: Path, state_dir: Path) -> Path:
    """Write the ``docker`` stand-in into ``bin_dir`` (recording into ``state_dir``)."""
    bin_dir.mkdir(parents=True, exist_ok=True)
    state_dir.mkdir(parents=True, exist_ok=True)
    root = str(Path(__file__).resolve().parents[3])
    path = bin_dir / "docker"
    path.write_text(SCRIPT.format(python=sys.executable, root=root, state=str(state_dir)))
    path.chmod(0o755)
    return path


def calls(state_dir: Path) -> list[list[str]]:
    """Every recorded argv (without the program name), in order."""
    log = state_dir / "calls.jsonl"
    if not log.exists():
        return []
    return [json.loads(line)["argv"] for line in log.read_text().splitlines()]


def logins(state_dir: Path) -> list[str]:
    """The passwords ``docker login --password-stdin`` read."""
    log = state_dir / "calls.jsonl"
    return [json.loads(line)["stdin"] for line in log.read_text().splitlines() if "stdin" in json.loads(line)]


def _record(state: Path, argv: list[str], **more: str) -> None:
    with (state / "calls.jsonl").open("a") as f:
        f.write(json.dumps({"argv": argv, **more}) + "\n")


def _alive(pid_file: Path) -> bool:
    if not pid_file.exists():
        return False
    try:
        pid = int(pid_file.read_text())
        os.kill(pid, 0)
        return Path(f"/proc/{pid}/stat").read_text().split()[2] != "Z"  # a zombie has exited
    except (OSError, ValueError):
        return False


def main(argv: list[str], state_dir: str) -> int:
    state = Path(state_dir)
    if argv[:1] == ["login"]:
        password = sys.stdin.read()
        _record(state, argv, stdin=password)
        print("Login Succeeded")
        return 0
    _record(state, argv)
    cmd = argv[0] if argv else ""
    if cmd == "version":
        if (state / "daemon-down").exists():
            print(
                "Cannot connect to the Docker daemon at unix:///var/run/docker.sock. Is the docker daemon running?",
                file=sys.stderr,
            )
            return 1
        print("27.3.1")
        return 0
    if argv[:2] == ["image", "inspect"]:
        if (state / "image").exists():
            print("[{}]")
            return 0
        print(f"Error: No such image: {argv[2]}", file=sys.stderr)
        return 1
    if cmd == "pull":
        if (state / "pull-fails").exists():
            print("Error response from daemon: no space left on device", file=sys.stderr)
            return 1
        (state / "image").write_text(argv[1])
        print(f"Status: Downloaded newer image for {argv[1]}")
        return 0
    if cmd == "run":
        return _run(argv, state)
    if cmd == "inspect":
        print("true" if _alive(state / f"{argv[-1]}.pid") else "false")
        return 0
    if cmd == "logs":
        print("I1206 fake tritonserver log line")
        return 0
    if cmd == "rm":
        pid_file = state / f"{argv[-1]}.pid"
        if pid_file.exists():
            with contextlib.suppress(OSError, ValueError):
                os.killpg(int(pid_file.read_text()), signal.SIGTERM)
        return 0
    print(f"docker stand-in: unknown command {argv}", file=sys.stderr)
    return 1


def _run(argv: list[str], state: Path) -> int:
    name = argv[argv.index("--name") + 1]
    port = argv[argv.index("--publish") + 1].split(":")[1]
    host, target, _ = argv[argv.index("--volume") + 1].rsplit(":", 2)
    env = [argv[i + 1] for i, a in enumerate(argv) if a == "--env"]
    exits = "1" if (state / "run-exits").exists() else "0"
    proc = subprocess.Popen(
        [sys.executable, __file__, port, host, target, exits, json.dumps(env)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
        env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[3])},
    )
    (state / f"{name}.pid").write_text(str(proc.pid))
    print(f"{proc.pid:064x}")
    return 0


def serve_fake_container(port: int, host: str, target: str, env: dict[str, str]) -> None:
    """The SageMaker routes of Triton, as far as the tests need them (module doc)."""
    loaded: set[str] = set()

    class Handler(BaseHTTPRequestHandler):
        def _send(self, status: int, doc: object) -> None:
            body = json.dumps(doc).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def do_GET(self) -> None:  # noqa: N802
            self._send(200 if self.path == "/ping" else 404, {})

        def do_POST(self) -> None:  # noqa: N802
            body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
            if self.path == "/invocations":
                models = sorted(p.name for p in Path(host).iterdir() if p.is_dir())
                default = env.get("SAGEMAKER_TRITON_DEFAULT_MODEL_NAME")
                status = 400 if default not in models else 200
                self._send(status, {"model": default, "models": models, "bytes": len(body), "mount": target})
            elif self.path == "/models":
                req = json.loads(body)
                staged = Path(host) / req["url"].removeprefix(target + "/")
                if not (staged.is_dir() and any(staged.glob("*/config.pbtxt"))):
                    self._send(400, {"error": f"failed to load '{req['model_name']}': no repository"})
                    return
                loaded.add(req["model_name"])
                self._send(200, {})
            elif self.path.startswith("/models/") and self.path.endswith("/invoke"):
                name = self.path.split("/")[2]
                if name not in loaded:
                    self._send(404, {"error": f"model '{name}' is not loaded"})
                    return
                self._send(200, {"model": name, "bytes": len(body)})
            else:
                self._send(404, {})

        def log_message(self, *args: object) -> None:
            pass

    ThreadingHTTPServer(("127.0.0.1", port), Handler).serve_forever()


if __name__ == "__main__":
    _port, _host, _target, _exits, _env = sys.argv[1:]
    if _exits == "1":
        sys.exit(1)
    serve_fake_container(int(_port), _host, _target, dict(e.split("=", 1) for e in json.loads(_env)))
