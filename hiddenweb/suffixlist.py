"""The public suffix list stays on this machine: no crawl reaches a host outside its scope.

Scrapy's cookies middleware asks ``tldextract`` whether a cookie's domain is a public suffix
(``co.uk``), and ``tldextract`` fetches the list from ``publicsuffix.org`` (or GitHub) the first
time a process asks, unless its disk cache has it. A crawl of an app on 127.0.0.1 thus looked
up two third-party hosts at its first cookie; offline, it logged three tracebacks and went on
with the list bundled in the package. A security tester's crawler that reaches hosts outside
its scope, even for a library's data, is one they cannot run on a closed network.

:func:`keep_suffix_list_local` sets ``tldextract``'s own switch,
``TLDEXTRACT_PUBLIC_SUFFIX_LIST_URLS``, to empty (its documented "no HTTP requests") unless
the environment sets it: ``tldextract`` then reads its disk cache or the list bundled with it.
To use the live list, set that variable to its URLs (``tldextract``'s README). It acts only
when read: before ``scrapy.downloadermiddlewares.cookies`` is first imported, which the
add-on's earliest hook (``update_pre_crawler_settings``) is, unless a project imported it itself.
"""

from __future__ import annotations

import os

ENV = "TLDEXTRACT_PUBLIC_SUFFIX_LIST_URLS"


def keep_suffix_list_local() -> bool:
    """Set ``ENV`` to empty unless it is set; True when this call set it."""
    if ENV in os.environ:
        return False
    os.environ[ENV] = ""
    return True
