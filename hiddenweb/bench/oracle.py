"""The oracle strategy of ``hiddenweb bench coverage``: a crawl that takes exactly the actions
that lead to hidden pages (``scrapy crawl hwdla -a oracle=TRUTH.jsonl``), the lower bound of
downloads. Benchmarks only; the spider imports it only when given ``oracle``.

:class:`Oracle` keeps the truth's hidden pages (those plain HTTP can reach) and the chains of
actions from the seed that reach them; :meth:`Oracle.requests` yields a page's next actions.
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Callable, Iterator

import scrapy
from scrapy.http import TextResponse


class Oracle:
    def __init__(self, path: str) -> None:
        pages = {}
        with open(path, encoding="utf-8") as fh:
            for line in fh:
                page = json.loads(line)
                pages[page["key"]] = page
        needed: set[str] = set()
        for page in pages.values():
            if page["hidden"] and not page.get("needs_browser"):
                key = page["key"]
                while key is not None and key not in needed:
                    needed.add(key)
                    action = pages[key].get("action")
                    key = action["from_key"] if action else None
        self.children: dict[str, list[dict]] = defaultdict(list)
        self.home: dict | None = None
        for key in needed:
            action = pages[key].get("action")
            if action is None:
                self.home = pages[key]
            else:
                self.children[action["from_key"]].append(pages[key])

    def requests(self, response: TextResponse, callback: Callable, errback: Callable
                 ) -> Iterator[scrapy.Request]:
        parent_form_only = bool(response.meta.get("hiddenweb_form_only"))
        for page in self.children.get(response.meta.get("hiddenweb_oracle_key"), []):
            action = page["action"]
            is_form = action["via"] == "form"
            data = [tuple(pair) for pair in action.get("data") or []]
            url = response.urljoin(action["url"])  # the truth holds paths; the port is the run's
            meta = {
                "hiddenweb_oracle_key": page["key"],
                "hiddenweb_form_only": parent_form_only or is_form,
                "hiddenweb_reached_by": {
                    "kind": "form" if is_form else "link",
                    "form": {"action": url, "method": action["method"],
                             "fields": dict(data), "form_class": "search",
                             "signature": "oracle"} if is_form else None,
                },
            }
            if action["method"] == "POST":
                yield scrapy.FormRequest(url, formdata=data, callback=callback,
                                         errback=errback, meta=meta, dont_filter=True)
            else:
                yield scrapy.Request(url, callback=callback, errback=errback, meta=meta,
                                     dont_filter=True)
