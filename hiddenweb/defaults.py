"""Defaults of every ``HIDDENWEB_*`` setting, in one place.

Each setting is documented (type, default, example) in ``docs/settings.md``; a test fails when
a setting used in the code is missing from there. :data:`LAB` holds the lab knobs: constants a
user has no reason to change, which benchmarks override for one crawl with ``HIDDENWEB_LAB``
(:func:`hiddenweb.config.lab`; documented in ``docs/design-notes.md``).
"""

# --- scope and safety (spider) ---------------------------------------------------------------
HIDDENWEB_SUBMIT_FORMS = True
# form classes the safety policy may submit beyond its own (docs/safety.md); never the default
HIDDENWEB_FORMS_ALLOW: list[str] = []
HIDDENWEB_UNSAFE_FORM_CLASSES: list[str] = []  # deprecated alias of HIDDENWEB_FORMS_ALLOW
HIDDENWEB_KEEP_TOKENS = False  # keep hidden tokens/keys sent by forms on items and in the store
HIDDENWEB_LVS_DIR = ""  # empty: the bundled lvs_data/ directory
HIDDENWEB_MAX_SUBMISSIONS_PER_FORM = 400
# retire a form that gave results once the chance that its next answer is a new page falls
# below this (Good-Turing missing mass of its last answers, hiddenweb/forms/stopping.py); an
# endpoint that never gave one runs to its limit. 0: never retire (docs/design-notes.md)
HIDDENWEB_STOP_MASS = 0.05
# close the crawl after this many pages in a row showed no word it had not read (hiddenweb/stale.py)
# 0: off
HIDDENWEB_CLOSE_STALE = 100
HIDDENWEB_TEMPLATE_BUDGET = 20  # pages of one URL template before its novelty is judged
HIDDENWEB_FOLLOW_LINKS = True
HIDDENWEB_URL_SOURCES = True  # follow URLs named besides links: headers, <link>, sitemaps, feeds…
HIDDENWEB_URL_GUESSES = True  # and the guessed ones, served last: script strings, comments, CSS…
HIDDENWEB_STOP_STREAMS = True  # a reply that is an endless stream stops at its headers
HIDDENWEB_STATS_FILE = ""  # write the final stats as JSON here (off when empty)
# the crawl report (hiddenweb.crawlreport); empty: beside LOG_FILE when it is set, else none
HIDDENWEB_REPORT_FILE = ""

# --- DLA scheduler (issue 3) -------------------------------------------------------------------
HIDDENWEB_DLA_WAIT = 0.5  # the best pending request waits while one in flight scores 1/WAIT x more

# --- shared mode on Redis (issue 27): N workers, one crawl ---------------------------------------
HIDDENWEB_REDIS_URL = ""  # e.g. "redis://127.0.0.1:6379/0"; empty: one process, no Redis
HIDDENWEB_REDIS_KEY = ""  # the crawl's name in Redis (keys hw:{KEY}:...); empty: the spider's name
HIDDENWEB_REDIS_LEASE = 30.0  # seconds a dead worker's requests stay leased before others get them

# --- lost-sheep pre-filter (issue 4) -----------------------------------------------------------
# where a sheep starts: "B" (S-1 states from Q) or "middle" (S//2 from Q), issue 28
HIDDENWEB_LOSTSHEEP_START = "B"
HIDDENWEB_LOSTSHEEP_THRESHOLD = 0.75  # find mode: stop when f_best / sum(f) reaches this
HIDDENWEB_LOSTSHEEP_ON_QUIT = "drop"  # a link whose sheep quits on its label: "drop" | "demote"
# find mode (-a find=1): "ls2f" (the lost-sheep herder), or the baselines "sim" and "bfs" (issue 28)
HIDDENWEB_FIND_STRATEGY = "ls2f"
HIDDENWEB_FIND_TEXT = "visible"  # what find mode reads of a page: "visible" | "content"

# --- visit store (issue 6) ---------------------------------------------------------------------
HIDDENWEB_STORE_ENABLED = True
# Relative: in the project's .scrapy/ directory, like HTTPCACHE_DIR (shared by crawls and the CLI).
HIDDENWEB_STORE_PATH = "hiddenweb.db"
HIDDENWEB_STORE_TIMEOUT = 30.0  # seconds to wait for another writer's lock

