"""Links marked ``rel="nofollow"`` go last, in real crawls of a small wiki served on 127.0.0.1.

The wiki (written here, no app's names) has chains of content pages linked in the plain way,
and on every page the links a wiki marks nofollow: edit, history, backlinks, diff, source.
Each kind of those pages shows a small filter form of its own, so the first one of each kind
is rewarded as a page that showed a new form (:mod:`hiddenweb.dla.feedback`): without the rule,
that reward lifts the nofollow template above the content links (capped at ``links:public``),
and a budget of downloads goes to edit and history pages. With it (``dla_nofollow_last``, the
default) every content page is read first and the nofollow pages are still read afterwards.
"""

from __future__ import annotations

import hashlib
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import pytest
from crawlrun import _run  # tests/ is on sys.path (rootdir)

CHAINS, PARTS = 8, 5
ACTIONS = ("edit", "history", "backlinks", "diff", "source")
CONTENT = {"/"} | {f"/page/c{c}-p{p}" for c in range(CHAINS) for p in range(1, PARTS + 1)}


def words(name: str) -> str:
    """Words of a page's own (no digits: the trap guard reads pages without them)."""
    code = int(hashlib.sha1(name.encode()).hexdigest(), 16)
    out = []
    for _ in range(4):
        code, a = divmod(code, 26)
        code, b = divmod(code, 26)
        out.append("w" + chr(97 + a) + chr(97 + b) + "x")
    return " ".join(out)


def page_html(path: str, action: str | None) -> str:
    name = "home" if path == "/" else path.rsplit("/", 1)[1]
    if action:  # a tool page: its own text and a filter form of its kind
        options = "".join(f'<option value="{n}">{n}</option>' for n in (1, 2))
        body = (f"<h1>{action} of {name}</h1><p>The {action} view: {words(name + action)}.</p>"
                f'<form action="{path}" method="get">'
                f'<input type="hidden" name="action" value="{action}">'
                f'<select name="{action}_rev">{options}</select>'
                f'<button type="submit">Show</button></form>')
    else:
        if name == "home":
            links = [f"/page/c{c}-p1" for c in range(CHAINS)]
        else:
            chain, part = name[1:].split("-p")
            links = [f"/page/c{chain}-p{int(part) + 1}"] if int(part) < PARTS else []
        body = (f"<h1>{name}</h1><p>Text of the page: {words(name)}.</p>"
                + "".join(f'<a href="{href}">next {href}</a> ' for href in links)
                + '<a href="/">home</a>')
    tools = "".join(f'<li><a href="{path}?action={a}" rel="nofollow">{a}</a></li>'
                    for a in ACTIONS)
    return (f"<!doctype html><html><head><title>{name} {action or ''}</title></head><body>"
            f"{body}<ul class=tools>{tools}</ul></body></html>")


class Wiki(BaseHTTPRequestHandler):
    def do_GET(self) -> None:  # noqa: N802 (http.server's name)
        parts = urlsplit(self.path)
        if parts.path not in CONTENT:
            self.send_error(404)
            return
        action = parse_qs(parts.query).get("action", [None])[0]
        body = page_html(parts.path, action if action in ACTIONS else None).encode()
        self.send_response(200)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture(scope="module")
def wiki() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), Wiki)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_port}"
    finally:
        server.shutdown()
        server.server_close()


def crawl(wiki: str, tmp_path: Path, nofollow_last: bool, steps: int) -> list[dict]:
    run = _run(tmp_path, "-a", f"seed={wiki}/",
               settings={"HIDDENWEB_BROWSER": "never",
                         "HIDDENWEB_LAB": {"dla_nofollow_last": nofollow_last,
                                           "dla_max_steps": steps}})
    assert run.returncode == 0, run.stderr[-3000:]
    return sorted(run.items, key=lambda item: item["downloads"])


def content_found(items: list[dict]) -> set[str]:
    return {urlsplit(i["url"]).path for i in items
            if i["status"] == 200 and not urlsplit(i["url"]).query} & CONTENT


def test_nofollow_links_wait_for_the_content_links(wiki: str, tmp_path: Path) -> None:
    budget = len(CONTENT) + 10  # every content page and a few more
    items = crawl(wiki, tmp_path / "on", True, budget)
    assert content_found(items) == CONTENT
    nofollow = [i["downloads"] for i in items if "action=" in i["url"]]
    last_content = max(i["downloads"] for i in items if not urlsplit(i["url"]).query)
    assert sum(n < last_content for n in nofollow) <= 2, [i["url"] for i in items]


def test_nofollow_links_are_demoted_not_dropped(wiki: str, tmp_path: Path) -> None:
    items = crawl(wiki, tmp_path / "all", True, 0)  # no budget: the whole wiki
    tools = {i["url"].split("/", 3)[3] for i in items if "action=" in i["url"]}
    assert len(tools) >= len(CONTENT) * len(ACTIONS)


def test_without_the_rule_the_budget_goes_to_nofollow_pages(wiki: str, tmp_path: Path) -> None:
    """The regression the rule fixes: tool pages, rewarded for their forms, outrank content."""
    items = crawl(wiki, tmp_path / "off", False, len(CONTENT) + 10)
    assert len(content_found(items)) < len(CONTENT)
