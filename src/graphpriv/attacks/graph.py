"""The object every attack and every utility task takes: a published graph.

:class:`PublishedGraph` lives in :mod:`graphpriv.data.release`; this module re-exports it so that
``from graphpriv.attacks.graph import PublishedGraph`` keeps working.
"""

from __future__ import annotations

from graphpriv.data.release import PublishedGraph

__all__ = ["PublishedGraph"]
