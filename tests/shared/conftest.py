"""A real ``redis-server`` for the shared-mode tests, started once per test run on a free
loopback port (no mocked Redis); the tests are skipped, with the reason, when the binary is
missing. Each test gets a client on a flushed database."""

from __future__ import annotations

import shutil

import pytest


@pytest.fixture(scope="session")
def redis_url():
    if shutil.which("redis-server") is None:
        pytest.skip("redis-server is not installed (apt-get install -y redis-server)")
    from hiddenweb.bench.distributed import redis_server

    with redis_server() as url:
        yield url


@pytest.fixture
def redis_client(redis_url):
    import redis

    client = redis.Redis.from_url(redis_url)
    client.flushdb()
    yield client
    client.close()
