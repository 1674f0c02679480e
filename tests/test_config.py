"""Start-up checks of HIDDENWEB_* settings (hiddenweb.config, through the add-on), and the lab
knobs' overrides."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from scrapy.exceptions import UsageError
from scrapy.settings import Settings

from hiddenweb import defaults
from hiddenweb.addon import Addon
from hiddenweb.config import check, lab, setting_args

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.parametrize(("settings", "message"), [
    ({"HIDDENWEB_FORM_WAVES": 3}, "unknown setting HIDDENWEB_FORM_WAVES"),
    ({"HIDDENWEB_BROWSR": "never"}, "did you mean HIDDENWEB_BROWSER?"),
    ({"HIDDENWEB_MAX_SUBMISSIONS_PER_FORM": -5}, "HIDDENWEB_MAX_SUBMISSIONS_PER_FORM must be >= 1"),
    ({"HIDDENWEB_TEMPLATE_BUDGET": -1}, "HIDDENWEB_TEMPLATE_BUDGET must be >= 0"),
    ({"HIDDENWEB_BROWSER": "sometimes"}, "HIDDENWEB_BROWSER must be one of auto, always, never"),
    ({"HIDDENWEB_DLA_WAIT": 2}, "HIDDENWEB_DLA_WAIT must be between 0.0 and 1.0"),
    ({"HIDDENWEB_BROWSER_TIMEOUT": "soon"}, "HIDDENWEB_BROWSER_TIMEOUT must be a float"),
    ({"HIDDENWEB_BROWSER_TIMEOUT": 0}, "HIDDENWEB_BROWSER_TIMEOUT must be > 0.0, not 0.0"),
    ({"HIDDENWEB_BROWSER_EVENT_BUDGET": -1}, "HIDDENWEB_BROWSER_EVENT_BUDGET must be >= 0"),
    ({"HIDDENWEB_BROWSER_EVENTS": "maybe"}, "HIDDENWEB_BROWSER_EVENTS must be a bool"),
    ({"HIDDENWEB_LAB": {"form_waves": 3}}, "HIDDENWEB_LAB: unknown knob 'form_waves'"),
    ({"HIDDENWEB_LAB": "{not json"}, "HIDDENWEB_LAB must be a JSON object"),
])
def test_bad_settings_are_refused_with_a_message_naming_them(settings, message):
    with pytest.raises(UsageError, match=message.replace("?", r"\?")):
        check(Settings(settings))


def test_the_defaults_pass():
    check(Settings({n: getattr(defaults, n) for n in dir(defaults) if n.startswith("HIDDENWEB_")}))


def test_lab_knobs_default_to_their_constants_and_take_overrides_of_their_type():
    assert lab(Settings(), "form_wave") == defaults.LAB["form_wave"]
    over = Settings({"HIDDENWEB_LAB": '{"form_wave": "8", "dla_transfer": "0"}'})
    assert lab(over, "form_wave") == 8 and lab(over, "dla_transfer") is False
    assert setting_args({"HIDDENWEB_LAB": {"form_wave": 8}}) == [
        "-s", 'HIDDENWEB_LAB={"form_wave": 8}']


def test_the_addon_switches_the_components_on_and_keeps_a_project_s_choice():
    settings = Settings({"HIDDENWEB_BROWSER": "never"})
    settings.set("ITEM_PIPELINES", {"hiddenweb.pipelines.visitstore.VisitStorePipeline": 300})
    Addon().update_settings(settings)
    assert settings["SCHEDULER"] == "hiddenweb.dla.scheduler.DLAScheduler"
    assert settings.getdict("SPIDER_MIDDLEWARES")[
        "hiddenweb.dla.middleware.DLAFeedbackMiddleware"] == 550
    assert settings.getdict("ITEM_PIPELINES")[
        "hiddenweb.pipelines.visitstore.VisitStorePipeline"] == 300  # the project's order
    assert "DOWNLOAD_HANDLERS" not in settings.attributes or "http" not in settings.getdict(
        "DOWNLOAD_HANDLERS")  # no browser: no Playwright handler


def test_a_crawl_with_a_bad_setting_stops_at_start_up_naming_it(tmp_path):
    """Scrapy logs the error with its traceback (the add-on runs inside the crawl's start) and
    exits 1; the message naming the setting is the last line."""
    run = subprocess.run(
        [sys.executable, "-m", "scrapy", "crawl", "hwdla", "-a", "seed=http://127.0.0.1:9/",
         "-s", "HIDDENWEB_MAX_SUBMISSIONS_PER_FORM=-5"],
        cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert run.returncode == 1
    assert run.stderr.strip().splitlines()[-1].endswith(
        "HIDDENWEB_MAX_SUBMISSIONS_PER_FORM must be >= 1, not -5")
