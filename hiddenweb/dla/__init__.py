"""DLA: distributed learning automata that order the crawl (issue 3).

:mod:`~hiddenweb.dla.automaton` (the LA and its update equations), :mod:`~hiddenweb.dla.kinds`
(what transfers across pages), :mod:`~hiddenweb.dla.feedback` (reward / penalty from a
response), :mod:`~hiddenweb.dla.scheduler` (the Scrapy scheduler; its heaps:
:mod:`~hiddenweb.dla.heap`),
:mod:`~hiddenweb.dla.middleware` (reports outcomes, tags requests),
:mod:`~hiddenweb.bench.microbench` (cost per request).
"""
