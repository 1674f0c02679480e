"""A crawl looks up no host off this machine, not even for Scrapy's public suffix list
(:mod:`hiddenweb.suffixlist`). Every name the crawl process resolves is recorded by a
``sitecustomize`` wrapper of ``socket.getaddrinfo`` (a non-local name is refused, so nothing
leaves the machine whatever the outcome), with an empty ``tldextract`` cache; the site, served
on 127.0.0.1, sets a cookie, which makes Scrapy's cookies middleware ask ``tldextract``."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from crawlrun import ROOT, run_crawl  # tests/ is on sys.path (rootdir)
from localsite import SiteHandler, serve

from hiddenweb.suffixlist import ENV

SITECUSTOMIZE = '''
import os, socket
_real = socket.getaddrinfo
_LOCAL = {"127.0.0.1", "localhost", "::1", "0.0.0.0", ""}

def _recorded(host, *args, **kwargs):
    name = host.decode() if isinstance(host, bytes) else str(host or "")
    if name not in _LOCAL:
        with open(os.environ["LOOKUPS_FILE"], "a") as out:
            out.write(name + "\\n")
        raise socket.gaierror(socket.EAI_NONAME, "refused by the test: " + name)
    return _real(host, *args, **kwargs)

socket.getaddrinfo = _recorded
'''


class CookiePages(SiteHandler):
    def do_GET(self) -> None:  # noqa: N802 (http.server's name)
        pages = {"/": b"<html><body><a href='/next'>next page</a></body></html>",
                 "/next": b"<html><body><p>the end</p></body></html>"}
        self._send(pages.get(self.path, b"not found"), status=200 if self.path in pages else 404,
                   headers={"Set-Cookie": "session=1; Path=/"})


def _watched(tmp_path: Path) -> tuple[dict[str, str], Path]:
    """The environment of a process whose name look-ups are recorded in the returned file."""
    hooks = tmp_path / "hooks"
    hooks.mkdir()
    (hooks / "sitecustomize.py").write_text(SITECUSTOMIZE)
    lookups = tmp_path / "lookups.txt"
    env = {"PYTHONPATH": os.pathsep.join(filter(None, [str(hooks), str(ROOT),
                                                       os.environ.get("PYTHONPATH")])),
           "LOOKUPS_FILE": str(lookups), "XDG_CACHE_HOME": str(tmp_path / "cache")}
    return env, lookups


def _without_switch() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if k != ENV}


def test_scrapys_cookie_check_alone_looks_up_the_suffix_lists_hosts(tmp_path: Path) -> None:
    """The detector works: Scrapy's cookie check, imported without the add-on, resolves
    publicsuffix.org (the behaviour the add-on turns off)."""
    env, lookups = _watched(tmp_path)
    code = ("from scrapy.downloadermiddlewares.cookies import _is_public_domain\n"
            "print(_is_public_domain('co.uk'), _is_public_domain('example.co.uk'))")
    proc = subprocess.run([sys.executable, "-c", code], env={**_without_switch(), **env},
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.split() == ["True", "False"]  # the bundled list, once the fetch failed
    assert "publicsuffix.org" in lookups.read_text().split()


def test_a_crawl_that_gets_cookies_resolves_no_host_off_the_machine(tmp_path, monkeypatch):
    env, lookups = _watched(tmp_path)
    # unset, as on a user's machine (an in-process crawl of another test may have set it)
    monkeypatch.delenv(ENV, raising=False)
    with serve(CookiePages) as base:
        cookie_site = f"{base}/"
        run = run_crawl(tmp_path, "-a", f"seed={cookie_site}",
                        settings={"HIDDENWEB_BROWSER": "never", "LOG_LEVEL": "INFO"}, env=env)
    assert run.returncode == 0, run.stderr[-3000:]
    read = {item["url"] for item in run.items if item["status"] == 200}
    assert read == {cookie_site, cookie_site + "next"}  # the cookie came with the first
    assert not lookups.exists() or lookups.read_text() == ""
    assert "Public Suffix List" not in run.stderr


def test_a_suffix_list_source_the_environment_names_is_kept(monkeypatch) -> None:
    from hiddenweb.suffixlist import keep_suffix_list_local

    monkeypatch.setenv(ENV, "file:///srv/psl.dat")
    assert keep_suffix_list_local() is False and os.environ[ENV] == "file:///srv/psl.dat"
    monkeypatch.delenv(ENV)
    assert keep_suffix_list_local() is True and os.environ[ENV] == ""
