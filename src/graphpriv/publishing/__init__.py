"""Graph publishing: perturbation baselines (random, DICE); PPGSL joins here."""

from graphpriv.publishing.perturbation import dice, random_perturb

__all__ = ["dice", "random_perturb"]
