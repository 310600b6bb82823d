"""The README is a front page that stays true: at most 300 lines, the two commands (CI runs its test command),
no release notes (CHANGELOG.md has them), and every link into the repository or the site resolves."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"
MAX_LINES = 300


def _two_commands() -> list[str]:
    text = README.read_text()
    section = text[text.index("\n## The two commands\n") :]
    block = section[section.index("```bash\n") + 8 : section.index("```", section.index("```bash\n") + 8)]
    return [ln.split("#", 1)[0].strip() for ln in block.splitlines() if ln.split("#", 1)[0].strip()]


def test_readme_is_a_front_page() -> None:
    text = README.read_text()
    assert len(text.splitlines()) <= MAX_LINES, (
        f"README.md is {len(text.splitlines())} lines (at most {MAX_LINES})"
    )
    headings = re.findall(r"^## (.+)$", text, re.M)
    for gone in ("Use cases", "Known limits", "Layout", "Performance", "Reliability", "Security"):
        assert gone not in headings, f"'{gone}' belongs on the site (docs/), not the front page"
    assert "What moved in this release" not in text, "release notes are CHANGELOG.md's"


def test_readme_names_the_two_commands_and_ci_runs_the_test_command() -> None:
    commands = _two_commands()
    assert commands == ["make demo", "make test"], commands
    ci = [ln.strip() for ln in (ROOT / ".ci" / "run").read_text().splitlines()]
    assert "make test" in ci, "CI must run exactly the README's test command"


def test_every_relative_link_of_the_readme_resolves() -> None:
    text = README.read_text()
    missing = []
    for target in re.findall(r"\]\(([^)\s]+)\)", text):
        if target.startswith(("http://", "https://", "mailto:")):
            continue
        path, _, anchor = target.partition("#")
        if not path:
            slugs = {_slug(h) for h in re.findall(r"^#+ (.+)$", text, re.M)}
            if anchor not in slugs:
                missing.append(target)
            continue
        file = ROOT / path
        if not file.exists():
            missing.append(target)
        elif anchor and file.suffix == ".md":
            slugs = {_slug(h) for h in re.findall(r"^#+ (.+)$", file.read_text(), re.M)}
            if anchor not in slugs:
                missing.append(target)
    assert not missing, f"README links that do not resolve: {missing}"


def _slug(heading: str) -> str:
    """Python-Markdown's toc slug: lower case, punctuation dropped, spaces to hyphens."""
    heading = re.sub(r"`([^`]*)`", r"\1", heading)
    return re.sub(r"[\s]+", "-", re.sub(r"[^\w\s-]", "", heading).strip().lower())
