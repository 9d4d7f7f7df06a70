"""Importers (L6): move into Herald from another agent's home. One package per source
(`herald.importers.hermes`); each treats the source home as untrusted input."""
