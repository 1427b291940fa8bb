"""Method registry, runner and results store (imports the library; never imported by it).

:data:`DEFAULT_STORE` is the one default results store of every front door (``graphpriv run``,
``sweep``, ``reproduce``, ``report``, ``plot``); it lives here so that the command line names it
without importing the store.
"""

from pathlib import Path

#: The results store a command uses unless ``--store`` names another (relative to the working folder).
DEFAULT_STORE = Path("runs") / "results.sqlite"
