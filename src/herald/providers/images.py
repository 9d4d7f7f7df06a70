"""Images for models that see them: kept under the home by reference, sent as content
parts.

An image the user attaches is checked, shrunk to the provider's limits
(`vision.max_edge_px`, `vision.max_bytes`; Pillow, imported only here) and stored
once under ``<home>/images/<sha256>.<ext>``. The transcript keeps only an
`ImageRef` (the relative path and what it is), never the bytes; each request
turns a ref into an OpenAI-chat ``image_url`` part with a data URL, which the
Anthropic transport converts to its base64 image block. Whether a model sees
images is `vision.main` (``auto`` guesses from the model name).

Who sends images: the owner, anyone in a chat Herald answers, a page the browser
screenshots, a file the model points `vision_analyze` at. A picture's size is read
from its header before its pixels are, so a small file that unpacks to gigabytes (a
PNG of one colour, 20,000 pixels square, is 1 MB) is refused unread; a JPEG is
decoded at the scale the limits need (libjpeg decodes at 1/2, 1/4 or 1/8 directly),
so a 200-megapixel phone photo still works.
"""

from __future__ import annotations

import base64
import hashlib
import io
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

MAX_PIXELS = 50_000_000  # decoded (a JPEG after its scaling): at most 200 MB as RGBA
MEDIA_TYPES = {"PNG": "image/png", "JPEG": "image/jpeg", "GIF": "image/gif", "WEBP": "image/webp"}
_EXT = {"image/png": "png", "image/jpeg": "jpg", "image/gif": "gif", "image/webp": "webp"}
# Model families that accept image input (for vision.main: auto).
_VISION_MODELS = (
    "gpt-4o",
    "gpt-4.1",
    "gpt-4-turbo",
    "gpt-5",
    "o1",
    "o3",
    "o4",
    "claude-3",
    "claude-sonnet-4",
    "claude-opus-4",
    "claude-haiku-4",
    "claude-4",
    "gemini",
    "llava",
    "pixtral",
    "qwen2-vl",
    "qwen2.5-vl",
    "llama-3.2-11b-vision",
    "llama-3.2-90b-vision",
    "grok-2-vision",
    "grok-4",
)


class ImageError(ValueError):
    """An image that cannot be used; the message says what to do."""


@dataclass(frozen=True)
class ImageRef:
    path: str  # relative to the home
    media_type: str
    width: int
    height: int
    size: int
    name: str  # the file's original name, for display

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> ImageRef:
        return cls(**{k: data[k] for k in cls.__dataclass_fields__})


def model_sees_images(setting: str, model: str) -> bool:
    """`setting` is vision.main / vision.auxiliary: on, off or auto (by model name)."""
    if setting in ("on", "off"):
        return setting == "on"
    name = model.lower().rsplit("/", 1)[-1]
    return any(name.startswith(prefix) or f"-{prefix}" in name for prefix in _VISION_MODELS)


def _load(path: Path | io.BytesIO, shown: str, max_edge: int) -> tuple[Any, bool]:
    """The image decoded, and whether it was decoded smaller than it is (a JPEG
    scaled down on the way in, still at least `max_edge` on each side)."""
    try:
        from PIL import Image, UnidentifiedImageError
    except ImportError:
        raise ImageError("images need Pillow: pip install 'herald[vision]'") from None
    # Herald checks the decoded size itself (below); Pillow's own check counts a
    # JPEG's full size, although it is decoded at a fraction of it.
    Image.MAX_IMAGE_PIXELS = None
    try:
        image = Image.open(path)
        full = image.size
        if image.format == "JPEG":
            image.draft(None, (max_edge, max_edge))
        width, height = image.size
        if width * height > MAX_PIXELS:
            image.close()
            raise ImageError(
                f"{shown} is {full[0]:,} x {full[1]:,} pixels; Herald reads images of up to "
                f"{MAX_PIXELS // 1_000_000} megapixels (JPEG: 64 times that): send a "
                "smaller one"
            )
        image.load()
    except FileNotFoundError:
        raise ImageError(f"{shown} does not exist") from None
    except IsADirectoryError:
        raise ImageError(f"{shown} is a directory, not an image") from None
    except (UnidentifiedImageError, OSError) as exc:
        raise ImageError(
            f"{shown} is not an image Herald can read (PNG, JPEG, GIF or WebP): {exc}"
        ) from None
    return image, image.size != full


