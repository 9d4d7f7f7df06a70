"""One package a chat platform: its adapter, event parsing, delivery, formatting and
config (DESIGN: "one platform, one package")."""
