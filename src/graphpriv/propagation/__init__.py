"""Graph propagation: approximate personalized PageRank (DPAR)."""
