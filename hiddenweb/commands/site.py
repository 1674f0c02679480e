"""``hiddenweb site``: serve a proving-ground site, write its ground truth or the LVS file.

    hiddenweb site serve --pages N --seed S --port P [--host H] [--no-forms] [--no-js] [--no-traps]
    hiddenweb site truth --pages N --seed S -o truth.jsonl
    hiddenweb site forms --pages N --seed S  # every form: page, index, true class, style
    hiddenweb site demo [--port P]          # pages=300 seed=7
    hiddenweb site lvs -o hiddenweb/lvs_data/default.toml

``serve`` prints exactly one first line ``Serving http://HOST:PORT/ (pages=N seed=S)`` (flushed;
benchmarks parse it), then serves until SIGTERM or SIGINT.
"""

from __future__ import annotations

import argparse
import json
import signal
import sys
from pathlib import Path

from hiddenweb.commands import at_least


def _site(args: argparse.Namespace):
    from hiddenweb.bench.provingground.site import SiteModel

    return SiteModel(
        pages=args.pages, seed=args.seed, forms=args.forms, js=args.js, traps=args.traps
    )


def _serve(args: argparse.Namespace) -> int:
    from hiddenweb.bench.provingground.server import serve_forever

    site = _site(args)

    def ready(running) -> None:
        print(f"Serving {running.url}/ (pages={args.pages} seed={args.seed})", flush=True)

    def stop(signum, frame):
        raise KeyboardInterrupt

    signal.signal(signal.SIGTERM, stop)
    try:
        serve_forever(site, args.host, args.port, ready, args.latency)
    except KeyboardInterrupt:
        pass
    return 0


def _demo(args: argparse.Namespace) -> int:
    from hiddenweb.bench.provingground.site import DEMO_PAGES, DEMO_SEED

    args.pages, args.seed, args.forms, args.js, args.traps = DEMO_PAGES, DEMO_SEED, True, True, True
    return _serve(args)


def _truth(args: argparse.Namespace) -> int:
    site = _site(args)
    out = sys.stdout if args.output == "-" else open(args.output, "w", encoding="utf-8")
    n = 0
    try:
        for row in site.truth():
            out.write(json.dumps(row, ensure_ascii=False) + "\n")
            n += 1
    finally:
        if out is not sys.stdout:
            out.close()
    if args.output != "-":
        print(f"wrote {n} truth pages to {args.output}", file=sys.stderr)
    return 0


def _forms(args: argparse.Namespace) -> int:
    from hiddenweb.bench.forms import form_truth

    for row in form_truth(_site(args)):
        row.pop("render")
        print(json.dumps(row))
    return 0


def _lvs(args: argparse.Namespace) -> int:
    from hiddenweb.bench.provingground.vocab import lvs_toml

    text = lvs_toml()
    if args.output == "-":
        sys.stdout.write(text)
    else:
        Path(args.output).write_text(text, encoding="utf-8")
    return 0


def _site_options(p: argparse.ArgumentParser, serve: bool) -> None:
    p.add_argument("--pages", type=at_least(1), default=1000, help="about this many truth pages")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--no-forms", dest="forms", action="store_false", help="no hidden part")
    p.add_argument(
        "--no-js",
        dest="js",
        action="store_false",
        help="render script-built links and forms as plain HTML",
    )
    p.add_argument(
        "--no-traps",
        dest="traps",
        action="store_false",
        help="no login/contact/delete forms, calendar or faceted catalog",
    )
    if serve:
        _server_options(p)


def _server_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, default=8000, help="0 picks a free port")
    p.add_argument("--latency", type=float, default=0.0, metavar="SECONDS",
                   help="every answer waits this long (a remote site; default 0)")


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "site", help="the proving ground: serve a generated site, write its ground truth"
    )
    sub = parser.add_subparsers(dest="site_command", metavar="ACTION", required=True)
    p = sub.add_parser("serve", help="serve a generated site over HTTP")
    _site_options(p, serve=True)
    p.set_defaults(func=_serve)
    p = sub.add_parser("truth", help="write the ground truth, one JSON line per page")
    _site_options(p, serve=False)
    p.add_argument("-o", "--output", default="-", help="output file ('-': stdout)")
    p.set_defaults(func=_truth)
    p = sub.add_parser("forms", help="every form of the site with its true class (JSON lines)")
    _site_options(p, serve=False)
    p.set_defaults(func=_forms)
    p = sub.add_parser("demo", help="serve the bundled demo site (pages=300, seed=7)")
    _server_options(p)
    p.set_defaults(func=_demo)
    p = sub.add_parser("lvs", help="write the LVS file from the proving ground's vocabularies")
    p.add_argument("-o", "--output", default="-", help="e.g. hiddenweb/lvs_data/default.toml")
    p.set_defaults(func=_lvs)
