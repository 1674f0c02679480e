"""Text for a terminal: what a crawled site wrote (URLs, titles) is printed with its control
characters escaped, so a URL holding ``ESC[2J`` or a carriage return cannot clear the screen,
rewrite a line or retitle the window of the person reading ``hiddenweb rank``."""

from __future__ import annotations

import unicodedata


def printable(text: str) -> str:
    """``text`` with control and format characters (``\\x1b``, ``\\r``, ``\\u202e``…) as
    ``\\xNN`` / ``\\uNNNN`` escapes; everything else, accents and CJK included, as is."""
    if text.isprintable():
        return text
    out = []
    for ch in text:
        if unicodedata.category(ch) in ("Cc", "Cf", "Zl", "Zp"):
            code = ord(ch)
            out.append(f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}")
        else:
            out.append(ch)
    return "".join(out)
