"""Run the fake LLM server in the foreground: ``python -m herald.testing.fake_llm``.

The first stdout line is the server URL; it runs until SIGTERM or SIGINT.
"""

from __future__ import annotations

import argparse
import signal
import sys
import threading
from types import FrameType

from herald.testing.fake_llm.loader import ScriptError, load_script
from herald.testing.fake_llm.script import Reply
from herald.testing.fake_llm.server import FakeLLMServer


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m herald.testing.fake_llm",
        description="Scripted fake LLM server (OpenAI chat-completions and Anthropic messages).",
    )
    parser.add_argument("--host", default="127.0.0.1", help="address to bind (default 127.0.0.1)")
    parser.add_argument("--port", type=int, default=0, help="port to bind (default: OS picks)")
    parser.add_argument("--script", help="JSON or YAML file: a list of replies and faults")
    parser.add_argument("--default-text", help="text answered once the script is used up")
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        items = load_script(args.script) if args.script else []
    except (OSError, ScriptError) as exc:
        print(f"fake_llm: cannot load script: {exc}", file=sys.stderr)
        return 2
    server = FakeLLMServer(args.host, args.port)
    if args.default_text is not None:
        server.default_reply = Reply.text(args.default_text)
    server.enqueue(*items)

    stopping = threading.Event()

    def request_stop(signum: int, frame: FrameType | None) -> None:
        stopping.set()

    signal.signal(signal.SIGTERM, request_stop)
    signal.signal(signal.SIGINT, request_stop)
    try:
        server.start()
    except OSError as exc:
        print(f"fake_llm: cannot listen on {args.host}:{args.port}: {exc}", file=sys.stderr)
        return 1
    try:
        print(server.url, flush=True)
        while not stopping.wait(0.2):
            pass
    finally:
        server.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
