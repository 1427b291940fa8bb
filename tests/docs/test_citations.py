"""Docs and docstrings cite papers by title and section, never paths outside the repository.

Users see neither the project's internal specs and paper copies (``specs/...``, ``papers/...``,
``../shared/...``) nor its issue tracker, so a citation of either means nothing to them: cite the
paper by title and section, state the project's decision in words, or link a page under docs/.
"""

import re
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
#: What is scanned: the package, the docs, the README, benchmarks, scripts and sweep files.
SCANNED = ("src", "docs", "README.md", "benchmarks", "scripts", "sweeps")
#: A path outside the repository, or an issue number ("issue 5", "Issue #7", "issues 5").
FORBIDDEN = re.compile(r"specs/|papers/|\.\./shared|\b[Ii]ssues?[ -]#?\d+\b")
SKIPPED_DIRS = {"__pycache__", ".ipynb_checkpoints"}


def scanned_files() -> list[Path]:
    """The tracked and untracked-but-not-ignored files under SCANNED (git), else a plain walk."""
    try:
        out = subprocess.run(["git", "ls-files", "--cached", "--others", "--exclude-standard", "-z", "--", *SCANNED],
                             cwd=ROOT, capture_output=True, check=True).stdout
        files = [ROOT / name for name in out.decode().split("\0") if name]
    except (OSError, subprocess.CalledProcessError):
        files = []
        for name in SCANNED:
            path = ROOT / name
            files += [path] if path.is_file() else sorted(path.rglob("*")) if path.is_dir() else []
    this = Path(__file__).resolve()
    return [f for f in files if f.is_file() and f.resolve() != this
            and not any(part in SKIPPED_DIRS or part.endswith(".egg-info") for part in f.parts)]


def test_scan_covers_the_docs_and_the_package():
    files = {f.relative_to(ROOT).as_posix() for f in scanned_files()}
    assert "README.md" in files and "docs/reproduction.md" in files
    assert "src/graphpriv/__init__.py" in files


def test_forbidden_pattern():
    for text in ("see specs/dpar.md", "papers/000", "../shared/datasets", "issue 5", "Issue #12", "issues 5",
                 "benchmarks.md#ppgsl-at-scale-issue-5"):
        assert FORBIDDEN.search(text), text
    for text in ("the spec's decision", "tissue 5", "an issue with the data", "Sec. V-A.1", "docs/privacy.md"):
        assert not FORBIDDEN.search(text), text


def test_no_citation_of_paths_outside_the_repository_or_of_issue_numbers():
    hits = []
    for path in scanned_files():
        data = path.read_bytes()
        if b"\0" in data:  # binary (images)
            continue
        for number, line in enumerate(data.decode("utf-8", errors="replace").splitlines(), 1):
            if FORBIDDEN.search(line):
                hits.append(f"{path.relative_to(ROOT).as_posix()}:{number}: {line.strip()}")
    assert not hits, "cite papers by title and section, decisions in words or docs/*.md:\n" + "\n".join(hits)
