"""The proving ground: generated web sites with hidden parts, served over HTTP, with ground truth.

See :mod:`hiddenweb.bench.provingground.site` (``SiteModel``) and :mod:`.server`
(``serve_in_thread``, ``serve_forever``). Everything is deterministic for (pages, seed)."""
