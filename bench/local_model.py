"""Benchmark the local provider (llama.cpp in-process) on this machine.

Prints model load time, prompt-processing and generation speed (tokens/s,
median of a few runs with a fixed prompt), a forced tool call end to end, and
peak RSS. Every call goes through `LocalTransport`, the path the agent uses.

    /work/venv/bin/python bench/local_model.py [--runs 3] [--threads N]
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import sys
import time
from typing import Any

from herald.providers.base import CallSettings, StreamDelta
from herald.providers.local import LocalTransport, local_model_status

PROMPT_PARAGRAPH = (
    "The lighthouse keeper wrote in her log every evening: the colour of the sea, the "
    "ships that passed, the birds that rested on the rail, and the weather coming in "
    "from the west. "
)
LONG_PROMPT = "Summarise this log in one sentence.\n\n" + PROMPT_PARAGRAPH * 12
GENERATION_PROMPT = "Count from one to one hundred in words, separated by commas."
WEATHER_TOOL = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "Get the current weather for a city.",
        "parameters": {
            "type": "object",
            "properties": {"city": {"type": "string"}},
            "required": ["city"],
        },
    },
}


def peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB on Linux


def timed_call(
    transport: LocalTransport, messages: list[dict[str, Any]], settings: CallSettings,
    tools: list[dict[str, Any]] | None = None, *, fresh: bool = True,
) -> tuple[Any, float, list[float]]:
    """One call; returns (response, seconds, delta timestamps relative to start)."""
    if fresh:  # forget the KV cache so the prompt is evaluated in full
        transport.loaded_model().llama.reset()
    request = transport.build_request(messages, tools, settings)
    stamps: list[float] = []
    start = time.perf_counter()

    def on_delta(_delta: StreamDelta) -> None:
        stamps.append(time.perf_counter() - start)

    response = transport.call(request, stream=True, on_delta=on_delta)
    return response, time.perf_counter() - start, stamps


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--threads", type=int, default=None,
                        help="threads (default: all usable cores, at most 8)")
    parser.add_argument("--max-tokens", type=int, default=96)
    parser.add_argument("--model-path", default=None, help="a GGUF file (default: bundled)")
    args = parser.parse_args()

    available, detail = local_model_status(args.model_path)
    if not available:
        print(f"local model unavailable: {detail}", file=sys.stderr)
        return 1
    print(f"model: {detail}")
    print(f"cpus: {os.cpu_count()}  python: {sys.version.split()[0]}")
    rss_before = peak_rss_mb()

    started = time.perf_counter()
    import llama_cpp

    import_seconds = time.perf_counter() - started
    transport = LocalTransport(timeout=600.0, model_path=args.model_path, n_threads=args.threads)
    started = time.perf_counter()
    loaded = transport.loaded_model()
    load_wall = time.perf_counter() - started
    llama = loaded.llama
    print(f"llama-cpp-python {llama_cpp.__version__}; n_ctx {loaded.n_ctx}; threads "
          f"{llama.n_threads} generation / {llama.n_threads_batch} batch; weight repacking "
          f"{'off (AMX advertised)' if loaded.extra_buffers_disabled else 'llama.cpp default'}")
    print(f"import llama_cpp           {import_seconds * 1000:8.0f} ms")
    print(f"model load                 {load_wall * 1000:8.0f} ms "
          f"(Llama() {loaded.load_seconds * 1000:.0f} ms)")

    prompt_rates, prompt_tokens = [], 0
    for _ in range(args.runs):
        response, seconds, _ = timed_call(
            transport, [{"role": "user", "content": LONG_PROMPT}],
            CallSettings(model="bench", max_tokens=1, temperature=0.0),
        )
        prompt_tokens = response.usage.prompt_tokens
        prompt_rates.append(prompt_tokens / seconds)
    print(f"prompt processing          {statistics.median(prompt_rates):8.0f} tok/s "
          f"({prompt_tokens}-token prompt, median of {args.runs})")

    gen_rates, gen_tokens = [], 0
    for _ in range(args.runs):
        response, _seconds, stamps = timed_call(
            transport, [{"role": "user", "content": GENERATION_PROMPT}],
            CallSettings(model="bench", max_tokens=args.max_tokens, temperature=0.0),
        )
        gen_tokens = response.usage.completion_tokens
        if len(stamps) >= 2 and gen_tokens > 1:
            gen_rates.append((gen_tokens - 1) / (stamps[-1] - stamps[0]))
    if gen_rates:
        print(f"generation                 {statistics.median(gen_rates):8.1f} tok/s "
              f"({gen_tokens} tokens, median of {len(gen_rates)})")

    messages = [{"role": "user", "content": LONG_PROMPT}]
    settings = CallSettings(model="bench", max_tokens=1, temperature=0.0)
    _, cold, _ = timed_call(transport, messages, settings, fresh=True)
    _, warm, _ = timed_call(transport, messages, settings, fresh=False)
    print(f"repeated prompt (KV reuse) {warm * 1000:8.0f} ms vs {cold * 1000:.0f} ms cold "
          f"(ratio {cold / warm:.0f}x; a session's stable system prompt gets this)")

    tool_times, tool_tokens = [], 0
    forced = {"tool_choice": {"type": "function", "function": {"name": "get_weather"}}}
    for _ in range(args.runs):
        response, seconds, _ = timed_call(
            transport, [{"role": "user", "content": "What is the weather in Paris?"}],
            CallSettings(model="bench", max_tokens=48, extra=forced), [WEATHER_TOOL],
        )
        assert response.tool_calls, "forced tool call produced no tool call"
        tool_tokens = response.usage.completion_tokens
        tool_times.append(seconds)
    tool_seconds = statistics.median(tool_times)
    print(f"forced tool call (grammar) {tool_seconds * 1000:8.0f} ms end to end "
          f"({tool_tokens} tokens, {tool_tokens / tool_seconds:.1f} tok/s incl. prompt)")

    peak = peak_rss_mb()
    print(f"peak RSS                   {peak:8.0f} MB (before loading: {rss_before:.0f} MB, "
          f"model + runtime: {peak - rss_before:.0f} MB)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
