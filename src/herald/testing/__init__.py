"""Test support: the fake LLM server and helpers shared by tests and benchmarks."""
