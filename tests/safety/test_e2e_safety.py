"""End to end: `scrapy crawl hwdla` against a page of unsafe forms and links written for this test,
served on 127.0.0.1 by a server that logs every request it gets. Every unsafe target lives under
``/u/``, every safe one under ``/s/``; the figures are counted from the server's own log.

* plain crawl: no request to ``/u/`` at all, while the safe forms on the same page are submitted;
* the same crawl with every class opted in (``HIDDENWEB_FORMS_ALLOW``): the unsafe forms and links
  *are* sent, so the page really tempts the crawler (the test is not vacuous);
* ``-a recrawl=1`` over a visit store holding the unsafe requests an older, unsafe crawl made (the
  issue's order-form POSTs with their CSRF tokens, GET "delete my account" links…): nothing unsafe
  is replayed, the safe stored pages are.
"""

from __future__ import annotations

import subprocess
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import urlsplit

import pytest
from crawlrun import run_crawl  # tests/ is on sys.path (rootdir)

from hiddenweb.safety import FORM_CLASSES
from hiddenweb.store import Visit, VisitStore

TOKEN = "c2VjcmV0LWNzcmYtdG9rZW4tMTIzNDU2Nzg5MA"
BULK_DELETE = "delete_selected"  # a safe form's unsafe choice: never in a request body
UNSAFE_FORMS = [
    # login, also a text field merely labelled "Password"
    '<form method="post" action="/u/session"><input name="name"><input type="password" '
    'name="pw"><button>Sign in</button></form>',
    '<form method="post" action="/u/1"><label for="a">Author</label><input id="a" name="name">'
    '<label for="p">Password</label><input id="p" name="p"><button>Continue</button></form>',
    '<form action="/u/2"><input name="name"><input type="password" name="pw"><button>OK'
    '</button></form>',
    # sign-up, password reset
    '<form method="post" action="/u/3"><input name="name"><input type="password" name="a">'
    '<input type="password" name="b"><button>Create account</button></form>',
    '<form method="post" action="/u/4"><p>Forgot your password?</p><input name="name">'
    '<button>Reset password</button></form>',
    '<form action="/u/5"><input name="name"><button>Passwort vergessen?</button></form>',
    # commerce
    f'<form method="post" action="/u/order"><input type="hidden" name="csrf" value="{TOKEN}">'
    '<label>Name <input name="name"></label><select name="qty"><option>1</option><option>2'
    '</option></select><button>Place order</button></form>',
    '<form method="post" action="/u/6"><select name="to"><option>bob</option></select>'
    '<select name="amount"><option>100</option></select><button>Send money</button></form>',
    '<form method="post" action="/u/7"><input type="hidden" name="id" value="5"><select '
    'name="size"><option>M</option></select><button>Buy now</button></form>',
    '<form action="/u/8"><input type="hidden" name="id" value="5"><select name="n"><option>1'
    '</option></select><button>Add to cart</button></form>',
    '<form method="post" action="/u/9"><select name="plan"><option>a</option></select>'
    '<button>Jetzt kaufen</button></form>',
    '<form method="post" action="/u/10"><select name="x"><option>1</option></select>'
    '<button>Ajouter au panier</button></form>',
    '<form action="/u/11"><select name="x"><option>1</option></select><button>Transfer funds'
    '</button></form>',
    # contact, subscribe, vote
    '<form method="post" action="/u/12"><input name="name"><textarea name="message">'
    '</textarea><button>Send</button></form>',
    '<form method="post" action="/u/13"><input type="email" name="email"><button>Subscribe'
    '</button></form>',
    '<form action="/u/14"><select name="list"><option>news</option></select><button>'
    'Newsletter abonnieren</button></form>',
    '<form method="post" action="/u/15"><input type="radio" name="c" value="a"><input '
    'type="radio" name="c" value="b"><button>Vote</button></form>',
    '<form method="post" action="/u/16"><input type="radio" name="c" value="a"><input '
    'type="radio" name="c" value="b"><button>Submit</button></form>',
    # destructive
    '<form method="post" action="/u/account/delete"><input type="checkbox" name="confirm">'
    '<button>Delete my account</button></form>',
    '<form method="post" action="/u/17"><input type="hidden" name="_method" value="DELETE">'
    '<select name="x"><option>1</option></select><button>Go</button></form>',
    '<form action="/u/18"><input type="hidden" name="action" value="unsubscribe"><select '
    'name="x"><option>1</option></select><button>OK</button></form>',
    '<form method="post" action="/u/19"><select name="x"><option>1</option></select><button>'
    'Cancel order</button></form>',
    '<form method="post" action="/u/20"><select name="x"><option>1</option></select><button>'
    'Konto löschen</button></form>',
    '<form method="post" action="/u/21"><select name="x"><option>1</option></select><button>'
    'Se déconnecter</button></form>',
    # unknown by POST: personal data only
    '<form method="post" action="/u/22"><input name="name"><input name="city"><button>Save'
    '</button></form>',
    # its default choice is an action
    '<form method="post" action="/u/23"><select name="do"><option value="mark_all_read">Mark '
    'all as read</option><option value="none">Nothing</option></select><button>Go</button>'
    '</form>',
]
UNSAFE_LINKS = [
    '<a href="/u/account/delete?confirm=1">Delete my account</a>',
    '<a href="/u/logout">Log out</a>', '<a href="/u/30">Sign out</a>',
    '<a href="/u/cart/remove?item=3">Remove item</a>', '<a href="/u/31">Unsubscribe</a>',
    '<a href="/u/32">Cancel order</a>', '<a href="/u/33">Buy now</a>',
    '<a href="/u/34?to=bob&amount=100">Transfer £100</a>', '<a href="/u/35">Vote for A</a>',
    '<a href="/u/36">Jetzt kaufen</a>', '<a href="/u/37">Supprimer</a>',
    '<a href="/u/38" data-method="delete">Tidy up</a>',
    '<a href="/u/39" title="Delete this photo"><img src="/s/x.png" alt=""></a>',
    '<a href="/u/40">Add to cart</a>', '<a href="/u/41">Pay</a>',
]
SAFE_FORMS = [
    '<form action="/s/search"><label for="k">Keyword</label><input id="k" name="q">'
    '<button>Search</button></form>',
    f'<form method="post" action="/s/filter"><input type="hidden" name="csrf" value="{TOKEN}">'
    '<select name="category"><option>tools</option><option>toys</option></select>'
    '<button>Filter</button></form>',
    # a trap button first, the search button second
    '<form action="/s/old"><input name="q"><button name="op" value="clear" formmethod="post" '
    'formaction="/u/saved/delete">Delete saved searches</button><button formaction="/s/find">'
    'Search</button></form>',
    # a bulk-action form: sent, but never with its "Delete selected" choice (BULK_DELETE)
    '<form method="post" action="/s/bulk"><select name="action"><option value="">---------'
    f'</option><option value="{BULK_DELETE}">Delete selected items</option><option '
    'value="export">Export selected</option></select><input type="checkbox" name="_selected" '
    'value="7"><button>Go</button></form>',
    # an export form with a "Cancel" link beside its button: the link does not submit the
    # form, so its word does not refuse it; the link itself is refused (CANCEL_LINKS)
    '<form method="post" action="/s/export"><select name="format"><option>json</option>'
    '<option>csv</option></select><button>Export</button><a href="/u/back">Cancel</a></form>',
]
CANCEL_LINKS = 1  # links inside SAFE_FORMS the policy refuses
SAFE_LINKS = ['<a href="/s/page/2">Next page</a>', '<a href="/s/contact">Contact us</a>']


