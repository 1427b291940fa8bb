"""Synthetic graph generation: PrivDPR (deep PageRank, node-level DP) and the edge-level DP mechanisms of
TmF (``top_m_filter``), DP-1K (``degree_sequence``) and PrivGraph (``privgraph``); their estimators live in
``graphpriv.methods``."""
