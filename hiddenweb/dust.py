"""Presentation parameters: different URLs, same records (DUST), learned while crawling.

A list page's links re-sort or re-group the same list (``?sort=title``, ``?group=status``):
each is a new URL showing the records already read. On a search form's answer every query
gets its own set of such links, so their number grows with every value the crawler submits
(Roundup: hundreds of views of answers already read). Bar-Yossef, Keidar and Schonfeld's
DustBuster ("Do not crawl in the DUST", WWW 2007) learns rules that map such URLs onto one
another from the URLs and pages already fetched; this is that idea for one kind of rule, a
query parameter that changes nothing but the presentation, learned per path from the pages
downloaded:

* each HTML page fetched by GET with a query is read as the *set* of its links out of its URL
  template (:func:`hiddenweb.pagetext.outward_links`: order left out). Its *records* are those
  links but the ones every page of its path has shown so far (the site's navigation). For each
  of its parameters ``p``, the page is compared with an earlier page of the same path whose
  query differs only in ``p``'s value: the same records and the same words
  (:func:`hiddenweb.pagetext.shape_fingerprint`: a set, digits and echoed parameters left out)
  count for ``p`` being presentational, others against it; a pair where either page shows no
  record (two searches that found nothing) counts for neither. The words tell the pages of a
  front controller apart (``/doku.php?id=a`` and ``?id=b``), whose links to one another stay
  inside its template;
* everything is learned per *form of query*: the path and the names of the query's parameters
  (a front controller such as ``/doku.php`` serves pages by ``?id=``, and its searches by
  ``?do=search&id=…&q=…``, where the ``id`` changes nothing);
* once ``p`` has :data:`MIN_SAME` such pairs in one form of query and at most
  :data:`MAX_DIFFERENT` of them showed other records, ``p`` is presentational in it: a request
  of that form whose query, without its presentational parameters, is that of a page of the
  same form already downloaded is dropped before download (``IgnoreRequest``).

A sort of a paginated list shows other records on its first page: that parameter is not
learned (its pairs differ). Form submissions (``hiddenweb_reached_by["kind"] == "form"``),
``dont_filter`` requests and the seed are never dropped. With a ``JOBDIR`` a resumed crawl
learns again (nothing is kept).

Setting: ``HIDDENWEB_DUST`` (on; off: ``NotConfigured``). Stats: ``hiddenweb/dust/learned``
(path/parameter pairs found presentational), ``hiddenweb/dust/dropped``.
"""

from __future__ import annotations

import logging
from collections import defaultdict
from urllib.parse import parse_qsl, urlencode, urlsplit

from scrapy import Request, Spider
from scrapy.crawler import Crawler
from scrapy.exceptions import IgnoreRequest, NotConfigured
from scrapy.http import Response, TextResponse

from hiddenweb import defaults
from hiddenweb.pagetext import outward_links, shape_fingerprint

logger = logging.getLogger(__name__)

MIN_SAME = 5  # pairs of pages differing only in a parameter, with the same records
MAX_DIFFERENT = 0.1  # ... and at most this share of such pairs showing other records
MAX_PAGES = 5_000  # pages remembered per form of query (and parameter)

Query = tuple[tuple[str, str], ...]
Form = tuple[str, frozenset[str]]  # a path and its query's parameter names


def _query(url: str) -> tuple[Form, Query]:
    parts = urlsplit(url)
    query = tuple(sorted(parse_qsl(parts.query, keep_blank_values=True)))
    return (f"{parts.hostname}:{parts.port}{parts.path}", frozenset(k for k, _ in query)), query


def _without(query: Query, names: set[str] | frozenset[str]) -> Query:
    return tuple((k, v) for k, v in query if k not in names)