# --- browser rendering (issue 5) ---------------------------------------------------------------
HIDDENWEB_BROWSER = "auto"  # "auto": pages whose scripts build links/forms; "always"; "never"
HIDDENWEB_BROWSER_PATH = "/usr/bin/chromium"  # Debian's Chromium (no browser downloads here)
HIDDENWEB_BROWSER_MAX_PAGES = 8  # pages open at once in the one browser context
HIDDENWEB_BROWSER_TIMEOUT = 20.0  # seconds for a navigation; then the request falls back
HIDDENWEB_BROWSER_EVENTS = True  # fire a rendered page's event handlers (issue 24)
HIDDENWEB_BROWSER_EVENT_BUDGET = 40  # events fired on one page at most
HIDDENWEB_BROWSER_XHR_REPLIES = True  # a captured script GET is answered from its render
# a page's script POSTs that read (a GraphQL query, an API's search) are sent while it renders;
# False: none of its non-GET requests is (hiddenweb.safety.judge_script_request)
HIDDENWEB_BROWSER_SCRIPT_READS = True
# a rendered page scrolled / its "load more" clicked until it stops growing, this many steps at
# most (0: never scrolled; hiddenweb.browser.scroll)
HIDDENWEB_BROWSER_SCROLL_STEPS = 20

# --- form exploration (issue 5) ----------------------------------------------------------------
HIDDENWEB_EMIT_REPEATS = False  # emit items for pages whose content was already seen

