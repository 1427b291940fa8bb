"""retained_heap: applies glibc's settings where it can, and leaves results unchanged."""

import sys

import pytest
import torch

from graphpriv.nn.heap import retained_heap


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc's mallopt")
def test_retained_heap_applies_on_linux_and_keeps_results():
    torch.manual_seed(0)
    a = torch.randn(2000, 3000)  # 24 MB blocks: served by mmap outside the context
    outside = (a @ a.T).sum()
    with retained_heap() as applied:
        inside = (a @ a.T).sum()
        blocks = [torch.randn(2000, 3000) for _ in range(3)]  # allocated and freed inside
        del blocks
    assert applied is True
    assert torch.equal(outside, inside)
