"""Errors raised by cdk-triton.

Every error carries a stable ``code`` (CamelCase) so users, tests and docs can refer to it.
``TritonValidationError`` is raised for bad input (props, declarations, options) before anything is
written, uploaded or synthesized; ``BuildError`` for failures while building artifacts.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any


class CdkTritonError(Exception):
    """Base class of every cdk-triton error."""

    code: str = "CdkTritonError"


def _fmt_value(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 120 else text[:117] + "..."


class TritonValidationError(CdkTritonError, ValueError):
    """Bad input: names the prop, the value received, what is allowed, how to fix it, and where.

    The message reads: ``<prop> <value> <problem>; allowed: <allowed>; fix: <fix> [<Code>] at <path>``.
    """

    def __init__(
        self,
        code: str,
        *,
        prop: str,
        value: Any,
        problem: str,
        allowed: str,
        fix: str,
        path: str | None = None,
    ) -> None:
        self.code = code
        self.prop = prop
        self.value = value
        self.problem = problem
        self.allowed = allowed
        self.fix = fix
        self.path = path
        super().__init__(self._render())

    def _render(self) -> str:
        where = f" at {self.path}" if self.path else ""
        return (
            f"{self.prop} {_fmt_value(self.value)} {self.problem}; allowed: {self.allowed}; "
            f"fix: {self.fix} [{self.code}]{where}"
        )

    def at(self, path: str) -> TritonValidationError:
        """Return a copy of this error located at ``path`` (a construct path or a file position)."""
        return TritonValidationError(
            self.code,
            prop=self.prop,
            value=self.value,
            problem=self.problem,
            allowed=self.allowed,
            fix=self.fix,
            path=path,
        )


class TritonValidationErrors(TritonValidationError):
    """Several validation problems found at once (validate eagerly, raise once).

    ``errors`` holds each problem; ``code`` is the first problem's code.
    """

    def __init__(self, errors: list[TritonValidationError]) -> None:
        if not errors:
            raise ValueError("TritonValidationErrors needs at least one error")
        self.errors = list(errors)
        first = self.errors[0]
        super().__init__(
            first.code,
            prop=first.prop,
            value=first.value,
            problem=first.problem,
            allowed=first.allowed,
            fix=first.fix,
            path=first.path,
        )

    def _render(self) -> str:
        if len(getattr(self, "errors", [])) <= 1:
            return super()._render()
        lines = [f"{len(self.errors)} problems:"]
        lines += [f"  - {e}" for e in self.errors]
        return "\n".join(lines)

    @property
    def codes(self) -> list[str]:
        return [e.code for e in self.errors]


def raise_all(errors: list[TritonValidationError]) -> None:
    """Raise nothing for an empty list, the error itself for one, or all of them together."""
    if not errors:
        return
    if len(errors) == 1:
        raise errors[0]
    raise TritonValidationErrors(errors)


def raise_at(scope: Any, errors: Sequence[TritonValidationError]) -> None:
    """:func:`raise_all`, each error without a path located at ``scope.node.path`` (a construct's path,
    read only when there are errors: a jsii call)."""
    if errors:
        path = scope.node.path
        raise_all([e if e.path else e.at(path) for e in errors])


class BuildError(CdkTritonError, RuntimeError):
    """A build step failed. ``log_path`` names the log that explains it, when there is one."""

    def __init__(self, message: str, *, code: str = "BuildFailed", log_path: str | None = None):
        self.code = code
        self.log_path = log_path
        text = f"{message} [{code}]"
        if log_path:
            text += f" (log: {log_path})"
        super().__init__(text)
