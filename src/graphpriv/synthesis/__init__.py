"""Synthetic graph generation (PrivDPR)."""
