"""One package per chat platform: adapter, events, delivery, formatting and config."""
