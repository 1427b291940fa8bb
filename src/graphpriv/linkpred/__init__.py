"""Link-prediction building blocks: degree projection, subgraph extraction, DRNL labels."""
