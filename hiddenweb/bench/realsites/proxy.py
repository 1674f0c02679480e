"""A logging reverse proxy on loopback: what an app received and what it answered, in order.

``python -m hiddenweb.bench.realsites.proxy --port P --upstream http://127.0.0.1:Q --log FILE``
listens on ``127.0.0.1:P`` only, forwards every request unchanged (the ``Host`` header
included, so the app builds its URLs with the proxy's port) to the app, never follows
redirects, rewrites a ``Location`` that names the app's own port to the proxy's, and appends one
JSON line per request to ``FILE``:

``{"i": n, "t": seconds since start, "method", "path" (path and query), "status",
"ctype" (response Content-Type), "req_ctype", "req_body" (request body as text, at most
64 KiB), "body" (response text when textual and at most 4 MiB, else "")}``

Nothing is forwarded anywhere but the upstream, itself on 127.0.0.1.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import time
from urllib.parse import urlsplit

from aiohttp import ClientSession, ClientTimeout, web

HOP = {"connection", "keep-alive", "proxy-authenticate", "proxy-authorization", "te",
       "trailers", "transfer-encoding", "upgrade", "content-length", "content-encoding"}
TEXTUAL = ("text/", "application/json", "application/javascript", "application/xml",
           "application/xhtml", "application/x-tiddler")
MAX_BODY = 4 * 1024 * 1024
MAX_REQ_BODY = 64 * 1024


def make_app(upstream: str, port: int, log_path: str) -> web.Application:
    up = urlsplit(upstream)
    if up.hostname not in ("127.0.0.1", "localhost"):
        raise SystemExit(f"proxy: upstream must be on loopback, not {upstream}")
    app_origin = f"{up.scheme}://{up.netloc}"
    start = time.monotonic()
    log = open(log_path, "a", encoding="utf-8")  # noqa: SIM115 (closed on cleanup)
    counter = {"n": 0}

    async def handle(request: web.Request) -> web.StreamResponse:
        body = await request.read()
        headers = {k: v for k, v in request.headers.items() if k.lower() not in HOP}
        headers["Accept-Encoding"] = "identity"
        session: ClientSession = request.app["session"]
        try:
            async with session.request(request.method, app_origin + request.rel_url.raw_path_qs,
                                       headers=headers, data=body or None,
                                       allow_redirects=False) as resp:
                payload = await resp.read()
                status, rheaders = resp.status, resp.headers
        except Exception as exc:  # the app died or timed out: a 502, logged like any answer
            payload, status, rheaders = str(exc).encode(), 502, {}
        out = web.Response(status=status, body=payload)
        for key, value in rheaders.items():
            low = key.lower()
            if low in HOP:
                continue
            if low == "location":
                value = value.replace(f"//{up.netloc}", f"//127.0.0.1:{port}")
            out.headers.add(key, value)
        ctype = rheaders.get("Content-Type", "")
        textual = ctype.startswith(TEXTUAL) or (not ctype and len(payload) < MAX_BODY)
        counter["n"] += 1
        entry = {
            "i": counter["n"], "t": round(time.monotonic() - start, 3),
            "method": request.method, "path": request.rel_url.raw_path_qs, "status": status,
            "ctype": ctype, "req_ctype": request.headers.get("Content-Type", ""),
            "req_body": body[:MAX_REQ_BODY].decode("utf-8", "replace"),
            "body": payload.decode("utf-8", "replace")
            if textual and len(payload) <= MAX_BODY else "",
        }
        log.write(json.dumps(entry) + "\n")
        log.flush()
        return out

    async def on_startup(app: web.Application) -> None:
        app["session"] = ClientSession(timeout=ClientTimeout(total=120), auto_decompress=True)

    async def on_cleanup(app: web.Application) -> None:
        await app["session"].close()
        log.close()

    app = web.Application(client_max_size=64 * 1024 * 1024)
    app.router.add_route("*", "/{tail:.*}", handle)
    app.on_startup.append(on_startup)
    app.on_cleanup.append(on_cleanup)
    return app


#: the line the proxy prints once it listens (``runner.start_site`` waits for it)
READY = "hiddenweb proxy listening on"


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--upstream", required=True)
    parser.add_argument("--log", required=True)
    args = parser.parse_args(argv)
    app = make_app(args.upstream, args.port, args.log)
    asyncio.run(_serve(app, args.port))


async def _serve(app: web.Application, port: int) -> None:
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    await web.TCPSite(runner, "127.0.0.1", port).start()
    # the runner waits for this line: a port that answers may be another process's
    print(f"{READY} 127.0.0.1:{port}", flush=True)
    try:
        await asyncio.Event().wait()
    finally:
        await runner.cleanup()


if __name__ == "__main__":
    main()
