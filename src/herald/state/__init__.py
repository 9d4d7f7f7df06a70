"""State (L5): state.db — sessions, messages (FTS5), system prompts, usage, lineage."""