def _encode(image: Any, keep_png: bool, quality: int) -> tuple[bytes, str]:
    out = io.BytesIO()
    if keep_png:
        image.save(out, format="PNG", optimize=True)
        return out.getvalue(), "image/png"
    if image.mode not in ("RGB", "L"):
        image = image.convert("RGB")
    image.save(out, format="JPEG", quality=quality)
    return out.getvalue(), "image/jpeg"


def store_image(
    source: str | Path | bytes,
    home_root: Path,
    *,
    max_edge: int,
    max_bytes: int,
    name: str = "image",
) -> ImageRef:
    """Check `source` (a file, or an image's bytes called `name`), fit it within the
    limits and keep it under the home."""
    if isinstance(source, bytes):
        path = Path(name)
        original, scaled = _load(io.BytesIO(source), name, max_edge)
        raw = source
    else:
        path = Path(source).expanduser()
        original, scaled = _load(path, str(path), max_edge)
        raw = path.read_bytes()
    kind = MEDIA_TYPES.get(str(original.format))
    if kind is None:
        raise ImageError(f"{path} is {original.format}; send PNG, JPEG, GIF or WebP")
    image = original
    if getattr(original, "n_frames", 1) > 1:
        original.seek(0)  # an animation: its first frame
        image = original.copy()
    if max(image.size) > max_edge:
        image = image.copy()
        image.thumbnail((max_edge, max_edge))
    if image is original and not scaled and len(raw) <= max_bytes and kind != "image/gif":
        data, media = raw, kind
    else:
        keep_png = kind == "image/png" or image.mode in ("RGBA", "LA", "P")
        data, media = _encode(image, keep_png, 85)
        quality = 85
        while len(data) > max_bytes:  # too big: JPEG, then lower quality, then smaller
            if quality > 40:
                quality -= 15
            else:
                image = image.copy()
                image.thumbnail((max(64, image.size[0] * 3 // 4), max(64, image.size[1] * 3 // 4)))
            data, media = _encode(image, False, quality)
            if max(image.size) <= 64:
                break
    if len(data) > max_bytes:
        raise ImageError(f"{path} cannot be made smaller than vision.max_bytes ({max_bytes:,})")
    digest = hashlib.sha256(data).hexdigest()[:32]
    relative = f"images/{digest}.{_EXT[media]}"
    target = home_root / relative
    if not target.exists():
        target.parent.mkdir(parents=True, exist_ok=True)
        temporary = target.with_suffix(".part")
        temporary.write_bytes(data)
        temporary.replace(target)
    return ImageRef(relative, media, image.size[0], image.size[1], len(data), path.name)


def image_part(ref: ImageRef, home_root: Path) -> dict[str, Any]:
    """The OpenAI-chat content part for `ref` (both wires take it; see anthropic_convert)."""
    try:
        data = (home_root / ref.path).read_bytes()
    except OSError as exc:
        raise ImageError(f"the stored image {ref.path} cannot be read: {exc}") from None
    encoded = base64.b64encode(data).decode("ascii")
    return {"type": "image_url", "image_url": {"url": f"data:{ref.media_type};base64,{encoded}"}}


def with_images(
    text: str, refs: list[ImageRef], home_root: Path, *, sees_images: bool, hint: str
) -> str | list[dict[str, Any]]:
    """A user message's content with its images: parts for a model that sees them, else
    the text with a line per image saying where it is and how to look at it (`hint`)."""
    if sees_images:
        parts: list[dict[str, Any]] = [{"type": "text", "text": text}] if text else []
        parts += [image_part(ref, home_root) for ref in refs]
        return parts
    notes = [f"[image attached: {home_root / ref.path} ({ref.name}); {hint}]" for ref in refs]
    return "\n".join([text, *notes]) if text else "\n".join(notes)


# What an image costs in a request, as characters of text, for estimates made before
# the provider counts (about 1,600 tokens for an image at the default size).
IMAGE_CHARS_ESTIMATE = 1600 * 4


def content_chars(content: Any) -> int:
    """Characters of a message's content for a cost estimate: text as it is, each image
    part as `IMAGE_CHARS_ESTIMATE` (not the length of its base64)."""
    if content is None:
        return 0
    if isinstance(content, str):
        return len(content)
    if isinstance(content, list):
        total = 0
        for part in content:
            if isinstance(part, dict) and part.get("type") in ("image_url", "image"):
                total += IMAGE_CHARS_ESTIMATE
            elif isinstance(part, dict):
                total += len(str(part.get("text") or ""))
            else:
                total += len(str(part))
        return total
    return len(str(content))


__all__ = [
    "IMAGE_CHARS_ESTIMATE",
    "ImageError",
    "ImageRef",
    "content_chars",
    "image_part",
    "model_sees_images",
    "store_image",
    "with_images",
]