class PresentationParams:
    def __init__(self, crawler: Crawler) -> None:
        self.stats = crawler.stats
        # (form of query, param) -> the rest of a page's query -> (param's values, links)
        self.rests: dict[tuple[Form, str],
                         dict[Query, tuple[tuple[str, ...], frozenset[int], str]]] \
            = defaultdict(dict)
        self.navigation: dict[str, frozenset[int]] = {}  # path -> links on all its pages
        # (form of query, param) -> [same, different]
        self.evidence: dict[tuple[Form, str], list[int]] = defaultdict(lambda: [0, 0])
        self.presentational: dict[Form, set[str]] = defaultdict(set)
        # form of query -> its pages' queries downloaded, and those without its
        # presentational parameters
        self.downloaded: dict[Form, set[Query]] = defaultdict(set)
        self.canonical: dict[Form, set[Query]] = defaultdict(set)

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> PresentationParams:
        if not crawler.settings.getbool("HIDDENWEB_DUST", defaults.HIDDENWEB_DUST):
            raise NotConfigured("HIDDENWEB_DUST is off")
        return cls(crawler)

    @staticmethod
    def _exempt(request: Request) -> bool:
        reached = request.meta.get("hiddenweb_reached_by") or {}
        return request.method != "GET" or request.dont_filter \
            or reached.get("kind") in ("form", "seed")

    def process_request(self, request: Request, spider: Spider | None = None) -> None:
        if self._exempt(request):
            return
        form, query = _query(request.url)
        names = self.presentational.get(form)
        if names and _without(query, names) in self.canonical[form]:
            self.stats.inc_value("hiddenweb/dust/dropped")
            raise IgnoreRequest(f"presentation of a page already read ({', '.join(sorted(names))})")

    def process_response(self, request: Request, response: Response,
                         spider: Spider | None = None) -> Response:
        if request.method != "GET" or response.status != 200 \
                or not isinstance(response, TextResponse):
            return response
        form, query = _query(request.url)
        if not query:
            return response
        if len(self.downloaded[form]) < MAX_PAGES:
            self.downloaded[form].add(query)
        self.canonical[form].add(_without(query, self.presentational.get(form, set())))
        try:
            outward = outward_links(response.selector, request.url)
            shape = shape_fingerprint(response.selector, request.url, outward)
        except (ValueError, AttributeError):  # not HTML
            return response
        links = frozenset(hash(t.split("#", 1)[0]) for t, _ in outward)
        path = form[0]
        nav = self.navigation[path] = self.navigation.get(path, links) & links
        for name in form[1]:
            if name in self.presentational.get(form, ()):
                continue
            values = tuple(v for k, v in query if k == name)
            rests = self.rests[form, name]
            rest = _without(query, {name})
            earlier = rests.get(rest)
            if earlier is None:
                if len(rests) < MAX_PAGES:
                    rests[rest] = (values, links, shape)
            elif earlier[0] != values:
                mine, theirs = links - nav, earlier[1] - nav
                if mine and theirs:  # both show records
                    self._learn(form, name, mine == theirs and shape == earlier[2])
        return response

    def _learn(self, form: Form, name: str, same: bool) -> None:
        counts = self.evidence[form, name]
        counts[0 if same else 1] += 1
        same_n, different = counts
        if same_n >= MIN_SAME and different <= MAX_DIFFERENT * (same_n + different):
            names = self.presentational[form]
            names.add(name)
            self.canonical[form] = {_without(q, names) for q in self.downloaded[form]}
            self.stats.inc_value("hiddenweb/dust/learned")
            logger.info("Parameter %r of %s?%s changes only how its records are shown (%d "
                        "pairs of pages alike): views of pages already read are not downloaded",
                        name, form[0], "&".join(sorted(form[1])), same_n)


def canonical_url(url: str, names: set[str]) -> str:
    """``url`` without the query parameters ``names`` (for logs and tests)."""
    parts = urlsplit(url)
    query = _without(tuple(parse_qsl(parts.query, keep_blank_values=True)), names)
    return parts._replace(query=urlencode(query)).geturl()
