"""HTTP server of the proving ground: stdlib ``ThreadingHTTPServer``, HTTP/1.1 keep-alive.

Pages are rendered on request by :meth:`SiteModel.render`. The server adds what the model does
not know about: the slow pages' delay, a latency added to every answer (``latency``: a remote
site as a polite crawler meets it, for ``hiddenweb bench distributed``), and the counters of
``GET /__hw/stats`` (reset by ``POST /__hw/reset``; neither is ever linked)::

    {"requests": n, "distinct_requests": n,
     "trap_submissions": {"login": n, "contact": n, "delete": n},
     "robots_disallowed_fetches": n, "offsite": 0}

(``distinct_requests``: requests counted once per method, target and body.)

``offsite`` is always 0: requests to other hosts never reach this server.
"""

from __future__ import annotations

import json
import socket
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from hiddenweb.bench.provingground.html import TRAP_NAMES
from hiddenweb.bench.provingground.site import SiteModel

MAX_BODY = 1 << 20


class _Stats:
    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.reset()

    def reset(self) -> None:
        self.requests = 0
        self.distinct: set[int] = set()
        self.traps = {"login": 0, "contact": 0, "delete": 0}
        self.disallowed = 0

    def as_dict(self) -> dict:
        with self.lock:
            return {
                "requests": self.requests,
                "distinct_requests": len(self.distinct),
                "trap_submissions": dict(self.traps),
                "robots_disallowed_fetches": self.disallowed,
                "offsite": 0,
            }


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "hiddenweb-provingground/1"
    server: _Server

    def log_message(self, format, *args) -> None:  # quiet
        pass

    def _send(self, status: int, headers: dict[str, str], body: bytes, head: bool = False) -> None:
        self.send_response(status)
        for k, v in headers.items():
            self.send_header(k, v)
        self.send_header("Content-Length", str(len(body)))
        # one write for head and body (end_headers() would send them apart: with keep-alive,
        # Nagle + delayed ACK then cost ~40 ms a response)
        self._headers_buffer.append(b"\r\n")
        if not head:
            self._headers_buffer.append(body)
        self.flush_headers()

    def setup(self) -> None:
        super().setup()
        self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    def _handle(self, method: str) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(min(length, MAX_BODY)) if length > 0 else b""
        path = self.path
        if path.startswith("http://") or path.startswith("https://"):  # absolute-form target
            path = "/" + path.split("/", 3)[3] if path.count("/") >= 3 else "/"
        bare = path.split("?", 1)[0]
        stats = self.server.stats
        if bare.startswith("/__hw/"):
            if bare == "/__hw/stats" and method in ("GET", "HEAD"):
                data = json.dumps(stats.as_dict()).encode()
                return self._send(200, {"Content-Type": "application/json"}, data, method == "HEAD")
            if bare == "/__hw/reset" and method == "POST":
                with stats.lock:
                    stats.reset()
                return self._send(200, {"Content-Type": "application/json"}, b'{"ok": true}')
            return self._send(404, {"Content-Type": "text/plain"}, b"not found", method == "HEAD")
        site = self.server.site
        with stats.lock:
            stats.requests += 1
            stats.distinct.add(hash((method, path, body)))
            if bare.startswith("/private/"):
                stats.disallowed += 1
            if method == "POST" and bare in TRAP_NAMES and site.traps:
                stats.traps[TRAP_NAMES[bare]] += 1
        delay = site.delay(path) + self.server.latency
        if delay:
            time.sleep(delay)
        try:
            status, headers, page = site.render(
                "GET" if method == "HEAD" else method, path, body, dict(self.headers)
            )
        except Exception:  # a bug in the model must not kill the connection silently
            status, headers, page = 500, {"Content-Type": "text/plain"}, b"internal error"
        self._send(status, headers, page, method == "HEAD")

    def do_GET(self) -> None:
        self._handle("GET")

    def do_HEAD(self) -> None:
        self._handle("HEAD")

    def do_POST(self) -> None:
        self._handle("POST")


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True
    request_queue_size = 128

    def __init__(self, site: SiteModel, host: str, port: int, latency: float = 0.0) -> None:
        self.site = site
        self.latency = latency
        self.stats = _Stats()
        super().__init__((host, port), _Handler)

    def handle_error(self, request, client_address) -> None:
        """A client that went away (a crawler killed by ``bench chaos``) is no error."""
        import sys

        if isinstance(sys.exc_info()[1], ConnectionError):
            return
        super().handle_error(request, client_address)


class RunningServer:
    """A server running in a daemon thread (see :func:`serve_in_thread`)."""

    def __init__(self, server: _Server, thread: threading.Thread | None) -> None:
        self._server = server
        self._thread = thread
        self.site = server.site
        self.host = server.server_address[0]
        self.port = server.server_address[1]
        self.url = f"http://{self.host}:{self.port}"

    def stats(self) -> dict:
        return self._server.stats.as_dict()

    def reset(self) -> None:
        """Zero the counters (same as ``POST /__hw/reset``)."""
        with self._server.stats.lock:
            self._server.stats.reset()

    reset_stats = reset

    def shutdown(self) -> None:
        self._server.shutdown()
        self._server.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)

    def __enter__(self) -> RunningServer:
        return self

    def __exit__(self, *exc) -> None:
        self.shutdown()


def make_server(site: SiteModel, host: str = "127.0.0.1", port: int = 0,
                latency: float = 0.0) -> RunningServer:
    return RunningServer(_Server(site, host, port, latency), None)


def serve_in_thread(site: SiteModel, host: str = "127.0.0.1", port: int = 0) -> RunningServer:
    """Serve ``site`` from a daemon thread; ``port=0`` picks a free port (see ``.port``)."""
    server = _Server(site, host, port)
    thread = threading.Thread(
        target=server.serve_forever,
        kwargs={"poll_interval": 0.1},
        name="provingground-server",
        daemon=True,
    )
    running = RunningServer(server, thread)
    thread.start()
    return running


def serve_forever(site: SiteModel, host: str = "127.0.0.1", port: int = 0, ready=None,
                  latency: float = 0.0) -> None:
    """Serve ``site`` in this thread until interrupted; ``ready(running_server)`` is called once
    the socket is bound (e.g. to print the URL); every answer waits ``latency`` seconds."""
    running = make_server(site, host, port, latency)
    if ready is not None:
        ready(running)
    try:
        running._server.serve_forever(poll_interval=0.2)
    finally:
        running._server.server_close()
