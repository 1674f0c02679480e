"""Run Black Widow (GitHub SecuringWeb/BlackWidow, ``crawl.py``) headless in Debian's Chromium.

The real-site benchmark's peer crawler (:mod:`hiddenweb.bench.realsites.crawlers`, ``blackwidow``)
runs this file with the Python of Black Widow's own virtual environment (Selenium 3), not the
project's: it imports nothing of ``hiddenweb``. ``python blackwidow_launch.py CHECKOUT URL``:
Black Widow's ``crawl.py`` is run from ``CHECKOUT`` (it reads ``js/*.js`` relatively and writes
``logs/`` and ``form_files/dynamic/`` there), with Selenium's ``webdriver.Chrome`` wrapped to
start ``/usr/bin/chromium`` headless with the flags the project's own browser uses in a container
(``--no-sandbox``, ``--disable-dev-shm-usage``; the JSON list in ``BLACKWIDOW_CHROMIUM_ARGS``, the
project's :data:`~hiddenweb.browser.config.CHROMIUM_ARGS`, which also turn Chromium's own
background traffic off), and its own flags kept. Nothing of Black Widow's
crawl is changed: it runs until it ends or is killed at the benchmark's time cap.
"""

import json
import os
import runpy
import sys

HEADLESS = ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu")


def main() -> None:
    checkout, url = sys.argv[1], sys.argv[2]
    from selenium import webdriver

    plain_chrome = webdriver.Chrome

    def chrome(*args, **kwargs):
        options = kwargs.get("chrome_options") or kwargs.get("options") \
            or webdriver.ChromeOptions()
        for flag in dict.fromkeys([*HEADLESS, *json.loads(
                os.environ.get("BLACKWIDOW_CHROMIUM_ARGS", "[]"))]):
            options.add_argument(flag)
        options.binary_location = os.environ.get("BLACKWIDOW_CHROMIUM", "/usr/bin/chromium")
        kwargs.pop("chrome_options", None)
        kwargs["options"] = options
        kwargs.setdefault("executable_path",
                          os.environ.get("BLACKWIDOW_CHROMEDRIVER", "/usr/bin/chromedriver"))
        return plain_chrome(*args, **kwargs)

    webdriver.Chrome = chrome
    os.chdir(checkout)
    sys.path.insert(0, checkout)
    sys.argv = ["crawl.py", "--url", url]
    runpy.run_path("crawl.py", run_name="__main__")


if __name__ == "__main__":
    main()