# --- lab knobs (docs/design-notes.md): benchmarks override them with HIDDENWEB_LAB ---------------
HIDDENWEB_LAB: dict = {}  # {"knob": value}; e.g. -s 'HIDDENWEB_LAB={"dla_transfer": false}'
LAB: dict = {
    "template_min_novelty": 0.3,
    "dla_max_steps": 0,  # k_threshold: stop after this many dequeued requests; 0 = no limit
    "dla_a": "entropy",  # reward step: "entropy" (eqs. 6-7) or fixed (0, 1)
    "dla_b": 0.05,  # penalty step b of eq. 2, 0 <= b << a (see docs/settings.md)
    "dla_transfer": True,  # share learning across pages through action kinds
    "dla_label_words": "answers",  # label words as kinds: answers (not public links), all, none
    "dla_converge_p": 0.99,  # a page automaton stops learning once some p exceeds this
    "dla_explore_in_flight": 4,  # speculative requests (below WAIT x the best) in flight
    "dla_wait_for_browser": True,  # requests in Chromium count as in flight for waiting
    # a request for Chromium stays pending while its pages are all taken, not queued in the
    # download slot's FIFO out of the scheduler's order (hiddenweb.dla.scheduler; measured, off)
    "dla_hold_full_slot": False,
    # a lifted group (served first: the stale rule's, a single-page app's sibling views) does
    # not wait for the answers in flight (HIDDENWEB_DLA_WAIT's rules 1 and 2; measured, off)
    "dla_lifted_go": False,
    "dla_nofollow_last": True,  # links marked rel="nofollow" wait until nothing else is pending
    # a form's answer whose links all lead to pages met before, one not read yet, is penalised
    # (a search's list of queued pages): hiddenweb.dla.previews
    "dla_previews": True,
    "lostsheep_states": 100,  # automaton states S (paper: LS2F S=100 is the best setting)
    "lostsheep_twofold": True,  # 2F: steps S/2, S/4, ... (False: one state per word)
    "lostsheep_maxdepth": 20,  # find mode: at most this many herder rounds (moves)
    "form_wave": 4,  # submissions of one form in flight; each answer releases the next
    "form_patience": 10,  # pause a form after this many answers in a row gave nothing new
    # submit the values a form's own result pages show (label: value pairs), before blind ones
    "form_harvest": True,
    # answers that gave nothing new, shared by the forms of one endpoint until its first result
    "form_blind_budget": 150,
    # reorder waiting LVS values by their company on the site's pages (hiddenweb.forms.values)
    "form_affinity": True,
    "form_page_words": True,
    "form_answers_first": True,
    # requests finished with none of an endpoint's answers read, after which its blind guesses
    # wait for them no more: the scheduler keeps them back (hiddenweb.forms.crawl); 0: no limit
    "form_reading_patience": 32,
    # a copy of an explored form whose hidden state is its own page's query (a listing's sort
    # or facet page) is not submitted: its default answer is that page (hiddenweb.forms.crawl)
    "form_view_copies": True,
    # the copies of a POST form that posts back to its own page are one family across pages;
    # once two are done with no new page, a new copy is sent with its defaults only
    # (hiddenweb.forms.stopping)
    "form_own_page_families": True,
    # ... judged by its copies' answers to values other than their page's defaults: each wiki
    # page's diff options gave its diff (new) with the defaults, then 12 POSTs of other views
    # of it, page after page, and the family was never spent (hiddenweb.forms.stopping)
    "form_family_values": True,
    # ... and a value's answer is a new page for the family only when it shows a text block no
    # page showed before: display options that redirect to other views of the same diff (its
    # text rearranged), new page after new page; on Trac, whose answers are mostly repeats, it
    # fired 1-2 times a crawl, no effect (docs/design-notes.md; hiddenweb.forms.crawl)
    "form_family_text": True,
    # a form's answer the DLA judged a preview (its links all lead to pages met before, one not
    # read yet: hiddenweb.dla.previews) is not a new page for its form's explorer: no value
    # paid, no word learnt from it (hiddenweb.forms.crawl)
    "form_previews_known": True,
    # a public page that showed a word no earlier page showed (the stale rule's reading) is no
    # penalty, and its link kind keeps its age in the scheduler's ties (hiddenweb.dla.feedback)
    "dla_fresh_public": True,
    # ... and so does the kind of a URL template with query keys (a sort, a facet, a filter of
    # a listing), off: only a kind of page without them (hiddenweb.dla.scheduler)
    "dla_fresh_views": False,
    # groups of one score: the one whose URL template has fewer query keys first, then the
    # older (a table's pages before its facet values; hiddenweb.dla.heap)
    "dla_fewer_keys_first": True,
    # a form's answer that showed no word new to the crawl (the stale rule's reading) is a
    # penalty, not a reward, however new its set of texts (hiddenweb.dla.feedback). Off: with
    # it on, 5 of 8 proving-ground crawls closed 2-8 hidden pages short (docs/design-notes.md)
    "dla_fresh_answers": False,
    "store_batch_size": 100,  # visits per transaction
    "store_flush_interval": 5.0,  # seconds; 0: only by batch size and at close
    # a URL template whose first renders added nothing to the plain copy is not rendered again
    # (but its 10th, 20th, 40th, ... page): hiddenweb.browser.renders
    "browser_render_gate": True,
    # a render adds something only by links and forms the crawl would follow or submit (in
    # scope, allowed by the safety policy): hiddenweb.browser.detect.page_offer
    "browser_judge_acted": True,
    # ... and links to other views of the page (its path, another query) count only when its
    # plain copy links none: hiddenweb.browser.detect.is_view_of
    "browser_judge_views": True,
    "browser_judge_known": True,
    "form_inert_repeats": True,
    # a form submitted in Chromium whose first 2 answered submissions sent no request (it only
    # changes the page: a bookmark kept in the page's storage) is submitted no more (0: off)
    "form_page_only_after": 2,
    # the words of every value typed into a form submitted in Chromium are echoes on its
    # answers, not new text: the page keeps its storage (hiddenweb.forms.crawl.typed_echoes)
    "form_typed_echoes": True,
    # a form submitted in Chromium sends its defaults alone first; each answer releases one
    # more submission, two after a new page (FormExplorer.first_wave; off: a whole wave at once)
    "form_browser_slow_start": True,
    # renders of a URL template judged before its verdict (min_seen: hiddenweb.browser.detect)
    "browser_min_renders": 2,
    "browser_useful_share": 0.5,  # a template is rendered while this share of its renders pay
    # a template first met once its scripts rendered idle elsewhere is idle unrendered, but a few
    "browser_judge_new_templates": True,
    # a direct render's verdict (against the document Chromium received) counts in the policy
    "browser_judge_direct": True,
    "browser_earned_renders": True,  # a useful verdict lets out what its useful renders earned
    "browser_route_shells": True,  # a route read under one query of its shell: not again
    "browser_withdraw": True,  # a queued render of a template judged idle since: not sent
    # ... nor one of a template not judged, queued before its scripts were judged idle
    "browser_withdraw_by_scripts": True,
    # a hash route (/#/runs/7) is a page of its own, rendered, not a link clicked in its page
    # (hiddenweb.routes)
    "hash_route_pages": True,
    # ... but not the fragment of a document whose plain copy is a page of text, not an app's
    # shell (#/Milestone on a wiki page: an anchor; BrowserPolicy.anchor_of)
    "route_anchors": True,
    # a view met under one record's hash route (#/items/1/history) is asked for under the other
    # records met under the same parent (#/items/2/history): guessed links (routesiblings.py)
    "route_siblings": True,
    "route_siblings_last": False,  # ... served last, as the guessed URL sources are
    # ... or served first: each is a view a render proved under another record
    "route_siblings_first": True,
    # the first request of a hash route's URL template (#/items/{n}/history) is served next by
    # the DLA scheduler, itself only: a view of the app not rendered yet before more records
    # under views already rendered (the spider's follow; off: no unit gain on MLflow at 80 s)
    "route_templates_first": False,
    # each rendered document's localStorage and sessionStorage are its own, empty at first
    # (browser/scripts.py FRESH_STORAGE_JS): no render shows what an earlier one stored
    "browser_fresh_storage": False,
    # the views a hash-routed app's router declares in its scripts ("/items/:id/details") are
    # asked for under the records of the routes met (#/items/7 -> #/items/7/details): guessed
    # links (routepatterns.py)
    # off: MLflow, the one corpus app it acts on, found 21 of 30 units at 240 s on against 29
    # off, its crawl closed stale at 185 s after renders of views no record shows
    "route_patterns": False,
    # a fired click is pressed first (pointerdown, mousedown, pointerup, mouseup), and a press
    # listener on an ancestor makes delegated clicks (hiddenweb.browser.events)
    "browser_press_clicks": True,
    # a container's own script listeners (the root elements', or those of an element holding 3
    # controls or more) are delegated clicks' only, not fired on the container itself (events.py)
    "browser_event_containers": True,
    # each hash-route template its own memory of fruitless handlers; a document's handlers
    # fruitless on 2 route templates and never fruitful skipped on all its routes (events.py;
    # off: MLflow, its one corpus app, lost a tenth of its renders to it and found no unit more)
    "browser_event_route_memory": False,
    # an event that took the page to another view of its document: the view taken again
    # before the next event (events.py)
    "browser_event_restore_view": True,
    # the links a page had before its first event and an event took away are read as the page
    # had them, hash routes included (events.py)
    "browser_event_hidden_links": True,
    # the share of a page's event budget and time kept for delegated clicks (a framework's
    # tabs and menus) while its own handlers are left; what they leave goes back (events.py)
    "browser_event_delegated_share": 0.25,
    # a document's hash routes are no longer rendered (but a few) once 2 × browser_min_renders
    # of them were judged and fewer than this share added anything (detect.worth_routing; 0: off)
    "browser_route_share": 0.25,
    # ... and a hash route whose template (a record's view) was rendered idle, but a few
    # (detect.worth_routing)
    "browser_route_templates": True,
    # a render's script GET of a URL the crawl read over plain HTTP already adds nothing
    # (detect.BrowserPolicy.read_plain)
    "browser_judge_read": True,
    # a rendered form a script listens to is submitted by page actions (scripts.SCRIPTED_FORMS_JS)
    "browser_scripted_forms": True,
    "browser_page_reuse": 25,  # requests served by one page before it is closed
    "browser_reuse_body": True,  # a rerender gets the body fetched over plain HTTP
    # ... written into a page already on the site: off, a page's top-level const/let/class
    # outlive document.open, so the same script fails on the next page (docs/design-notes.md)
    "browser_same_document": False,
    # a hash route of a document a pooled page shows is rendered there by a hash change, not a
    # new load of the app (hiddenweb.browser.hop)
    "browser_route_hop": True,
    # a page's request in flight for 5 s or more (a shared worker's script, a long poll) and
    # an EventSource's stream are not waited for (hiddenweb.browser.guard.Guard.in_flight)
    "browser_long_requests": True,
    "browser_event_seconds": 8.0,  # firing one page's events stops after this (and its budget)
    "browser_event_wait": 1.0,  # after each event, wait at most this for the page's requests
    # an event answered by a dialog alone ("one request at a time") is fired once more after
    # the page's requests end, awaited at most this long (0: never): hiddenweb.browser.events
    "browser_event_retry": 3.0,
    "browser_scroll_seconds": 6.0,  # scrolling a page (its load-more clicks too) stops after this
    "browser_timer_horizon": 5.0,  # a page's timers due within this many seconds run early
    "lvs_learn": 30,  # values learnt from result pages per form (0: off)
    # blind budgets an endpoint with no result spends before the rule retires it; 0: never
    # (it runs to its limit: a search box whose few words come late lost 8 of 37 pages at 2)
    "stop_blind_rounds": 0,
    "stop_window": 30,  # HIDDENWEB_STOP_MASS reads a form's missing mass over its last N answers
    "estimate_trace": "",  # a JSON-lines file: the hidden-left estimate as it changes
    "render_trace": "",  # a JSON-lines file: each re-render judged (browser/renders.py)
    # a new page is a success (rewarded; a form's value paid) only when the set of texts it
    # shows is new: not another order or an echo of the query (hiddenweb.pagetext.ShownText)
    "novelty": True,
    # the stale rule counts a form's answer its explorer judged new (a new set of known records)
    # as fresh even when it shows no new word (hiddenweb.stale)
    "stale_answer_verdict": False,
    # the stale rule asks the scheduler to serve a new form's queued first submissions first
    # and waits for them (AWAIT_SECONDS at most) before it closes (hiddenweb.stale)
    "stale_wait_queued_answers": True,
    # the stale rule counts a form's answers as a kind of page of their own (its endpoint), not
    # by their URL's path: a productive form's queued submissions are served before it closes
    "stale_form_kinds": True,
    # the stale rule counts a page whose only new words are numerals its URL does not carry (a
    # search's hit counts, a facet's) as neither fresh nor stale: it does not restart the run.
    # Off: on Trac the limit, reached more often, lifted form answers ahead of ticket pages
    # (docs/design-notes.md)
    "stale_numbers_neutral": False,
    # at its limit, the stale rule pauses the engine for awaited reads in flight only when no
    # request of a mostly fresh kind of page waits (the crawl is about to close); else those
    # are read meanwhile (hiddenweb.stale)
    "stale_hold_only_closing": True,
    # a kind of page (the stale rule's) has its query's keys: /wiki/*?version, another view of
    # a wiki page, is not /wiki/*; /doku.php?id is not /doku.php?do&id&q (hiddenweb.stale).
    # Off: each facet combination of a Datasette table became a kind fresh by its numbers, and
    # the crawl deferred its close to twice the window (docs/design-notes.md)
    "stale_query_kinds": False,
    # the stale rule counts a browser render that added something to follow no earlier render
    # added (a link, frame or form its plain copy lacked, a new script request) as fresh, even
    # with no new word: a chain of pages each linked only by the render of the one before
    # (hiddenweb.stale)
    "stale_render_added": True,
    # a request of a kind the stale rule asked the scheduler to serve first is awaited from the
    # downloader until read: downloaded and not parsed it waits in no queue, and a crawl closed
    # with the six records it lifted unread (hiddenweb.stale)
    "stale_await_lifted": True,
    # a page reached only through a form, at a path with no query, not a form's answer itself,
    # whose title no page read had, is fresh whatever its words: a record named by known words
    # ("Studio Orchestra 22") is still a record the crawl did not have (hiddenweb.stale)
    "stale_record_titles": True,
    # ... and so is a public page's (a tracker's ticket page, linked from a report that showed
    # its summary). Off: Trac read more of its tickets' own pages, but Roundup 56 % more
    # requests and the proving ground's plain crawl 51 % more downloads (docs/design-notes.md)
    "stale_public_titles": False,
}
