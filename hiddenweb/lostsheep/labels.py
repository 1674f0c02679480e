"""What a link's sheep reads besides the anchor text: title, image alt text, nearby words.

The paper's conclusion suggests it ("the text close to the link text may be valuable
information ... 'find the contact information here' where here is the link text"). Contract:
:func:`link_contexts` maps every ``<a href>`` of a page (absolute URL, fragment removed, first
occurrence wins) to one string: the ``title`` attribute, the ``alt`` of images inside the anchor,
then up to :data:`AROUND_WORDS` words of the text just before and just after the anchor.
"""

from __future__ import annotations

from urllib.parse import urldefrag

from scrapy.http import TextResponse

AROUND_WORDS = 8


def link_contexts(response: TextResponse) -> dict[str, str]:
    """``{url: context}`` for the anchors of ``response`` (empty when it is not markup)."""
    out: dict[str, str] = {}
    try:
        anchors = response.xpath("//a[@href]")
    except (ValueError, AttributeError):
        return out
    for a in anchors:
        href = (a.attrib.get("href") or "").strip()
        if not href or href.startswith(("javascript:", "mailto:", "#")):
            continue
        url = urldefrag(response.urljoin(href))[0]
        if url in out:
            continue
        before = a.xpath("normalize-space(preceding-sibling::text()[1])").get() or ""
        after = a.xpath("normalize-space(following-sibling::text()[1])").get() or ""
        parts = [
            a.attrib.get("title", ""),
            " ".join(a.xpath(".//img/@alt").getall()),
            " ".join(before.split()[-AROUND_WORDS:]),
            " ".join(after.split()[:AROUND_WORDS]),
        ]
        out[url] = " ".join(p for p in parts if p).strip()[:400]
    return out


def context_for(contexts: dict[str, str], url: str) -> str:
    return contexts.get(urldefrag(url)[0], "")
