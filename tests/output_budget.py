"""Counting the warnings a person reads in a command's output (issue 42's budgets), as the user sees them.

``cdk-triton build`` prints each warning through rich on stderr (``warning: ...``, wrapped at the console's
width: 80 columns when the output is not a terminal, as in a log or a CI job); the CDK CLI prints each
annotation as a block (its location line, ``WARNING <message>``, the construct path and the acknowledge
line). Both measures count every character of those blocks, newlines included.
"""

from __future__ import annotations

import re
import textwrap
from dataclasses import dataclass

#: the first words of what a build prints besides warnings: a wrapped warning's next line starts with none
_RECORD = re.compile(
    r"^(warning:|exported |failed |export |package |skipped |cdk-triton build|manifest:|the bundled|==|\[|\s|[┏┃┡│└])"
)


@dataclass(frozen=True)
class Measured:
    """Warnings counted in one output: how many, their lines and characters."""

    warnings: int
    lines: int
    chars: int

    def __add__(self, other: Measured) -> Measured:
        return Measured(self.warnings + other.warnings, self.lines + other.lines, self.chars + other.chars)


def build_warnings(text: str) -> Measured:
    """The ``warning:`` blocks of a build's output (each with its wrapped continuation lines)."""
    blocks: list[list[str]] = []
    current: list[str] | None = None
    for line in text.splitlines():
        if line.startswith("warning:"):
            current = [line]
            blocks.append(current)
        elif current is not None and line.strip() and not _RECORD.match(line):
            current.append(line)
        else:
            current = None
    return Measured(len(blocks), sum(map(len, blocks)), sum(len(x) + 1 for b in blocks for x in b))


def synth_warnings(text: str) -> Measured:
    """The annotation blocks of ``cdk synth`` output that hold a ``WARNING`` line."""
    blocks = [b for b in re.split(r"\n\s*\n", text) if re.search(r"^WARNING ", b, re.MULTILINE)]
    return Measured(
        len(blocks), sum(b.strip("\n").count("\n") + 1 for b in blocks), sum(len(b) + 1 for b in blocks)
    )


def logged_warning(text: str, width: int = 80) -> Measured:
    """A warning printed as one log line, counted as the terminal wraps it."""
    return Measured(1, len(textwrap.wrap(text, width)), len(text) + 1)
