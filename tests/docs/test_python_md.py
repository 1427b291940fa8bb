"""Every Python code block of docs/python.md and README.md runs, in order, in one namespace per file."""

import re
from pathlib import Path

import pytest

from tests.conftest import needs_data

ROOT = Path(__file__).resolve().parents[2]
BLOCK = re.compile(r"^```python\n(.*?)^```", re.DOTALL | re.MULTILINE)
pytestmark = pytest.mark.usefixtures("one_thread")


def blocks(name: str) -> list[str]:
    """The ```python blocks of a Markdown file, in order."""
    return BLOCK.findall((ROOT / name).read_text())


@needs_data
@pytest.mark.parametrize("name", ["docs/python.md", "README.md"])
def test_code_blocks_run(name, tmp_path, monkeypatch):
    code = blocks(name)
    if name == "docs/python.md":
        assert len(code) >= 5
    monkeypatch.chdir(tmp_path)
    namespace: dict = {"__name__": f"docs_{Path(name).stem}"}
    for i, block in enumerate(code):
        exec(compile(block, f"{name}[block {i}]", "exec"), namespace)  # noqa: S102 - the docs' own code
