"""The one exception type the state store raises for problems a user can act on."""

from __future__ import annotations


class StateError(Exception):
    """A user-facing state.db problem: unknown session, ambiguous id prefix,
    a database written by a newer Herald, a database that stayed locked."""
