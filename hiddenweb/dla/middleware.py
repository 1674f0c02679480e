"""Spider middleware: report each response's outcome to the DLA, tag outgoing requests.

Enable with ``SPIDER_MIDDLEWARES = {"hiddenweb.dla.middleware.DLAFeedbackMiddleware": 550}``
next to ``SCHEDULER = "hiddenweb.dla.scheduler.DLAScheduler"``.

For each response, the outcome of the action that produced it (the request's
``hiddenweb_action`` meta) is judged by :func:`hiddenweb.dla.feedback.feedback` and sent as
:data:`~hiddenweb.dla.feedback.feedback_signal`; the scheduler updates its automata. The outcome
is read, first found wins, from:

* the first item the callback yields that has a ``form_only`` field (``PageItem``): its
  ``form_only``, ``status``, and whether it is new: the spider's verdict in the response meta
  ``hiddenweb_new_content`` (the ``hwdla`` spider judges every page), else the item's
  ``new_content``, else :class:`hiddenweb.pagetext.SeenContent` on its ``fingerprint``;
* else the response meta ``hiddenweb_form_only`` / ``hiddenweb_new_content`` (a callback that
  yields no item), with the response's status;

and the response meta ``hiddenweb_new_forms`` (how many forms not seen before the spider found on
the page). The outcome is reported once the callback's output is consumed, so what the
callback noted while producing it (its new forms) counts. Without either, nothing is learned
from that response. Outgoing requests without ``hiddenweb_action`` get one inferred from the request
(:func:`hiddenweb.dla.kinds.infer_action`) with ``page`` set to the response URL.
The items of a response whose request the JOBDIR journal says were emitted before a kill
(``hiddenweb_emitted``, :mod:`hiddenweb.dla.journal`) are judged, then not emitted again.
Stats: ``hiddenweb/dla/feedback/{reward,penalty,neutral}``, ``hiddenweb/dla/tagged``,
``hiddenweb/jobdir/not_emitted_again``.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING, Any

from itemadapter import ItemAdapter, is_item
from scrapy import Request

from hiddenweb.config import lab
from hiddenweb.dla.feedback import feedback, feedback_signal
from hiddenweb.dla.journal import EMITTED_META, JID_META, PARENT_META
from hiddenweb.dla.kinds import ACTION_META, infer_action
from hiddenweb.dla.previews import PREVIEW_META
from hiddenweb.pagetext import FRESH_META, NEW_CONTENT_META, NOVEL_META
from hiddenweb.redis_shared import seen_content

if TYPE_CHECKING:
    from typing import Self

    from scrapy.crawler import Crawler
    from scrapy.http import Response

logger = logging.getLogger(__name__)


class DLAFeedbackMiddleware:
    def __init__(self, crawler: Crawler) -> None:
        self.crawler = crawler
        self._seen = seen_content(crawler)  # for spiders that do not judge their pages
        #: lab knobs dla_fresh_public and dla_fresh_answers: the stale rule's reading (meta
        #: hiddenweb_fresh) of a public page, of a form's answer (hiddenweb.dla.feedback)
        self.fresh_public = bool(lab(crawler.settings, "dla_fresh_public"))
        self.fresh_answers = bool(lab(crawler.settings, "dla_fresh_answers"))

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> Self:
        return cls(crawler)

    async def process_spider_output(self, response: Response,
                                    result: AsyncIterator[Any]) -> AsyncIterator[Any]:
        verdict: dict[str, Any] | None = None
        async for obj in result:
            if isinstance(obj, Request):
                if JID_META in response.meta:  # its parent, for the JOBDIR journal
                    obj.meta.setdefault(PARENT_META, response.meta[JID_META])
                if ACTION_META not in obj.meta:
                    obj.meta[ACTION_META] = infer_action(obj, page=response.url)
                    self.crawler.stats.inc_value("hiddenweb/dla/tagged")
            elif verdict is None and is_item(obj):
                adapter = ItemAdapter(obj)
                if "form_only" in adapter.field_names() or "form_only" in adapter:
                    verdict = self._judge_item(response, adapter)
            if response.meta.get(EMITTED_META) and is_item(obj):
                self.crawler.stats.inc_value("hiddenweb/jobdir/not_emitted_again")
                continue  # downloaded again after a kill: its items are in the feeds
            yield obj
        if verdict is None and "hiddenweb_form_only" in response.meta:
            verdict = {"status": response.status,
                       "form_only": bool(response.meta["hiddenweb_form_only"]),
                       "new_content": bool(response.meta.get(NEW_CONTENT_META, True)),
                       "novel": bool(response.meta.get(NOVEL_META, True))}
        if verdict is not None:
            verdict["preview"] = bool(response.meta.get(PREVIEW_META))
            self._report(response, **verdict,
                         new_forms=int(response.meta.get("hiddenweb_new_forms", 0)))

    def _judge_item(self, response: Response, adapter: ItemAdapter) -> dict[str, Any]:
        if NEW_CONTENT_META in response.meta:  # the spider's own verdict wins
            new = bool(response.meta[NEW_CONTENT_META])
        elif adapter.get("new_content") is not None:
            new = bool(adapter["new_content"])
        else:  # an item without a fingerprint says nothing new
            new = adapter.get("fingerprint") is not None \
                and self._seen.is_new(adapter["fingerprint"])
        return {"status": adapter.get("status", response.status),
                "form_only": bool(adapter.get("form_only")), "new_content": new,
                "novel": bool(response.meta.get(NOVEL_META, True))}

    def _report(self, response: Response, *, status: int | None, form_only: bool,
                new_content: bool, new_forms: int = 0, novel: bool = True,
                preview: bool = False) -> None:
        meta = response.request.meta if response.request is not None else response.meta
        fresh = meta.get(FRESH_META)
        if not (self.fresh_answers if form_only else self.fresh_public):
            fresh = None
        outcome = feedback(meta, status=status, form_only=form_only, new_content=new_content,
                           new_forms=new_forms, novel=novel, preview=preview, fresh=fresh)
        self.crawler.stats.inc_value(f"hiddenweb/dla/feedback/{outcome or 'neutral'}")
        url = response.request.url if response.request is not None else response.url
        self.crawler.signals.send_catch_log(feedback_signal, request_meta=meta, url=url,
                                            outcome=outcome)
