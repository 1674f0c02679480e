"""hiddenweb: a Scrapy crawler for the hidden web (pages that only forms reach)."""

__version__ = "0.1.0"
