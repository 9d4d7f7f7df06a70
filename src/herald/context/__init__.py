"""Context (L3): the frozen system prompt, compression, token accounting, cache plan."""
