"""Signals hiddenweb's components send each other (``crawler.signals``), besides Scrapy's.

* :data:`download_budget_exhausted` — sent once by the DLA scheduler when it stops handing
  out requests (lab knob ``dla_max_steps``, the paper's k_threshold); no arguments. The form
  crawler then stops resuming paused forms when the spider is idle.
* :data:`hiddenweb.dla.feedback.feedback_signal` — the outcome of each response's action,
  sent by the DLA feedback middleware to the scheduler.
* :data:`page_read` — sent by the ``hwdla`` spider for every page it reads, with ``blocks``
  (its text blocks, :func:`hiddenweb.pagetext.text_blocks`), ``echoed`` (the words of its
  request's own query and form values), ``answer`` (a form's answer: how its explorer judged
  it), ``url`` (for a GET), ``title`` (its ``<title>``, or ``None``), ``awaited`` (its
  request carried ``hiddenweb_awaited``; also sent, with no blocks, when such a request
  failed), ``request`` (the one it answers: its kind of page,
  :func:`hiddenweb.stale.request_kind`) and ``spider``; read by :mod:`hiddenweb.stale`.
* :data:`recheck_wanted` — sent by :mod:`hiddenweb.stale` with ``url``: read that page again
  (a GET, its answer only compared with the first reading, not emitted); the ``hwdla`` spider
  queues it.
* :data:`serve_first_wanted` — sent by :mod:`hiddenweb.stale` with ``wanted`` (a predicate on
  a URL) when it would close the crawl while requests of kinds of page that were mostly fresh
  wait unread: a scheduler that can (the DLA scheduler's ``serve_first``) serves the groups
  holding such requests before any other and returns how many it lifted.
* :data:`stale_limit_reached` — sent by :mod:`hiddenweb.stale` with ``spider`` each time a run
  of pages with no new word reaches ``HIDDENWEB_CLOSE_STALE``: the crawl may close soon, so
  what waits for pages still to be read will not get them. The form crawler ends the holds
  that wait for an endpoint's answers to be read (as when the spider is idle) and sends what
  they release, marked awaited (a new form's first answers' rule waits for them); receivers
  return how many requests they sent.
"""

download_budget_exhausted = object()
serve_first_wanted = object()
page_read = object()
recheck_wanted = object()
stale_limit_reached = object()
