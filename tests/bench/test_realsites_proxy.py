"""The logging reverse proxy and the server lifecycle, with real processes on loopback."""

from __future__ import annotations

import socket
import sys
import threading
import time
import urllib.error
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from hiddenweb.bench.realsites import runner
from hiddenweb.bench.realsites.crawlers import Caps
from hiddenweb.bench.realsites.proxy import READY
from hiddenweb.bench.realsites.scoring import Truth, read_log
from hiddenweb.bench.realsites.servers import ServerError, Servers, free_port
from hiddenweb.bench.realsites.sites.base import Site


class _App(BaseHTTPRequestHandler):
    def log_message(self, *args):  # quiet
        pass

    def do_GET(self):
        if self.path.startswith("/moved"):
            port = self.server.server_address[1]
            self.send_response(302)
            self.send_header("Location", f"http://127.0.0.1:{port}/target")
            self.end_headers()
            return
        body = f"<p>page {self.path} for host {self.headers['Host']}</p>".encode()
        self.send_response(404 if self.path == "/missing" else 200)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_POST(self):
        data = self.rfile.read(int(self.headers["Content-Length"]))
        body = b"posted " + data
        self.send_response(200)
        self.send_header("Content-Type", "text/plain")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


@pytest.fixture
def upstream():
    server = ThreadingHTTPServer(("127.0.0.1", 0), _App)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield server.server_address[1]
    server.shutdown()
    server.server_close()


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args, **kwargs):
        return None


def test_proxy_forwards_logs_every_request_in_order_and_keeps_redirects_on_itself(
        upstream: int, tmp_path: Path):
    port, log = free_port(), tmp_path / "requests.jsonl"
    with Servers() as servers:
        servers.start("proxy", [sys.executable, "-m", "hiddenweb.bench.realsites.proxy",
                                "--port", str(port), "--upstream", f"http://127.0.0.1:{upstream}",
                                "--log", str(log)], tmp_path / "proxy.log")
        assert servers.wait_line("proxy", READY)
        base = f"http://127.0.0.1:{port}"
        with urllib.request.urlopen(f"{base}/a?x=1") as resp:
            page = resp.read().decode()
        assert f"for host 127.0.0.1:{port}" in page  # the Host header goes through unchanged
        with pytest.raises(urllib.error.HTTPError):
            urllib.request.urlopen(f"{base}/missing")
        request = urllib.request.Request(f"{base}/form", data=b"q=cars&go=1", method="POST")
        request.add_header("Content-Type", "application/x-www-form-urlencoded")
        with urllib.request.urlopen(request) as resp:
            assert resp.read() == b"posted q=cars&go=1"
        opener = urllib.request.build_opener(_NoRedirect)
        with pytest.raises(urllib.error.HTTPError) as moved:
            opener.open(f"{base}/moved")
        assert moved.value.headers["Location"] == f"http://127.0.0.1:{port}/target"
        pids = list(servers.started)
    assert not servers.alive() and pids
    entries = list(read_log(log))
    assert [(e.method, e.path, e.status) for e in entries] == [
        ("GET", "/a?x=1", 200), ("GET", "/missing", 404), ("POST", "/form", 200),
        ("GET", "/moved", 302)]
    assert "page /a?x=1" in entries[0].body and entries[1].ok is False
    assert entries[2].req_body == "q=cars&go=1" and entries[2].body == "posted q=cars&go=1"


def test_proxy_refuses_an_upstream_off_loopback(tmp_path: Path):
    from hiddenweb.bench.realsites.proxy import make_app

    with pytest.raises(SystemExit, match="loopback"):
        make_app("http://example.com:80", 1, str(tmp_path / "log"))


def test_servers_stop_every_process_group_on_exit_and_on_interrupt(tmp_path: Path):
    with Servers() as servers:
        # a shell whose child ignores SIGTERM: the group's SIGKILL must get it
        servers.start("stubborn", ["sh", "-c", "trap '' TERM; sleep 60 & wait"],
                      tmp_path / "a.log")
        servers.start("plain", ["sleep", "60"], tmp_path / "b.log")
        deadline = time.monotonic() + 10
        while len(servers.alive()) < 3 and time.monotonic() < deadline:
            time.sleep(0.05)  # the shell forks its sleep in its own time
        assert len(servers.alive()) == 3  # the shell, its sleep, the plain sleep
    assert servers.alive() == []
    with pytest.raises(KeyboardInterrupt), Servers() as servers:
        servers.start("plain", ["sleep", "60"], tmp_path / "c.log")
        raise KeyboardInterrupt
    assert servers.alive() == []


