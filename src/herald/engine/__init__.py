"""Turn engine (L4): one turn — prologue, iterations, retries, tool rounds, finalize."""
