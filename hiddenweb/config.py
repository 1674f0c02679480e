"""Checking ``HIDDENWEB_*`` settings at start-up, and reading the lab knobs.

:func:`check` (called by :class:`hiddenweb.Addon`) refuses, with a one-line
:class:`~scrapy.exceptions.UsageError` that names the setting, a ``HIDDENWEB_*`` name it does
not know (with the nearest known name) and a value of the wrong type or out of range, before
anything is downloaded. The crawl ends with status 1 and the message as the log's last line.

:func:`lab` reads a *lab knob*: a constant of :data:`hiddenweb.defaults.LAB` (an ablation switch
or a tuned number a user has no reason to change), which a benchmark may override for one crawl
with ``-s 'HIDDENWEB_LAB={"dla_transfer": false}'``. The knobs and what they do are listed in
``docs/design-notes.md``.
"""

from __future__ import annotations

import difflib
import json
from typing import Any

from scrapy.exceptions import UsageError
from scrapy.settings import BaseSettings

from hiddenweb import defaults

#: name -> (type, lower bound or allowed values, upper bound); None: no bound
RULES: dict[str, tuple[type, Any, Any]] = {
    "HIDDENWEB_SUBMIT_FORMS": (bool, None, None),
    "HIDDENWEB_FOLLOW_LINKS": (bool, None, None),
    "HIDDENWEB_URL_SOURCES": (bool, None, None),
    "HIDDENWEB_URL_GUESSES": (bool, None, None),
    "HIDDENWEB_STOP_STREAMS": (bool, None, None),
    "HIDDENWEB_EMIT_REPEATS": (bool, None, None),
    "HIDDENWEB_STORE_ENABLED": (bool, None, None),
    "HIDDENWEB_KEEP_TOKENS": (bool, None, None),
    "HIDDENWEB_MAX_SUBMISSIONS_PER_FORM": (int, 1, None),
    "HIDDENWEB_STOP_MASS": (float, 0.0, 1.0),
    "HIDDENWEB_TEMPLATE_BUDGET": (int, 0, None),
    "HIDDENWEB_DLA_WAIT": (float, 0.0, 1.0),
    "HIDDENWEB_REDIS_LEASE": (float, 0.0, None),  # seconds, > 0
    "HIDDENWEB_LOSTSHEEP_THRESHOLD": (float, 0.0, 1.0),
    "HIDDENWEB_LOSTSHEEP_ON_QUIT": (str, ("drop", "demote"), None),
    "HIDDENWEB_FIND_STRATEGY": (str, ("ls2f", "sim", "bfs"), None),
    "HIDDENWEB_FIND_TEXT": (str, ("visible", "content"), None),
    "HIDDENWEB_BROWSER": (str, ("auto", "always", "never"), None),
    "HIDDENWEB_BROWSER_MAX_PAGES": (int, 1, None),
    "HIDDENWEB_BROWSER_TIMEOUT": (float, 0.0, None),  # seconds, > 0
    "HIDDENWEB_BROWSER_EVENTS": (bool, None, None),
    "HIDDENWEB_BROWSER_EVENT_BUDGET": (int, 0, None),
    "HIDDENWEB_BROWSER_SCROLL_STEPS": (int, 0, None),
}


def known_settings() -> list[str]:
    return sorted(n for n in dir(defaults) if n.startswith("HIDDENWEB_"))


def check(settings: BaseSettings) -> None:
    """Refuse unknown ``HIDDENWEB_*`` names and bad values (see the module docstring)."""
    known = known_settings()
    for name in [n for n in settings.attributes if n.startswith("HIDDENWEB_")]:
        if name not in known:
            near = difflib.get_close_matches(name, known, n=1)
            raise UsageError(f"unknown setting {name}"
                             + (f" (did you mean {near[0]}?)" if near else "")
                             + "; the settings are listed in docs/settings.md")
    for name, (kind, low, high) in RULES.items():
        if settings.getpriority(name) is None:
            continue
        value = _typed(settings, name, kind)
        if isinstance(low, tuple):
            if value not in low:
                raise UsageError(f"{name} must be one of {', '.join(low)}, not {value!r}")
        elif name.endswith(("_TIMEOUT", "_LEASE")) and value <= low:  # a time: strictly positive
            raise UsageError(f"{name} must be > {low}, not {value!r}")
        elif (low is not None and value < low) or (high is not None and value > high):
            bounds = f">= {low}" if high is None else f"between {low} and {high}"
            raise UsageError(f"{name} must be {bounds}, not {value!r}")
    from hiddenweb.safety import FORM_CLASSES, LEGACY_CLASSES

    for name, classes in (("HIDDENWEB_FORMS_ALLOW", FORM_CLASSES),
                          ("HIDDENWEB_UNSAFE_FORM_CLASSES", tuple(LEGACY_CLASSES))):
        bad = [c for c in settings.getlist(name) if c not in classes]
        if bad:
            raise UsageError(f"{name}: unknown class {bad[0]!r}; known: {', '.join(classes)} "
                             "(docs/safety.md)")
    for knob in lab_overrides(settings):
        if knob not in defaults.LAB:
            raise UsageError(f"HIDDENWEB_LAB: unknown knob {knob!r}; known: "
                             + ", ".join(sorted(defaults.LAB)))


def _typed(settings: BaseSettings, name: str, kind: type) -> Any:
    getter = {bool: settings.getbool, int: settings.getint, float: settings.getfloat,
              str: settings.get}[kind]
    try:
        return getter(name)
    except (TypeError, ValueError):
        raise UsageError(f"{name} must be a {kind.__name__}, not {settings.get(name)!r}") \
            from None


def lab_overrides(settings: BaseSettings) -> dict[str, Any]:
    value = settings.get("HIDDENWEB_LAB") or {}
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except ValueError:
            raise UsageError(f"HIDDENWEB_LAB must be a JSON object, not {value!r}") from None
    if not isinstance(value, dict):
        raise UsageError(f"HIDDENWEB_LAB must be a JSON object, not {value!r}")
    return dict(value)


def lab(settings: BaseSettings, knob: str) -> Any:
    """The lab knob ``knob``: its :data:`hiddenweb.defaults.LAB` constant, or a benchmark's
    override, coerced to the constant's type."""
    default = defaults.LAB[knob]
    value = lab_overrides(settings).get(knob, default)
    if isinstance(default, bool):
        return value if isinstance(value, bool) else str(value).lower() in ("1", "true", "yes")
    if isinstance(default, int):
        return int(value)
    if isinstance(default, float):
        return float(value)
    return value


def setting_args(settings: dict[str, Any] | None) -> list[str]:
    """``-s NAME=VALUE`` arguments of ``scrapy crawl`` for ``settings``; a dict (``HIDDENWEB_LAB``)
    is written as JSON, which Scrapy's ``getdict`` and :func:`lab` read back."""
    args: list[str] = []
    for key, value in (settings or {}).items():
        args += ["-s", f"{key}={json.dumps(value) if isinstance(value, dict) else value}"]
    return args
