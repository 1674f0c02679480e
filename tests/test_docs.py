"""Every HIDDENWEB_* setting the code reads is documented in docs/settings.md, and every
documented one exists in hiddenweb/defaults.py (sqlite-utils' test_docs.py idea)."""

import re
from pathlib import Path

import hiddenweb.defaults as defaults

ROOT = Path(__file__).resolve().parent.parent
SETTING = re.compile(r"\bHIDDENWEB_[A-Z0-9_]+\b")


def used_settings() -> set[str]:
    names: set[str] = set()
    for path in (ROOT / "hiddenweb").rglob("*.py"):
        names.update(SETTING.findall(path.read_text(encoding="utf-8")))
    return names


def test_every_setting_is_documented():
    documented = set(SETTING.findall((ROOT / "docs" / "settings.md").read_text()))
    missing = sorted(used_settings() - documented)
    assert not missing, f"undocumented settings: {missing}"


def test_every_setting_has_a_default():
    missing = sorted(n for n in used_settings() if not hasattr(defaults, n))
    assert not missing, f"settings without a default in hiddenweb/defaults.py: {missing}"
