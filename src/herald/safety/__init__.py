"""Safety (L0): command approval, secret redaction and injection scanning."""
