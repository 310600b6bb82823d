"""One moto server for the tests that talk to S3 / SSM through boto3 (``moto.server.ThreadedMotoServer``).

moto's backends are process-wide: ``reset=True`` empties them at the start, for a module that must not see
what an earlier module's server left behind.
"""

from __future__ import annotations

import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

#: Credentials and region every client of the local moto server uses.
CLIENT_KW = {"region_name": "us-east-1", "aws_access_key_id": "x", "aws_secret_access_key": "x"}


@contextmanager
def moto_server(*, host: str = "127.0.0.1", reset: bool = False) -> Iterator[str]:
    """A moto server on 127.0.0.1 and a free port, stopped on exit; yields its URL with ``host`` as the host
    (``localhost`` where an S3 client would read the ``127`` of 127.0.0.1 as a bucket name)."""
    from moto.server import ThreadedMotoServer

    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    _, port = server.get_host_and_port()
    if reset:
        urllib.request.urlopen(
            urllib.request.Request(f"http://127.0.0.1:{port}/moto-api/reset", method="POST")
        )
    try:
        yield f"http://{host}:{port}"
    finally:
        server.stop()


def client(service: str, url: str, **kw: Any) -> Any:
    """A boto3 client of ``service`` on the moto server at ``url``."""
    import boto3

    return boto3.client(service, endpoint_url=url, **CLIENT_KW, **kw)
