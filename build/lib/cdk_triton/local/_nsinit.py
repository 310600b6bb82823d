"""The first process inside the server's private namespaces (run as ``python -m cdk_triton.local._nsinit CFG``).

It brings up loopback, stages ``/opt/ml/models`` (a bind mount visible only in this mount
namespace), forwards a path-based Unix socket (mode 0600) to Triton's SageMaker port on 127.0.0.1
(``os.splice`` in a thread per direction: the bytes never enter Python), starts ``tritonserver``
and stops it on SIGTERM. Without namespaces (fallback) it does the same minus
loopback and mounts. Standard library only.
"""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import json
import os
import signal
import socket
import struct
import subprocess
import sys
import threading
from pathlib import Path


def loopback_up() -> None:
    """``ip link set lo up`` without needing the ip binary (SIOCGIFFLAGS / SIOCSIFFLAGS)."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        ifreq = struct.pack("16sH14x", b"lo", 0)
        flags = struct.unpack("16sH14x", fcntl.ioctl(s.fileno(), 0x8913, ifreq))[1]
        fcntl.ioctl(s.fileno(), 0x8914, struct.pack("16sH14x", b"lo", flags | 0x1))


def _mount(*args: str) -> None:
    subprocess.run(["mount", *args], check=True, capture_output=True)


def bind_at(src: str, dst: str, stash: str) -> None:
    """Bind ``src`` at ``dst`` in this mount namespace, creating ``dst`` on a tmpfs when it is missing.

    When ``dst`` does not exist, its deepest existing ancestor (e.g. ``/opt``) is covered by a tmpfs
    that re-exposes the ancestor's entries through bind mounts, so nothing is written to the host.
    """
    if not os.path.isdir(dst):
        anc = dst
        while not os.path.exists(anc):
            anc = os.path.dirname(anc)
        if anc in ("/", ""):
            raise SystemExit(f"cannot stage {dst}: its only existing ancestor is /")
        os.makedirs(stash, exist_ok=True)
        _mount("--bind", anc, stash)
        _mount("-t", "tmpfs", "-o", "mode=0755", "tmpfs", anc)
        for entry in os.listdir(stash):
            s, d = os.path.join(stash, entry), os.path.join(anc, entry)
            if os.path.islink(s):
                os.symlink(os.readlink(s), d)
                continue
            if os.path.isdir(s):
                os.mkdir(d)
            else:
                Path(d).touch()
            _mount("--rbind", s, d)
        os.makedirs(dst, exist_ok=True)
    _mount("--bind", src, dst)


def _pump(src: socket.socket, dst: socket.socket) -> None:
    """Move bytes from ``src`` to ``dst`` until EOF, in the kernel (splice through a pipe)."""
    r, w = os.pipe()
    try:
        while n := os.splice(src.fileno(), w, 1 << 20):
            while n:
                n -= os.splice(r, dst.fileno(), n)
    except OSError:
        pass
    finally:
        os.close(r)
        os.close(w)
        with contextlib.suppress(OSError):
            dst.shutdown(socket.SHUT_WR)


def _bridge(client: socket.socket, port: int) -> None:
    """One connection from the host's Unix socket to Triton's TCP port: a thread per direction."""
    try:
        upstream = socket.create_connection(("127.0.0.1", port))
    except OSError:
        client.close()
        return
    upstream.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    back = threading.Thread(target=_pump, args=(upstream, client), daemon=True)
    back.start()
    _pump(client, upstream)
    back.join()
    client.close()
    upstream.close()


def _accept(listener: socket.socket, port: int) -> None:
    while True:
        try:
            client, _ = listener.accept()
        except OSError:  # closed: stopping
            return
        threading.Thread(target=_bridge, args=(client, port), daemon=True).start()


async def _serve(cfg: dict, proc: subprocess.Popen) -> int:
    port = int(cfg["port"])
    sock_path = cfg["socket"]
    with contextlib.suppress(FileNotFoundError):
        os.unlink(sock_path)
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    umask = os.umask(0o177)  # the socket is born 0600: only this user reaches the server
    try:
        listener.bind(sock_path)
    finally:
        os.umask(umask)
    listener.listen(512)
    threading.Thread(target=_accept, args=(listener, port), daemon=True).start()
    loop = asyncio.get_running_loop()
    stopping = asyncio.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stopping.set)
    waiter = asyncio.ensure_future(asyncio.to_thread(proc.wait))
    stopper = asyncio.ensure_future(stopping.wait())
    await asyncio.wait({waiter, stopper}, return_when=asyncio.FIRST_COMPLETED)
    if not waiter.done():
        proc.terminate()
        try:
            await asyncio.wait_for(asyncio.shield(waiter), timeout=float(cfg.get("exit_timeout", 5)) + 3)
        except TimeoutError:
            proc.kill()
            await waiter
    listener.close()
    with contextlib.suppress(FileNotFoundError):
        os.unlink(sock_path)
    return int(proc.returncode or 0)


def main(argv: list[str]) -> int:
    cfg = json.loads(Path(argv[0]).read_text())
    if cfg.get("namespace"):
        loopback_up()
        for src, dst in cfg.get("mounts", []):
            bind_at(src, dst, cfg["stash"])
    log = open(cfg["log"], "ab", buffering=0)  # noqa: SIM115 - lives as long as the server
    proc = subprocess.Popen(
        cfg["argv"],
        env=cfg["env"],
        stdout=log,
        stderr=subprocess.STDOUT,
        stdin=subprocess.DEVNULL,
        cwd=cfg.get("cwd"),
    )
    return asyncio.run(_serve(cfg, proc))


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
