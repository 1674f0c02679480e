"""Shared fixtures: ``served_site`` serves the demo proving-ground site on 127.0.0.1."""

from __future__ import annotations

import pytest

from hiddenweb.bench.provingground.server import serve_in_thread
from hiddenweb.bench.provingground.site import DEMO_PAGES, DEMO_SEED, SiteModel


@pytest.fixture(scope="session")
def served_site():
    """``SiteModel(pages=300, seed=7)`` served in a thread on a free port; yields the server
    (``.url`` = ``http://127.0.0.1:PORT``, ``.site``, ``.stats()``, ``.reset_stats()``)."""
    server = serve_in_thread(SiteModel(pages=DEMO_PAGES, seed=DEMO_SEED), "127.0.0.1", 0)
    try:
        yield server
    finally:
        server.shutdown()
