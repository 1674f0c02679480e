"""The logging reverse proxy and the server lifecycle, with real processes on loopback."""

from __future__ import annotations

import sys
import threading
import time
import urllib.error
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from hiddenweb.bench.realsites.runner import wait_port
from hiddenweb.bench.realsites.scoring import read_log
from hiddenweb.bench.realsites.servers import Servers, free_port


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
        wait_port(port)
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
