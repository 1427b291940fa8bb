"""Neural networks (``nn.Module`` only)."""
