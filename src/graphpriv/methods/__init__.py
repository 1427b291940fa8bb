"""One estimator per system and baseline (``methods.estimator.Estimator``: hyperparameters in the
constructor, ``fit`` returning ``self``, fitted ``*_`` attributes, ``privacy_report_``, ``save`` /
``load``), beside the pydantic config that validates its hyperparameters. The task protocols that
split, fit and measure them live in :mod:`graphpriv.evaluation`."""