def page() -> bytes:
    parts = UNSAFE_FORMS + UNSAFE_LINKS + SAFE_FORMS + SAFE_LINKS
    return ("<html><head><title>Hostile</title></head><body>" + "\n".join(parts)
            + "</body></html>").encode()


class _Handler(BaseHTTPRequestHandler):
    def _answer(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length).decode() if length else ""
        self.server.log.append((self.command, self.path, body))
        path = urlsplit(self.path).path
        if path == "/robots.txt":
            self.send_response(404)
            self.end_headers()
            return
        html = page() if path == "/" else f"<html><body>{path}</body></html>".encode()
        self.send_response(200)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(html)))
        self.end_headers()
        self.wfile.write(html)

    do_GET = do_POST = _answer

    def log_message(self, *args) -> None:  # quiet
        pass


@pytest.fixture
def server():
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    httpd.log = []
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield httpd
    finally:
        httpd.shutdown()
        httpd.server_close()


def url_of(httpd) -> str:
    return f"http://127.0.0.1:{httpd.server_address[1]}"


def unsafe(log) -> list:
    """Requests to an unsafe target, or carrying an unsafe choice of a safe form."""
    return [r for r in log if urlsplit(r[1]).path.startswith("/u/") or BULK_DELETE in r[2]]


def safe(log) -> set[tuple[str, str]]:
    return {(m, urlsplit(p).path) for m, p, _ in log if urlsplit(p).path.startswith("/s/")}


