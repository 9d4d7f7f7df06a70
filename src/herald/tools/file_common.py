"""What the file tools share: path resolution through the session's
environment, text/binary detection and directory listings for error messages.

Everything touches files only through `ctx.environment`, so the same tools work
on the local machine and over ssh.
"""

from __future__ import annotations

import difflib
import mimetypes
import shlex
from dataclasses import dataclass
from typing import TYPE_CHECKING

from herald.tools.registry import ToolArgumentError

if TYPE_CHECKING:
    from herald.environments import Environment, FileInfo
    from herald.tools.registry import ToolContext

# Files larger than this are not loaded whole by read_file/patch.
MAX_TEXT_FILE_BYTES = 20 * 1024 * 1024
_SNIFF_BYTES = 8192
_LISTING_LIMIT = 40

# Leading bytes of common binary formats, for a message that says what the file is.
_MAGIC: tuple[tuple[bytes, str], ...] = (
    (b"\x89PNG\r\n\x1a\n", "PNG image"),
    (b"\xff\xd8\xff", "JPEG image"),
    (b"GIF87a", "GIF image"),
    (b"GIF89a", "GIF image"),
    (b"%PDF-", "PDF document"),
    (b"PK\x03\x04", "ZIP archive (or docx/xlsx/jar/wheel)"),
    (b"\x1f\x8b", "gzip archive"),
    (b"BZh", "bzip2 archive"),
    (b"\xfd7zXZ\x00", "xz archive"),
    (b"7z\xbc\xaf\x27\x1c", "7-Zip archive"),
    (b"\x28\xb5\x2f\xfd", "zstd archive"),
    (b"\x7fELF", "ELF executable or library"),
    (b"\xcf\xfa\xed\xfe", "Mach-O binary"),
    (b"MZ", "Windows executable"),
    (b"SQLite format 3\x00", "SQLite database"),
    (b"\x00asm", "WebAssembly module"),
    (b"\xca\xfe\xba\xbe", "Java class file"),
    (b"ID3", "MP3 audio"),
    (b"OggS", "Ogg media"),
    (b"fLaC", "FLAC audio"),
    (b"\x1aE\xdf\xa3", "Matroska/WebM video"),
    (b"%!PS", "PostScript document"),
    (b"\xd0\xcf\x11\xe0", "legacy Office document"),
)


@dataclass(frozen=True)
class TextFile:
    """A text file as read through the environment."""

    path: str  # absolute, as the environment sees it
    text: str
    size: int
    truncated: bool  # only the first MAX_TEXT_FILE_BYTES were read
    bom: bool = False  # the file starts with a UTF-8 byte-order mark (dropped from `text`)


def require_environment(ctx: ToolContext) -> Environment:
    if ctx.environment is None:
        raise ToolArgumentError(
            "no execution environment is attached to this session, so files cannot be "
            "accessed; tell the user the file tools are unavailable here"
        )
    return ctx.environment


def resolve_path(env: Environment, raw: str | None, *, name: str = "path") -> str:
    if raw is None or not raw.strip():
        raise ToolArgumentError(f"{name} must be a non-empty file path")
    if "\x00" in raw:
        raise ToolArgumentError(f"{name} contains a NUL character")
    return env.resolve(raw.strip())


def display_path(env: Environment, path: str) -> str:
    """`path` relative to the environment's working directory when it lies inside it."""
    try:
        base = env.cwd.rstrip("/") + "/"
    except Exception:
        return path
    return path[len(base) :] if path.startswith(base) and len(path) > len(base) else path


def guess_file_type(path: str, head: bytes) -> str | None:
    for magic, label in _MAGIC:
        if head.startswith(magic):
            return label
    if head[:4] == b"RIFF" and head[8:12] in (b"WEBP", b"WAVE", b"AVI "):
        return {b"WEBP": "WebP image", b"WAVE": "WAV audio", b"AVI ": "AVI video"}[head[8:12]]
    if head[4:8] == b"ftyp":
        return "MP4/QuickTime media"
    mime, _ = mimetypes.guess_type(path)
    return mime


def binary_reason(path: str, data: bytes, *, partial: bool = False) -> str | None:
    """Why `data` is not readable text (None when it is)."""
    head = data[:_SNIFF_BYTES]
    if data.startswith((b"\xff\xfe", b"\xfe\xff")):
        return "UTF-16 text, which read_file does not decode"
    kind = guess_file_type(path, head)
    if b"\x00" in head:
        return kind or "binary data (contains NUL bytes)"
    try:
        decode_utf8(data, partial=partial)
    except UnicodeDecodeError:
        return f"{kind} (not valid UTF-8)" if kind else "not valid UTF-8 text"
    return None


