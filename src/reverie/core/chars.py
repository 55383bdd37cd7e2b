"""Character classes of the content rules (SPEC W4): what cannot be seen but is read.

Pure data and functions, shared by :mod:`reverie.core.validation` (which refuses these
characters) and :mod:`reverie.core.secrets` (which scans text with them removed).
"""

from __future__ import annotations

import re
import unicodedata

__all__ = ["INVISIBLE", "allowed_invisible", "strip_invisible"]

#: Characters that show nothing (or move other text) but are read by a model: every format
#: character (Unicode category Cf) except the visible number signs of Arabic, Syriac and
#: Kaithi, plus the line and paragraph separators and the Hangul fillers, which render blank.
#: Bidirectional overrides and isolates can reorder what a person sees, zero-width characters
#: and tag characters can hide text or split a token. ``tests/core/test_validation.py``
#: checks this against ``unicodedata``.
INVISIBLE = re.compile(
    "[\u00ad\u061c\u115f\u1160\u180e\u200b-\u200f\u2028-\u202e\u2060-\u2064"
    "\u2066-\u206f\u3164\ufeff\uffa0\ufff9-\ufffb\U00013430-\U0001343f"
    "\U0001bca0-\U0001bca3\U0001d173-\U0001d17a\U000e0001\U000e0020-\U000e007f]"
)
_ZWNJ, _ZWJ, _BLACK_FLAG, _CANCEL_TAG = "\u200c", "\u200d", "\U0001f3f4", "\U000e007f"
# What an emoji ZWJ sequence joins: pictographs (with their skin tones), dingbats, arrows and
# the other symbol blocks that emoji use; a variation selector may stand between.
_PICTOGRAPH = re.compile(
    "[\u00a9\u00ae\u203c\u2049\u2122\u2139\u2190-\u21ff\u2300-\u23ff\u2460-\u27bf"
    "\u2900-\u297f\u2b00-\u2bff\u3030\u303d\u3297\u3299\U0001f000-\U0001faff]"
)
_VARIATION = frozenset("\ufe0e\ufe0f")


def allowed_invisible(text: str, at: int) -> bool:
    """Whether the :data:`INVISIBLE` character at ``text[at]`` is one that writing needs: a
    zero-width joiner inside an emoji sequence, a zero-width (non-)joiner between two letters
    of a script that uses them, a tag character inside a flag sequence."""
    char = text[at]
    before = text[at - 1] if at else ""
    after = text[at + 1] if at + 1 < len(text) else ""
    if char in (_ZWJ, _ZWNJ) and _script_letter(before) and _script_letter(after):
        return True
    if char == _ZWJ:
        pictograph = before
        if pictograph in _VARIATION and at >= 2:
            pictograph = text[at - 2]
        return bool(pictograph and after) and all(_PICTOGRAPH.match(c) for c in (pictograph, after))
    if "\U000e0020" <= char <= _CANCEL_TAG:
        # A flag's tag run: the black flag, tag letters, the cancel tag.
        start = at
        while start and "\U000e0020" <= text[start - 1] <= "\U000e007e":
            start -= 1
        end = at
        while end < len(text) and "\U000e0020" <= text[end] <= "\U000e007e":
            end += 1
        return (
            start > 0
            and text[start - 1] == _BLACK_FLAG
            and end < len(text)
            and text[end] == _CANCEL_TAG
        )
    return False


def _script_letter(char: str) -> bool:
    """A letter or mark of a script other than Latin's ASCII: joiners shape those."""
    return bool(char) and not char.isascii() and unicodedata.category(char)[0] in "LM"


def strip_invisible(text: str) -> tuple[str, list[int] | None]:
    """``text`` without :data:`INVISIBLE` characters (all of them, allowed or not), and for
    each character kept its offset in ``text`` (``None`` when nothing was removed): what
    credential scanning reads, so that a zero-width character inside a token cannot hide it."""
    if text.isascii() or not INVISIBLE.search(text):
        return text, None
    kept = [i for i, c in enumerate(text) if not INVISIBLE.match(c)]
    return "".join(text[i] for i in kept), kept
