"""Method registry, runner and results store (imports the library; never imported by it)."""
