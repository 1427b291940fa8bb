"""One module per system and baseline; each exposes a pydantic ``Config`` and ``run(config, data)``."""