SETTINGS = {"HIDDENWEB_BROWSER": "never", "LOG_LEVEL": "INFO", "HIDDENWEB_KEEP_TOKENS": "0"}


def test_the_page_has_at_least_30_unsafe_forms_and_links():
    assert len(UNSAFE_FORMS) + len(UNSAFE_LINKS) >= 30


def test_plain_crawl_sends_nothing_unsafe_and_the_safe_forms(server, tmp_path):
    run = run_crawl(tmp_path, "-a", f"seed={url_of(server)}/", settings=SETTINGS)
    assert run.returncode == 0, run.stderr[-3000:]
    assert unsafe(server.log) == []
    sent = safe(server.log)
    assert {("GET", "/s/search"), ("POST", "/s/filter"), ("GET", "/s/find"),
            ("POST", "/s/bulk"), ("POST", "/s/export")} <= sent, sent
    assert {("GET", "/s/page/2"), ("GET", "/s/contact")} <= sent
    # the CSRF token was sent, and is kept neither on the item nor in the store
    assert any(TOKEN in body for m, p, body in server.log if p == "/s/filter")
    posted = [i["reached_by"]["form"] for i in run.items
              if i["method"] == "POST" and urlsplit(i["url"]).path == "/s/filter"]
    assert posted and all(f["redacted"] == ["csrf"] and "csrf" not in f["fields"]
                          for f in posted)
    stats = run.stats
    assert stats["hiddenweb/safety/forms_refused"] == len(UNSAFE_FORMS)
    assert stats["hiddenweb/safety/links_refused"] == len(UNSAFE_LINKS) + CANCEL_LINKS
    assert stats["hiddenweb/safety/buttons_refused"] == 1  # "Delete saved searches"
    refused = sum(v for k, v in stats.items() if k.startswith("hiddenweb/safety/refused/"))
    assert refused == len(UNSAFE_FORMS) + len(UNSAFE_LINKS) + CANCEL_LINKS + 1
    print(f"plain crawl: {len(UNSAFE_FORMS)} unsafe forms, {len(UNSAFE_LINKS)} unsafe links, "
          f"0 requests to them; safe requests {sorted(sent)}")
    # the crawl report says what was refused, by reason
    db = tmp_path / "empty.db"
    VisitStore(db).close()
    out = subprocess.run([sys.executable, "-m", "hiddenweb.cli", "report", "--db", str(db),
                          "-o", str(tmp_path / "report"), "--stats", str(tmp_path / "stats.json")],
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    page = (tmp_path / "report" / "index.html").read_text()
    assert "Refused by the safety policy" in page
    assert f"{len(UNSAFE_LINKS) + CANCEL_LINKS} links" in page
    assert "<td>destructive</td>" in page and "<td>payment</td>" in page
    skipped = page.split("<h2>Forms not submitted</h2>")[1]  # every form not sent, by reason
    assert "<td>login</td>" in skipped and "<td>destructive</td>" in skipped


@pytest.mark.browser
@pytest.mark.skipif(not Path("/usr/bin/chromium").exists(), reason="needs Debian's Chromium")
def test_browser_crawl_sends_nothing_unsafe(server, tmp_path):
    """Every page in Chromium (``HIDDENWEB_BROWSER=always``): forms submitted through it too."""
    run = run_crawl(tmp_path, "-a", f"seed={url_of(server)}/",
                    settings={**SETTINGS, "HIDDENWEB_BROWSER": "always",
                              "HIDDENWEB_BROWSER_TIMEOUT": "10", "CLOSESPIDER_TIMEOUT": "150"})
    assert run.returncode == 0, run.stderr[-3000:]
    assert unsafe(server.log) == []
    assert {("GET", "/s/search"), ("POST", "/s/filter")} <= safe(server.log)
    assert run.stats["hiddenweb/browser/pages"] > 0
    print(f"browser crawl: 0 requests to the {len(UNSAFE_FORMS) + len(UNSAFE_LINKS)} unsafe "
          f"targets; safe requests {sorted(safe(server.log))}")


def test_the_page_tempts_a_crawler_that_allows_everything(server, tmp_path):
    allow = ",".join(FORM_CLASSES)
    run = run_crawl(tmp_path, "-a", f"seed={url_of(server)}/",
                    settings={**SETTINGS, "HIDDENWEB_FORMS_ALLOW": allow})
    assert run.returncode == 0, run.stderr[-3000:]
    targets = {urlsplit(p).path for _, p, _ in unsafe(server.log)}
    assert len(targets) >= 30, sorted(targets)
    print(f"everything allowed: {len(unsafe(server.log))} unsafe requests to {len(targets)} "
          "unsafe targets")


def test_recrawl_replays_nothing_unsafe(server, tmp_path):
    base = url_of(server)
    store = tmp_path / "store.db"
    settings = {**SETTINGS, "HIDDENWEB_STORE_ENABLED": "1", "HIDDENWEB_STORE_PATH": str(store)}
    run = run_crawl(tmp_path / "a", "-a", f"seed={base}/", settings=settings)
    assert run.returncode == 0, run.stderr[-3000:]
    assert unsafe(server.log) == []
    for part in tmp_path.glob("store.db*"):  # the file and its WAL: no token in the store
        assert TOKEN.encode() not in part.read_bytes()
    # what an older crawl without the policy left in the store (issue 26: 698 such POSTs)
    old = [("POST", "/u/order", {"csrf": TOKEN, "name": "Ada Lovelace", "qty": "1"}),
           ("POST", "/u/6", {"to": "bob", "amount": "100"}),
           ("POST", "/u/13", {"email": "a@example.com"}),
           ("POST", "/u/1", {"name": "Ada", "p": "Grace Hopper"}),
           ("POST", "/u/17", {"_method": "DELETE", "x": "1"}),
           ("POST", "/u/22", {"name": "Ada", "city": "Raleigh"}),
           ("GET", "/u/account/delete?confirm=1", None), ("GET", "/u/logout", None),
           ("GET", "/u/cart/remove?item=3", None), ("GET", "/u/11?x=1&transfer=1", None)]
    with VisitStore(store) as db:
        db.record([Visit(f"old:{i}", base + path, 0.1, True, 1.0, method=method, form=form)
                   for i, (method, path, form) in enumerate(old)])
    server.log.clear()
    run = run_crawl(tmp_path / "b", "-a", "recrawl=1", settings=settings)
    assert run.returncode == 0, run.stderr[-3000:]
    assert unsafe(server.log) == []
    assert run.stats["hiddenweb/safety/replays_refused"] == len(old)
    print(f"recrawl: {len(old)} unsafe stored requests refused, 0 replayed; "
          f"{len(safe(server.log))} safe requests replayed")
    assert {("GET", "/s/search"), ("POST", "/s/filter")} <= safe(server.log)
