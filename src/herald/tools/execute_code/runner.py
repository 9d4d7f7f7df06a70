"""The program that runs inside the session's environment for one `execute_code` call.

It is never imported by Herald: its source is sent as the first line on the
process's stdin (so it works wherever the environment can start `python3`,
with nothing installed there) and executed with a ``BOOT`` dict holding the
script, the nonce that marks this run's frames and the tools the script may
call. Only the standard library is used.

Channel (the process's own pipes, which only this run holds):

- to Herald: one line per frame on the original stdout, ``\\x1e<nonce> <json>``;
  printed text is ``{"out": text}``, a call is ``{"call": n, "tool": name, "args": {...}}``,
  the end of the run is ``{"done": true, "dropped": chars, "error": traceback|null}``;
- from Herald: one JSON line per call on stdin, ``{"call": n, "ok": bool, "result": str}``.

The script's own prints (stdout and stderr) travel as frames too, up to a limit;
only they (and the traceback of an error) reach the model.
"""

import io
import json
import keyword
import os
import queue
import signal
import sys
import threading
import traceback
import types

BOOT = globals().get("BOOT") or {}  # set by the bootstrap command
_MARK = "\x1e" + str(BOOT.get("nonce", "")) + " "
_LIMIT = int(BOOT.get("max_output_chars", 0))
_replies = queue.Queue()  # lines from Herald, read by _watch_herald
_rpc_out = None  # the original stdout, kept for frames once the run starts
_calls = [0]


class ToolError(RuntimeError):
    """A Herald tool refused or failed the call; the message says why."""


class _Capture(io.TextIOBase):
    """Forwards the first `_LIMIT` characters printed to Herald as they are printed
    (so a script stopped by its timeout still shows how far it got) and counts the rest."""

    def __init__(self):
        self.kept = 0
        self.dropped = 0

    def writable(self):
        return True

    def write(self, text):
        text = str(text)
        room = _LIMIT - self.kept
        if room > 0 and text:
            _send({"out": text[:room]})
            self.kept += min(room, len(text))
        self.dropped += max(0, len(text) - max(room, 0))
        return len(text)


def _send(frame):
    # The leading newline keeps a frame at the start of a line even after a child
    # process printed a partial one into the same pipe.
    _rpc_out.write("\n" + _MARK + json.dumps(frame, ensure_ascii=True) + "\n")
    _rpc_out.flush()


def call(name, **arguments):
    """Call the Herald tool `name` with keyword arguments; returns its result text.
    Raises ToolError when the tool refused or failed (the message says why)."""
    _calls[0] += 1
    number = _calls[0]
    _send({"call": number, "tool": name, "args": arguments})
    line = _replies.get()
    if not line:
        raise SystemExit("herald_tools: Herald closed the channel (the run was stopped)")
    reply = json.loads(line)
    if reply.get("call") != number:
        raise SystemExit("herald_tools: the channel is out of step; stopping")
    if not reply.get("ok"):
        raise ToolError(reply.get("result", ""))
    return reply.get("result", "")


def _watch_herald():
    """Read Herald's replies; when the channel closes (Herald stopped the run, or died,
    even by kill -9) end this script and every process it started."""
    for line in sys.stdin:
        _replies.put(line)
    _replies.put("")
    try:
        os.killpg(os.getpgrp(), signal.SIGKILL)
    except OSError:
        os._exit(137)


def _make_tool(spec):
    name = spec["name"]
    order = list(spec["params"])

    def run(*args, **kwargs):
        if len(args) > len(order):
            raise TypeError(f"{name}() takes at most {len(order)} positional arguments")
        for index, value in enumerate(args):  # no zip(strict=): any Python 3 runs this
            key = order[index]
            if key in kwargs:
                raise TypeError(f"{name}() got two values for {key!r}")
            kwargs[key] = value
        return call(name, **kwargs)

    run.__name__ = name
    run.__doc__ = spec.get("doc") or ""
    return run


def _module():
    module = types.ModuleType("herald_tools", "Herald's tools, callable from this script.")
    module.call = call
    module.ToolError = ToolError
    names = []
    for spec in BOOT["tools"]:
        if spec["name"].isidentifier() and not keyword.iskeyword(spec["name"]):
            setattr(module, spec["name"], _make_tool(spec))
            names.append(spec["name"])
    module.__all__ = names
    return module


def main():
    global _rpc_out
    _rpc_out = os.fdopen(os.dup(1), "w", encoding="utf-8", errors="replace")
    threading.Thread(target=_watch_herald, name="herald-channel", daemon=True).start()
    sys.modules["herald_tools"] = module = _module()
    capture = _Capture()
    sys.stdout = sys.stderr = capture
    error = None
    namespace = {"__name__": "__main__", "herald_tools": module}
    try:
        exec(compile(BOOT["script"], "<script>", "exec"), namespace)
    except SystemExit as exc:
        if exc.code not in (None, 0):
            error = f"SystemExit: {exc.code}"
    except BaseException:
        kind, value, tb = sys.exc_info()
        # Drop this runner's own frames: the model wrote only <script>.
        while tb is not None and tb.tb_frame.f_code.co_filename != "<script>":
            tb = tb.tb_next
        error = "".join(traceback.format_exception(kind, value, tb))
    finally:
        sys.stdout, sys.stderr = sys.__stdout__, sys.__stderr__
    _send({"done": True, "dropped": capture.dropped, "error": error})


if __name__ == "herald_runner":
    main()
