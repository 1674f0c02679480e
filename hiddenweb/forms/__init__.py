"""Everything about a form: find it, classify it, fill it, explore it, submit it.

* :mod:`~hiddenweb.forms.extract` — forms and fields of a page;
* :mod:`~hiddenweb.forms.classify` — search, filter, login, … and which button to click;
* :mod:`~hiddenweb.forms.lvs` — the labelled value sets (HiWE);
* :mod:`~hiddenweb.forms.values` — a field's candidate values, the site's own vocabulary;
* :mod:`~hiddenweb.forms.records` — reading answers: records shown, "no results", Chao1;
* :mod:`~hiddenweb.forms.explorer` — one form's exploration (what to send next);
* :mod:`~hiddenweb.forms.endpoint` — what the forms of one endpoint share;
* :mod:`~hiddenweb.forms.submit` — a submission as a request (plain HTTP or Chromium);
* :mod:`~hiddenweb.forms.crawl` — the forms of one crawl, the spider's interface.
"""
