"""Project context files (`.herald.md`, `AGENTS.md`, …) found from the working directory
upward, each size-capped and scanned for injected instructions before it may enter the
system prompt."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class ContextFile:
    path: Path
    text: str  # what goes into the prompt: the content, or a notice that replaces it
    blocked: bool = False
    truncated: bool = False


def _candidates(cwd: Path, names: list[str], stop: Path | None) -> list[Path]:
    per_dir: list[list[Path]] = []
    current = cwd.resolve()
    while True:
        per_dir.append([current / name for name in names if (current / name).is_file()])
        if current == stop or current.parent == current:
            break
        current = current.parent
    # Outermost directory first, so the nearest file has the last word.
    return [path for found in reversed(per_dir) for path in found]


def discover_context_files(
    cwd: str | Path, *, names: list[str], max_chars: int, stop_at: Path | None = None
) -> list[ContextFile]:
    from herald.safety import scan_text

    files: list[ContextFile] = []
    for path in _candidates(Path(cwd), names, stop_at or Path.home()):
        try:
            text = path.read_text(encoding="utf-8", errors="replace")
        except OSError:
            continue
        truncated = len(text) > max_chars
        if truncated:
            text = text[:max_chars] + f"\n[… cut at {max_chars:,} characters]"
        scan = scan_text(text, kind="context_file")
        if scan.blocked:
            reasons = "; ".join(scan.reasons) or "suspicious content"
            notice = (
                f"[{path.name} was not loaded: it looks like it tries to steer the agent "
                f"({reasons}). Ask the user to review {path}.]"
            )
            files.append(ContextFile(path, notice, blocked=True))
            continue
        files.append(ContextFile(path, text.strip(), truncated=truncated))
    return files
