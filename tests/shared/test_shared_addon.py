"""One setting switches shared mode on: the add-on's choices with and without
``HIDDENWEB_REDIS_URL`` (no Redis needed)."""

from __future__ import annotations

import pytest
from scrapy.exceptions import UsageError
from scrapy.settings import Settings

from hiddenweb.addon import DLA_SCHEDULER, SHARED_SCHEDULER, Addon


def configured(**values) -> Settings:
    settings = Settings()
    settings.setdict(values, priority="project")
    Addon().update_settings(settings)
    return settings


def test_off_by_default():
    settings = configured()
    assert settings["SCHEDULER"] == DLA_SCHEDULER
    assert "hiddenweb.dla.relay.AnswerRelay" not in settings["DOWNLOADER_MIDDLEWARES"]
    assert "scrapy_redis" not in settings["DUPEFILTER_CLASS"]


def test_one_setting_switches_it_on():
    settings = configured(HIDDENWEB_REDIS_URL="redis://127.0.0.1:6379/0")
    assert settings["SCHEDULER"] == SHARED_SCHEDULER
    assert settings["DUPEFILTER_CLASS"] == "hiddenweb.redis_dupefilter.RedisDupeFilter"
    assert settings["DOWNLOADER_MIDDLEWARES"]["hiddenweb.dla.relay.AnswerRelay"] == 950


def test_a_project_dla_scheduler_becomes_shared():
    settings = configured(HIDDENWEB_REDIS_URL="redis://127.0.0.1:6379/0",
                          SCHEDULER=DLA_SCHEDULER)
    assert settings["SCHEDULER"] == SHARED_SCHEDULER


def test_another_scheduler_is_refused():
    with pytest.raises(UsageError, match="HIDDENWEB_REDIS_URL"):
        configured(HIDDENWEB_REDIS_URL="redis://127.0.0.1:6379/0",
                   SCHEDULER="scrapy.core.scheduler.Scheduler")


def test_lease_must_be_positive():
    with pytest.raises(UsageError, match="HIDDENWEB_REDIS_LEASE"):
        configured(HIDDENWEB_REDIS_LEASE=0)