class _StaticSite(Site):
    """A site served by Python's own ``http.server`` from its data directory."""

    name = "static"

    def command(self, data: Path, port: int, public_port: int):
        return ([sys.executable, "-m", "http.server", str(port), "--bind", "127.0.0.1",
                 "--directory", str(data)], data, None)


def test_a_proxy_that_cannot_listen_is_started_again_on_other_ports(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """The public port picked free is taken before the proxy binds it, by a process that
    answers there: the runner does not take the answer for the proxy's; it sees the proxy
    exit, starts the app and proxy again on other ports, and the seed is on the proxy, which
    logs the requests made to it. A proxy that never listens fails the set-up loudly."""
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "index.html").write_text("<p>home</p>")
    other = socket.socket()
    other.bind(("127.0.0.1", 0))
    other.listen()  # another process's server: the port answers
    taken = other.getsockname()[1]
    picks = iter([free_port(), taken])  # the first try's app and proxy ports; then free ones
    monkeypatch.setattr(runner, "free_port", lambda: next(picks, None) or free_port())
    log = tmp_path / "requests.jsonl"
    try:
        with Servers() as servers:
            seed = runner.start_site(servers, _StaticSite(), tmp_path / "data", tmp_path, log)
            assert f":{taken}/" not in seed
            with urllib.request.urlopen(seed, timeout=10) as answer:
                assert b"home" in answer.read()
            deadline = time.monotonic() + 10
            while not (log.exists() and read_log(log)) and time.monotonic() < deadline:
                time.sleep(0.05)
            assert [e.path for e in read_log(log)] == ["/"]
        assert "address already in use" in (tmp_path / "proxy.log").read_text()
        calls = iter(range(100))  # the app's port free, the proxy's never
        monkeypatch.setattr(runner, "free_port",
                            lambda: taken if next(calls) % 2 else free_port())
        with Servers() as servers, pytest.raises(ServerError, match="could not listen"):
            runner.start_site(servers, _StaticSite(), tmp_path / "data", tmp_path, log)
    finally:
        other.close()


def test_wait_line_reads_only_what_the_process_wrote_since_it_started(tmp_path: Path):
    """A log kept from an earlier run holds the line already: not taken for this run's."""
    log = tmp_path / "p.log"
    log.write_text("ready\n")  # an earlier run's
    with Servers() as servers:
        servers.start("quiet", [sys.executable, "-c", "pass"], log)
        assert servers.wait_line("quiet", "ready", timeout=10) is False  # exited, never said
        servers.start("says", [sys.executable, "-c", "print('ready', flush=True)"], log)
        assert servers.wait_line("says", "ready", timeout=10) is True


def test_a_crawler_named_twice_in_one_run_crawls_in_a_directory_of_its_own(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """``--crawlers hwdla,hwdla`` (a crawler's spread, measured in one run): the second crawl
    gets ``hwdla+2``, so that neither overwrites the other's request log, which ``--rescore``
    reads again (the result's ``dir``)."""

    class Tiny(_StaticSite):
        def install(self) -> None:
            pass

        def pristine(self) -> Path:
            return tmp_path

        def truth(self, data: Path) -> Truth:
            return Truth.of([])

    made = []
    monkeypatch.setitem(runner.SITES, "tiny", Tiny)
    monkeypatch.setattr(runner, "crawl_site", lambda site, truth, crawler, workdir, caps,
                        peer, dirname: made.append(dirname) or {"crawler": crawler,
                                                                "dir": dirname})
    results = runner.run(["tiny"], tmp_path / "work", Caps(10, 10),
                         crawlers=("naive", "hwdla", "naive", "naive"))
    assert made == ["naive", "hwdla", "naive+2", "naive+3"]
    assert [c["dir"] for c in results[0]["crawls"]] == made
    assert runner.crawl_dir(tmp_path, "tiny", "naive+2").name == "naive+2"
