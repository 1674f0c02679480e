"""hiddenweb: a Scrapy crawler for the hidden web (pages that only forms reach)."""

__version__ = "0.1.0"


def __getattr__(name: str) -> object:
    """``hiddenweb.Addon`` (``ADDONS = {"hiddenweb.Addon": 500}``), imported when first used."""
    if name == "Addon":
        from hiddenweb.addon import Addon

        return Addon
    raise AttributeError(f"module 'hiddenweb' has no attribute {name!r}")
