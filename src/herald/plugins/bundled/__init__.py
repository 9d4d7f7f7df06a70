"""Plugins shipped with Herald (each a directory with plugin.yaml); loaded unless disabled."""
