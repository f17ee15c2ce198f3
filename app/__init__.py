"""App stage: retrieve passages, answer with citations, and serve the CLI and web UI."""
