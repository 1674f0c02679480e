"""The item the ``hwdla`` spider yields: one per downloaded page (JSON lines with ``-O``).

Schema (every key but ``lostsheep`` is always present; ``null`` where it does not apply):

=================  =========  ==============================================================
key                type       meaning
=================  =========  ==============================================================
url                str        the URL requested (for a POST form submission: the form action;
                              for a submission made in Chromium: the page's URL afterwards)
final_url          str        the URL of the response, after redirects
method             str        ``GET`` or ``POST``
status             int|null   HTTP status; null when the download failed (see ``error``)
error              str|null   why the download failed (DNS, refused, timeout …)
depth              int        actions (links + submissions) from the seed
referrer           str|null   URL of the page whose link or form led here
reached_by         dict       ``{"kind": "seed"|"link"|"form", "form": null|{"action", "method",
                              "fields": {name: value}, "form_class": str}}``
form_only          bool       true when the chain of actions from the seed contains a form
                              submission: the page was reached only through a form
title              str|null   the page's ``<title>``
fingerprint        str|null   SHA-1 of the page's visible text (whitespace-normalised) and of
                              the targets of its links and forms: equal for repeats only
fetch_seconds      float      download latency (request sent → response received)
fetched_at         float      UNIX time the response was received
action_score       float|null the DLA scheduler's score of the action when it was chosen
                              (null under another scheduler); HWDLA fig. 4 is drawn from it
downloads          int        pages this crawl had downloaded when this one arrived (this one
                              included): the x axis of "hidden pages found per download" even
                              when repeats are not emitted as items
content_type       str|null   the response's Content-Type
cache_control      str|null   the response's Cache-Control header (freshness, for the store)
expires            str|null   the response's Expires header
lostsheep          dict       find mode only (``-a find=1``), on the one item it yields:
                              ``{"score": f, "ratio": f/sum f, "reason": "threshold"|"maxdepth"|
                              "stuck", "path": [URLs stood on], "rounds", "downloads"}``
=================  =========  ==============================================================
"""

from __future__ import annotations

import scrapy


class PageItem(scrapy.Item):
    url = scrapy.Field()
    final_url = scrapy.Field()
    method = scrapy.Field()
    status = scrapy.Field()
    error = scrapy.Field()
    depth = scrapy.Field()
    referrer = scrapy.Field()
    reached_by = scrapy.Field()
    form_only = scrapy.Field()
    title = scrapy.Field()
    fingerprint = scrapy.Field()
    fetch_seconds = scrapy.Field()
    fetched_at = scrapy.Field()
    downloads = scrapy.Field()
    action_score = scrapy.Field()
    content_type = scrapy.Field()
    cache_control = scrapy.Field()
    expires = scrapy.Field()
    lostsheep = scrapy.Field()
