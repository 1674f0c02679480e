"""Scrapy commands of the project (``COMMANDS_MODULE``): they replace Scrapy's own of the same
name inside this project, and under Scrapyd, which runs ``scrapy crawl`` too."""
