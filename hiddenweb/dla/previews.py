"""Whether a form's answer is only a *preview* of pages the crawl already has in hand.

A site search (a wiki's, a tracker's) answers each query with a list of pages: their titles,
a snippet of each, and links to them. Judged by its text (:class:`hiddenweb.pagetext.
ShownText`), each answer is new: the snippets are text no page showed yet, because the pages
they come from are still waiting in the frontier. So the DLA rewards the search (feedback row
"hidden and new content", :mod:`hiddenweb.dla.feedback`), submits it again and again, and pages
through every answer, while the pages it points at, already queued, wait. In one Trac crawl
465 of 800 requests were search answers, none of which linked a page the crawl had not met
already; 90 % of the wiki's pages came only after request 570 (a spider that only follows
links had them by its 26th).

An answer is a preview (:meth:`Previews.judge`) when every link on it (leaving out links to
its own path: its next page, another query of the same form) points at a page the crawl has
already met (as a link, or read), and at least one of them at a page not read yet: what it
shows beyond them is what reading them shows. Its feedback is a penalty (a wasted
submission), like a repeat's. An answer that points only at pages already read, or at
nothing, is judged by its text as before: a canned query's table of rows that no page
links is content, not a preview.

URLs are kept as 8-byte hashes of the URL without its fragment, about 50 bytes each, for the
links met and the pages read. In shared mode (``HIDDENWEB_REDIS_URL``) a worker knows only the
links and pages of its own share: it meets fewer links as known, so it calls fewer answers
previews. Lab knob ``dla_previews`` (on).
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from urllib.parse import urldefrag, urlsplit

#: response meta: the answer was judged a preview (read by the DLA feedback middleware)
PREVIEW_META = "hiddenweb_preview"


def _key(url: str) -> bytes:
    return hashlib.sha1(urldefrag(url)[0].encode("utf-8", "surrogatepass")).digest()[:8]


class Previews:
    """The links a crawl has met and the pages it has read; whether an answer is a preview."""

    def __init__(self) -> None:
        self.linked: set[bytes] = set()
        self.read: set[bytes] = set()

    def page_read(self, *urls: str) -> None:
        """A page was read (its request's URL, and where it ended after redirects)."""
        self.read.update(_key(url) for url in urls)

    def judge(self, url: str, links: Iterable[str], answer: bool) -> bool:
        """Record the ``links`` of the page at ``url``; for a form's ``answer``, whether it is
        a preview (module docstring): every link off its own path met before, one not read."""
        keys = {link: _key(link) for link in links}
        own = urlsplit(url).path if answer else None
        known = [key in self.linked for link, key in keys.items()
                 if own is not None and key not in self.read and urlsplit(link).path != own]
        self.linked.update(keys.values())
        return any(known) and all(known)
