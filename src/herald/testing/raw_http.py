"""A raw HTTP/1.1 client for hostile-input tests and benchmarks: it sends a request head,
then body pieces only while the server has not answered, so a test can tell whether a
server refused a body before reading it (an ordinary client sends the whole body
first). Loopback only."""

from __future__ import annotations

import select
import socket
from collections.abc import Iterator

MIB = 1024 * 1024


def send_until_answered(
    port: int, head: str, body: Iterator[bytes], *, host: str = "127.0.0.1"
) -> tuple[bytes, int]:
    """Send `head`, then pieces of `body` until the server answers or hangs up. Returns
    the start of the answer and how many body bytes were sent by then."""
    sock = socket.create_connection((host, port), timeout=30)
    sent = 0
    try:
        sock.sendall(head.encode("latin-1"))
        for piece in body:
            readable, _, _ = select.select([sock], [], [], 0)
            if readable:
                break  # the server answered (or closed): stop feeding it
            try:
                sock.sendall(piece)
            except (BrokenPipeError, ConnectionResetError):
                break
            sent += len(piece)
        return _read_answer(sock), sent
    finally:
        sock.close()


def _read_answer(sock: socket.socket) -> bytes:
    answer = b""
    while b"\r\n\r\n" not in answer:
        try:
            piece = sock.recv(65536)
        except (ConnectionResetError, TimeoutError):
            break
        if not piece:
            break
        answer += piece
    try:
        sock.settimeout(2)
        answer += sock.recv(65536)  # the body of a short error answer
    except (ConnectionResetError, TimeoutError, OSError):
        pass
    return answer


def chunked(total: int, size: int = 64 * 1024) -> Iterator[bytes]:
    """`total` bytes as HTTP chunks, generated as they are sent (never held in memory)."""
    piece = b"a" * size
    for _ in range(total // size):
        yield f"{size:x}\r\n".encode() + piece + b"\r\n"


def status_of(answer: bytes) -> int:
    parts = answer.split(b" ", 2)
    return int(parts[1]) if len(parts) > 1 and parts[1].isdigit() else 0


__all__ = ["MIB", "chunked", "send_until_answered", "status_of"]
