"""An endless stream is not a page: its download stops at its headers (:mod:`hiddenweb.streams`).

A real server on 127.0.0.1 whose ``/events`` is a server-sent event stream it never ends (a
comment every 0.2 s) and whose ``/cam`` is a replacing multipart stream; the home page links
both. Without the extension each holds a download slot until ``DOWNLOAD_TIMEOUT`` and is lost;
with it, each is answered at its headers and the crawl reads the rest of the site."""

from __future__ import annotations

import time
from pathlib import Path
from urllib.parse import urlsplit

from crawlrun import run_crawl  # tests/ is on sys.path (rootdir)
from localsite import SiteHandler, serve
from scrapy.http import Headers

from hiddenweb.streams import is_stream

HOME = (b'<html><title>home</title><body><a href="/events">live events</a>'
        b' <a href="/cam">camera</a> <a href="/about">about</a></body></html>')


class Streams(SiteHandler):
    def do_GET(self) -> None:  # noqa: N802
        self.log.append(self.path)
        path = urlsplit(self.path).path
        if path == "/":
            return self._send(HOME)
        if path == "/about":
            return self._send(b"<html><title>about</title><p>A site with streams.</p></html>")
        if path in ("/events", "/cam"):
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream" if path == "/events"
                             else "multipart/x-mixed-replace; boundary=frame")
            self.end_headers()
            try:
                for _ in range(300):  # a minute, unless the client goes
                    self.wfile.write(b": tick\n\n" if path == "/events"
                                     else b"--frame\r\nContent-Type: text/plain\r\n\r\nx\r\n")
                    self.wfile.flush()
                    time.sleep(0.2)
            except OSError:
                pass
            self.close_connection = True
            return None
        return self._send(b"", "text/plain", 404)


def _crawl(tmp_path: Path, stop: bool):
    with serve(Streams) as url:
        run = run_crawl(tmp_path, "-a", f"seed={url}/", timeout=300, settings={
            "HIDDENWEB_BROWSER": "never", "HIDDENWEB_STOP_STREAMS": str(int(stop)),
            "DOWNLOAD_TIMEOUT": "4", "RETRY_TIMES": "1", "LOG_LEVEL": "INFO"})
        log = [urlsplit(p).path for p in Streams.log]
    assert run.returncode == 0, run.stderr[-3000:]
    return run, log


def test_a_stream_is_recognised_by_its_media_type():
    assert is_stream(Headers({"Content-Type": "text/event-stream; charset=utf-8"}))
    assert is_stream(Headers({"Content-Type": "Multipart/X-Mixed-Replace; boundary=f"}))
    assert not is_stream(Headers({"Content-Type": "text/html"}))
    assert not is_stream(Headers({}))


def test_a_stream_s_download_stops_at_its_headers(tmp_path: Path):
    run, log = _crawl(tmp_path / "on", stop=True)
    stats = run.stats
    assert stats["hiddenweb/streams_stopped"] == 2, stats
    assert not stats.get("retry/count"), stats  # answered at the headers, not timed out
    assert log.count("/events") == 1 and log.count("/cam") == 1, log
    assert "/about" in {urlsplit(i["url"]).path for i in run.items}
    # off: each stream is held until the download timeout, asked again, and lost
    run, log = _crawl(tmp_path / "off", stop=False)
    stats = run.stats
    assert not stats.get("hiddenweb/streams_stopped"), stats
    assert stats.get("retry/max_reached") == 2, stats
    assert log.count("/events") == 2 and log.count("/cam") == 2, log
