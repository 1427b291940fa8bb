"""Graph propagation: approximate personalized PageRank (DPAR), aggregation perturbation (GAP)."""
