"""Model clients (openai SDK), names, limits, cache, usage and cost; a stub server."""
