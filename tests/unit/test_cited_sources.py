"""No shipped file cites a document the repository does not ship (the project's working notes): a fact
cites its primary source instead (a URL or a document's name, and the date it was read), as the
vendored tables of ``cdk_triton/config/data`` do."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
#: the working notes that are not part of the repository
UNSHIPPED = tuple(f"{stem}.md" for stem in ("CONTRACT", "LOCAL_TRITON", "STYLE", "TOOLCHAIN"))
#: what the repository ships or runs (README.md and docs/ have their own owner: add them once clean)
SHIPPED = ("cdk_triton", "tests", "bench", "lambda", "build")
TEXT = {".py", ".json", ".md", ".yaml", ".yml", ".txt", ".toml", ".cfg", ".pbtxt", ".sh", ".in", ""}


def citations(text: str) -> list[str]:
    """The unshipped documents ``text`` names."""
    return [name for name in UNSHIPPED if name in text]


def test_the_scan_sees_a_citation() -> None:
    assert citations("facts from " + UNSHIPPED[0] + " section 4") == [UNSHIPPED[0]]
    assert citations("CONTRACT_PINS = {...}") == []


def test_no_shipped_file_cites_an_unshipped_document() -> None:
    files = [p for d in SHIPPED for p in sorted((ROOT / d).rglob("*")) if p.is_file()]
    files += [p for p in ROOT.iterdir() if p.is_file() and p.suffix in {".py", ".toml", ".in", ".json"}]
    found = [
        f"{p.relative_to(ROOT)}: {', '.join(names)}"
        for p in files
        if p.suffix in TEXT and p != Path(__file__).resolve() and "__pycache__" not in p.parts
        for names in [citations(p.read_text(errors="replace"))]
        if names
    ]
    assert not found, f"cite the primary source (URL or document name, date read) instead: {found}"
