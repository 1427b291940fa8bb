"""graphpriv: privacy-preserving machine learning on graphs.

One library and command line for training link predictors and node classifiers with a stated
differential-privacy guarantee, publishing or synthesizing graphs, attacking what was released,
and comparing methods under one privacy accountant. See ``graphpriv --help``.
"""

__version__ = "0.1.0"
