"""Tools (L2): the registry, toolsets and the tools the model can call."""
