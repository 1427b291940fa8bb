"""Synthetic graph generation: PrivDPR (deep PageRank, node-level DP) and the edge-level DP mechanisms of
TmF (``top_m_filter``) and DP-1K (``degree_sequence``); their estimators live in ``graphpriv.methods``."""