def decode_utf8(data: bytes, *, partial: bool = False) -> str:
    """Strict UTF-8 (a BOM is dropped); with `partial`, a multi-byte character cut
    off at the end of the data is dropped instead of failing."""
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        if partial and exc.start >= len(data) - 3:
            return data[: exc.start].decode("utf-8")
        raise


def stat_existing(env: Environment, path: str, shown: str) -> FileInfo:
    """The file's info, or an error that lists what is in the nearest directory."""
    info = env.stat(path)
    if info is not None:
        return info
    parent = path.rsplit("/", 1)[0] or "/"
    parent_info = env.stat(parent)
    if parent_info is None or not parent_info.is_dir:
        raise ToolArgumentError(
            f"{shown} does not exist (nor does its directory {parent}); check the path "
            "or find it with search_files(mode='files')"
        )
    entries = list_directory(env, parent)
    name = path.rsplit("/", 1)[-1]
    close = difflib.get_close_matches(name, [e.rstrip("/") for e in entries], n=3, cutoff=0.5)
    hint = f" Did you mean: {', '.join(close)}?" if close else ""
    listing = _format_listing(entries, parent)
    raise ToolArgumentError(f"{shown} does not exist.{hint} {listing}")


def list_directory(env: Environment, path: str, limit: int = _LISTING_LIMIT) -> list[str]:
    """Up to `limit` entry names (directories end in '/'), or [] when they cannot be listed."""
    command = f"ls -1Ap -- {shlex.quote(path)} 2>/dev/null | head -n {limit + 1}"
    try:
        result = env.execute(command, cwd=None, timeout=10)
    except Exception:
        return []
    if result.exit_code not in (0, None):
        return []
    return [line for line in result.output.splitlines() if line and line not in ("./", "../")]


def _format_listing(entries: list[str], directory: str, limit: int = _LISTING_LIMIT) -> str:
    if not entries:
        return f"{directory} is empty."
    more = " …" if len(entries) > limit else ""
    return f"{directory} contains: {', '.join(entries[:limit])}{more}"


def directory_error(env: Environment, path: str, shown: str) -> ToolArgumentError:
    listing = _format_listing(list_directory(env, path), shown)
    return ToolArgumentError(f"{shown} is a directory, not a file. {listing}")


def not_regular_message(shown: str) -> str:
    return (
        f"{shown} is not a regular file but a named pipe, socket or device; reading one "
        "waits for whatever writes to it, so the file tools do not (use the terminal, "
        "with a timeout, if you mean to)"
    )


def read_bytes_or_say_why(env: Environment, path: str, shown: str, max_bytes: int) -> bytes:
    """Up to `max_bytes` of the file at `path`, or a ToolArgumentError saying why not
    (missing, a directory, not a regular file, not readable)."""
    from herald.environments.base import NotRegularFileError

    try:
        return env.read_bytes(path, max_bytes=max_bytes)
    except PermissionError:
        raise ToolArgumentError(f"permission denied reading {shown}") from None
    except NotRegularFileError:
        raise ToolArgumentError(not_regular_message(shown)) from None
    except (FileNotFoundError, IsADirectoryError, NotADirectoryError) as exc:
        raise ToolArgumentError(f"cannot read {shown}: {exc.strerror or exc}") from None


def read_text(env: Environment, path: str, shown: str) -> TextFile:
    """A text file's content, or a clear error (missing, directory, binary, unreadable)."""
    info = stat_existing(env, path, shown)
    if info.is_dir:
        raise directory_error(env, path, shown)
    data = read_bytes_or_say_why(env, path, shown, MAX_TEXT_FILE_BYTES)
    truncated = info.size > len(data) and len(data) >= MAX_TEXT_FILE_BYTES
    reason = binary_reason(path, data, partial=truncated)
    if reason is not None:
        raise ToolArgumentError(
            f"{shown} is a binary file ({reason}, {info.size:,} bytes); read_file shows only "
            "text. Inspect it with the terminal tool instead (e.g. file, xxd, unzip -l, pdftotext)."
        )
    text = decode_utf8(data, partial=truncated)
    bom = data.startswith(b"\xef\xbb\xbf")
    return TextFile(path=path, text=text, size=info.size, truncated=truncated, bom=bom)


def split_lines(text: str) -> list[str]:
    """Lines as editors and grep count them: split on '\\n' only, CR kept off the end."""
    if not text:
        return []
    lines = text.split("\n")
    if lines[-1] == "":
        lines.pop()
    return [line[:-1] if line.endswith("\r") else line for line in lines]
