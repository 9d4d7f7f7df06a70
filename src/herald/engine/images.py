"""Images on user messages: remembered by reference, re-sent with every request.

The user's message is stored as text; its images live under the home
(`herald.providers.images`) and the session's meta maps the message's row id to
their `ImageRef`s (``meta["images"]``), so a resumed session sends the same
images and state.db never holds their bytes. Each request turns those messages'
content into text + image parts for a model that sees images, or into the text
plus a line per image naming its file and how to look at it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from herald.engine.session import update_meta
from herald.providers.images import ImageError, ImageRef, model_sees_images, with_images
from herald.providers.message import Message

if TYPE_CHECKING:
    from herald.engine.turn_context import TurnContext

META_IMAGES = "images"
VISION_TOOL = "vision_analyze"


def remember_images(ctx: TurnContext, message: Message) -> None:
    """Record the turn's images against the user's stored message (on disk first)."""
    if not ctx.user_images or message.row_id is None:
        return
    known = dict(ctx.session.meta.get(META_IMAGES) or {})
    known[str(message.row_id)] = [ref.to_dict() for ref in ctx.user_images]
    update_meta(ctx.runtime, {META_IMAGES: known})


def _hint(ctx: TurnContext) -> str:
    if VISION_TOOL in ctx.tools.names:
        return f"this model cannot see images: call {VISION_TOOL}(path, question) to look at it"
    return (
        "this model cannot see images and it was not shown. If it can, set vision.main: on; "
        "or enable the vision toolset (toolsets.enabled: [vision]) with an auxiliary "
        "model that sees images (auxiliary.*, vision.auxiliary)"
    )


def expand_images(
    ctx: TurnContext, messages: list[dict[str, Any]], history: list[Message]
) -> list[dict[str, Any]]:
    """`messages` (system prompt first, then `history` as API dicts) with images put
    back on the messages that carried them."""
    known = ctx.session.meta.get(META_IMAGES)
    if not known:
        return messages
    _provider, model = ctx.client.identity()
    sees = model_sees_images(ctx.config.vision.main, model)
    home = ctx.runtime.home.root
    out = list(messages)
    for index, message in enumerate(history, start=1):
        raw = known.get(str(message.row_id)) if message.row_id is not None else None
        if not raw or index >= len(out):
            continue
        text = out[index].get("content")
        refs = [ImageRef.from_dict(r) for r in raw]
        try:
            content = with_images(
                text if isinstance(text, str) else "", refs, home, sees_images=sees, hint=_hint(ctx)
            )
        except ImageError as exc:  # the file went away: say so instead of failing the turn
            content = f"{text}\n[an attached image is no longer available: {exc}]"
        out[index] = {**out[index], "content": content}
    return out


__all__ = ["META_IMAGES", "expand_images", "remember_images"]
