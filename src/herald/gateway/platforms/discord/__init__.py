"""Discord entrance (discord.py)."""
