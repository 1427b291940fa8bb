"""Task protocols: split -> fit an estimator -> metrics, one module per task (link, node,
publishing; ranking and synthesis to come). The registry maps a method id to its estimator, preset
and protocol; ``graphpriv run``, sweeps, tables and audits run a cell through these functions."""
