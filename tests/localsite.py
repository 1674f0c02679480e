"""A site a test writes itself, served over HTTP/1.1 on 127.0.0.1: subclass :class:`SiteHandler`
(``do_GET``/``do_POST`` answer with :meth:`SiteHandler._send`; ``log`` for what was asked)
and serve it with :func:`serve`."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class SiteHandler(BaseHTTPRequestHandler):
    """Keep-alive, every answer with its Content-Length: with HTTP/1.0 the server closes each
    connection, and a request Scrapy sends on one as it closes fails ("closed cleanly")."""

    protocol_version = "HTTP/1.1"
    log: list = []  # each site's own record of the requests, emptied by serve()

    def log_message(self, *args) -> None:  # quiet
        pass

    def _send(self, body: bytes, ctype: str = "text/html; charset=utf-8", status: int = 200,
              headers: dict | None = None) -> None:
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(body)

    def _json(self, value: object) -> None:
        """Answer ``value`` as a JSON document (an app's API)."""
        self._send(json.dumps(value).encode(), "application/json")


@contextmanager
def serve(handler: type[SiteHandler]) -> Iterator[str]:
    """Serve ``handler`` on a free port (its ``log`` emptied); yield ``http://127.0.0.1:PORT``."""
    handler.log = []
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
