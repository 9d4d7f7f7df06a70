"""Inline keyboards: `Button`s as Telegram buttons, and callback data within its limit.

Telegram carries at most 64 bytes of callback data per button. Longer data (the runner's
buttons are opaque `/command` texts of any length) is kept here under a short key and
swapped back when the button is pressed; the newest keys are remembered, so a button
from before a restart (or a thousand buttons ago) answers "expired" instead of
pretending.
"""

from __future__ import annotations

from collections import OrderedDict

from telegram import InlineKeyboardButton, InlineKeyboardMarkup

from herald.gateway.contracts import Button

MAX_CALLBACK_DATA_BYTES = 64
_KEY_PREFIX = "herald:"
_KEPT = 1024


class CallbackData:
    def __init__(self, kept: int = _KEPT) -> None:
        self._kept = kept
        self._long: OrderedDict[str, str] = OrderedDict()
        self._counter = 0

    def encode(self, data: str) -> str:
        """What goes on the button for `data`."""
        size = len(data.encode("utf-8"))
        if 0 < size <= MAX_CALLBACK_DATA_BYTES and not data.startswith(_KEY_PREFIX):
            return data
        self._counter += 1
        key = f"{_KEY_PREFIX}{self._counter}"
        self._long[key] = data
        while len(self._long) > self._kept:
            self._long.popitem(last=False)
        return key

    def decode(self, data: object) -> str | None:
        """The data a pressed button stands for; None if it is unknown or forgotten."""
        if not isinstance(data, str) or not data:
            return None
        if data.startswith(_KEY_PREFIX):
            return self._long.get(data)
        return data

    def keyboard(self, buttons: list[list[Button]] | None) -> InlineKeyboardMarkup | None:
        rows = [row for row in buttons or [] if row]
        if not rows:
            return None
        return InlineKeyboardMarkup(
            [
                [
                    InlineKeyboardButton(
                        button.label or button.data, callback_data=self.encode(button.data)
                    )
                    for button in row
                ]
                for row in rows
            ]
        )
