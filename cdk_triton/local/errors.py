"""Errors of the local endpoint."""

from __future__ import annotations

from cdk_triton.errors import CdkTritonError


class LocalServerError(CdkTritonError, RuntimeError):
    """The local Triton server could not start, answer or stop. ``log_path`` names the server log."""

    def __init__(self, message: str, *, code: str = "LocalServerFailed", log_path: str | None = None):
        self.code = code
        self.log_path = log_path
        text = f"{message} [{code}]"
        if log_path:
            text += f" (server log: {log_path})"
        super().__init__(text)
