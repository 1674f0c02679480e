"""What a rendered page shows that its serialized DOM (``page.content()``) leaves out (issue 24):
open shadow roots and the documents of its frames.

:func:`embedded_html` is called by the handler once the page was fired and scrolled, and
returns HTML for it to append to the DOM it reads, so that the spider's link extractor and form
reader see it as part of the page:

* every open shadow root, nested ones included (a custom element's links and forms, a
  declarative ``<template shadowrootmode=open>`` the parser attached), its markup in a
  ``<div data-hiddenweb-shadow>`` (the same document: relative URLs resolve as the page's);
* the body of each frame that has no URL of its own (``about:blank`` written by a script,
  ``about:srcdoc``), in a ``<div data-hiddenweb-frame>`` (such a document's URLs resolve
  against its parent's, as here);
* the URL each same-host frame shows now (a frame a script pointed or navigated elsewhere), as
  a link ``<a data-hiddenweb-frame>``: the spider crawls it as a page. Off-host frames were
  aborted by the guard and stay out.

At most :data:`MAX_ROOTS` shadow roots and :data:`MAX_FRAMES` frames, :data:`MAX_CHARS`
characters in all. Stats: ``hiddenweb/browser/shadow_roots``, ``hiddenweb/browser/frame_documents``,
``hiddenweb/browser/frame_urls``.
"""

from __future__ import annotations

import html
import logging
import re
from typing import Any
from urllib.parse import urlsplit

from playwright.async_api import Error as PlaywrightError

logger = logging.getLogger(__name__)

MAX_ROOTS = 200  # shadow roots read per page
MAX_FRAMES = 20  # frames read per page
MAX_CHARS = 500_000  # characters of markup appended per page
_DIED = re.compile(r"crash|closed|disconnected|context was destroyed", re.IGNORECASE)

# the markup of every open shadow root, depth first, nested ones too (innerHTML leaves them out)
SHADOW_JS = f"""() => {{
  const out = [];
  let left = {MAX_CHARS};
  const walk = (root) => {{
    const all = root.querySelectorAll("*");
    for (let i = 0; i < all.length && out.length < {MAX_ROOTS} && left > 0; i++) {{
      const shadow = all[i].shadowRoot;
      if (!shadow) continue;
      const markup = shadow.innerHTML.slice(0, left);
      left -= markup.length;
      out.push(markup);
      walk(shadow);
    }}
  }};
  walk(document);
  return out;
}}"""
FRAME_JS = f"""() => document.body ? document.body.innerHTML.slice(0, {MAX_CHARS}) : "" """


async def embedded_html(page: Any, host: str | None, stats: Any) -> str:
    """Shadow roots and frame documents of ``page`` (see the module docstring), as HTML to
    append; frames on hosts other than ``host`` are left out. A dead page's error is raised."""
    parts: list[str] = []
    try:
        roots = await page.evaluate(SHADOW_JS)
    except PlaywrightError as exc:
        if _DIED.search(str(exc)):
            raise
        roots = []
    if roots:
        stats.inc_value("hiddenweb/browser/shadow_roots", len(roots))
        parts += [f"<div data-hiddenweb-shadow>{markup}</div>" for markup in roots]
    left = MAX_CHARS - sum(len(p) for p in parts)
    for frame in page.frames[1:MAX_FRAMES + 1]:
        url = frame.url or ""
        if url.startswith("about:"):
            if left <= 0:
                continue
            try:
                markup = await frame.evaluate(FRAME_JS)
            except PlaywrightError as exc:
                if _DIED.search(str(exc)) and page.is_closed():
                    raise
                continue
            if markup.strip():
                markup = markup[:left]
                left -= len(markup)
                stats.inc_value("hiddenweb/browser/frame_documents")
                parts.append(f"<div data-hiddenweb-frame>{markup}</div>")
        elif urlsplit(url).scheme in ("http", "https") and urlsplit(url).hostname == host:
            stats.inc_value("hiddenweb/browser/frame_urls")
            parts.append(f'<a href="{html.escape(url, quote=True)}" data-hiddenweb-frame></a>')
    return "".join(parts)
