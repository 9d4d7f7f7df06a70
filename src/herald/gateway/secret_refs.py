"""`${VAR}` references in gateway config fields (bot tokens, API keys, webhook
secrets), resolved through the one secrets accessor (DESIGN invariant 10). The
resolver lives in `herald.config.secrets` so the entrance-secret rule (L0) uses the
same one; this module keeps the gateway's name for it."""

from __future__ import annotations

from herald.config.secrets import SECRET_REF_RE, resolve_secret_ref

__all__ = ["SECRET_REF_RE", "resolve_secret_ref"]
