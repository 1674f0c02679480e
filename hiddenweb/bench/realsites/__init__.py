"""``hiddenweb bench realsites``: third-party web apps served on 127.0.0.1, truth from the server.

Contract. Each app (:mod:`hiddenweb.bench.realsites.sites`) is installed by name from a package
registry (PyPI into its own venv, npm into its own prefix, Debian through apt) into a cache
outside the repository (:func:`~hiddenweb.bench.realsites.install.cache_root`,
``$XDG_CACHE_HOME/hiddenweb/realsites``, by default ``~/.cache/hiddenweb/realsites``), with the
versions pinned in its definition; apps that live only in a git repository come only from
``--source NAME=URL-OR-PATH`` and are skipped otherwise. For every crawler the app gets a fresh
copy of its pristine data, starts on a free loopback port behind a logging reverse proxy
(:mod:`~hiddenweb.bench.realsites.proxy`), and is stopped afterwards
(:mod:`~hiddenweb.bench.realsites.servers`, also on Ctrl-C).

The truth (content units, each of one kind: ``link``, ``form`` or ``js``, and whether the
safety policy allows reaching it) comes from the app's data, never from a crawler's output; what
a crawler found and which of its requests were dangerous are read from the proxy's log of what
the server received and sent (:mod:`~hiddenweb.bench.realsites.scoring`). The three crawlers
(:mod:`~hiddenweb.bench.realsites.crawlers`) are the spider a Scrapy user writes, the same with
every page in Chromium, and ``scrapy crawl hwdla`` with its defaults;
:mod:`~hiddenweb.bench.realsites.runner` runs them and :mod:`~hiddenweb.bench.realsites.report`
prints and writes the results.
"""
