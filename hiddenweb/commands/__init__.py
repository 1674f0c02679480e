"""Sub-commands of the ``hiddenweb`` console command, one module each (see :mod:`hiddenweb.cli`)."""

from __future__ import annotations

import argparse
from collections.abc import Callable


def at_least(minimum: int) -> Callable[[str], int]:
    """An argparse ``type``: an integer not below ``minimum`` (``--pages -5`` is refused in one
    line, ``argument --pages: must be >= 1, not -5``, exit status 2)."""

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"must be an integer, not {text!r}") from None
        if value < minimum:
            raise argparse.ArgumentTypeError(f"must be >= {minimum}, not {value}")
        return value

    return parse
