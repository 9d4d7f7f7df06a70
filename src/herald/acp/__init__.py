"""ACP (L6): `herald acp` speaks the Agent Client Protocol over stdio, so editors that
support it (Zed and others) can run Herald as their agent."""

from herald.acp.agent import HeraldAcpAgent, prompt_text, run_acp, stop_reason

__all__ = ["HeraldAcpAgent", "prompt_text", "run_acp", "stop_reason"]
