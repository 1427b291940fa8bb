"""Graph statistics and evaluation metrics."""
