"""The page readers that go to lxml directly (``pagetext.node_strings``, ``outward_links``,
the vocabulary's table reader) read what parsel's ``Selector.xpath`` read before.

Reference readings are parsel's, written here as the code read pages before the change: a
reader that returns other texts (tails, entities, comments, scripts, nested markup, a
malformed page) fails here.
"""

from __future__ import annotations

from urllib.parse import urljoin

import pytest
from parsel import Selector

from hiddenweb.forms.lvs import words_of
from hiddenweb.forms.records import MAX_VALUE_CHARS, record_fields
from hiddenweb.forms.vocabulary import MAX_VALUES, SiteVocabulary
from hiddenweb.pagetext import (
    ACTION_TARGETS,
    CONTENT_TEXT,
    NON_ANCHOR,
    VISIBLE,
    compiled,
    node_strings,
    outward_links,
    shape_fingerprint,
    template_key,
    visible_nodes,
)

PAGES = {
    "tables": """<html><head><title>Cars &amp; stocks</title><style>td{x:1}</style></head>
<body><h1>Cars</h1><nav><a href="/">Home</a> | <a href="/cars?page=2">next</a></nav>
<table><tr><th>Name</th><th>Origin <small>(country)</small></th><th>Year</th></tr>
<tr><td><a href="/cars/1">chevrolet chevelle</a></td><td>USA</td><td>1970</td></tr>
<tr><td><a href="/cars/2">buick skylark&nbsp;320</a></td><td>USA<br>tail</td><td>1970</td></tr>
<tr><td>short row</td></tr>
<tr><th>Total</th><td>2</td><td>-</td></tr></table>
<table><tr><td>no header</td></tr></table>
<table><thead><tr><th></th><th> </th></tr></thead><tr><td>a</td><td>b</td></tr></table>
<script>var t = "<td>not a cell</td>";</script><!-- a comment -->
<form action="/q" onsubmit="go()"><label>Symbol <select name="s"><option>GOOG</option>
<option value="AAPL">Apple</option></select></label><button formaction="/p">Go</button></form>
<iframe src="/frame.html"></iframe><div onclick="open('/x')">click</div>
<footer>© 2026 <a href="https://example.org/about">about</a></footer></body></html>""",
    "nested": """<html><body><p>One <b>two <i>three</i></b> four</p>
<a href="/a"><span>in</span> link <img alt="x" src="i.png"> after</a>
<ul><li>é ü ß 中文</li><li>   </li><li><a href="#top">top</a></li></ul>
<textarea name="t">typed</textarea><header>head</header></body></html>""",
    "malformed": """<body><table><tr><th>A<th>B<tr><td>1<td>2<tr><td>3<td>4</table>
<p>unclosed <a href=/u>u <p>para <div>div""",
    "empty": "",
    "text only": "just words, no tags",
}


@pytest.mark.parametrize("name", sorted(PAGES))
@pytest.mark.parametrize("query", [VISIBLE, NON_ANCHOR, CONTENT_TEXT, ACTION_TARGETS,
                                   compiled("//a/@href")])
def test_node_strings_equal_parsel(name, query):
    page = Selector(text=PAGES[name])
    assert node_strings(page, query) == page.xpath(query.path).getall()


@pytest.mark.parametrize("name", sorted(PAGES))
def test_outward_links_and_shape_equal_parsel(name):
    page, url = Selector(text=PAGES[name]), "http://127.0.0.1:8080/cars?page=1"
    links = outward_links(page, url)
    old = [(t, a) for a in page.xpath("//a[@href]")
           if template_key(t := urljoin(url, a.attrib["href"])) != template_key(url)]
    assert [t for t, _ in links] == [t for t, _ in old]
    texts = [s for _, a in links for s in a.xpath(".//text()")]
    assert texts == [s for _, a in old for s in a.xpath(".//text()").getall()]
    assert visible_nodes(page) == [t for t in page.xpath(VISIBLE.path).getall()
                                   if not t.isspace()]
    assert shape_fingerprint(page, url) == shape_fingerprint(page, url, links)


def _labelled_by_parsel(selector: Selector) -> dict[str, list[str]]:
    """The table reader as written before, on parsel selectors."""
    out = {label: list(values) for label, values in record_fields(selector).items()}
    for table in selector.xpath("//table[.//th]"):
        header = table.xpath("(.//tr[th])[1]/th")
        names = [" ".join(words_of(" ".join(th.xpath(".//text()").getall()))) for th in header]
        if not any(names):
            continue
        for row in table.xpath(".//tr[td]")[:MAX_VALUES]:
            cells = row.xpath("td|th")
            if len(cells) != len(names):
                continue
            for name, cell in zip(names, cells, strict=True):
                value = " ".join(" ".join(cell.xpath(".//text()").getall()).split())
                if name and 0 < len(value) <= MAX_VALUE_CHARS:
                    bucket = out.setdefault(name, [])
                    if value not in bucket:
                        bucket.append(value)
    return out


@pytest.mark.parametrize("name", sorted(PAGES))
def test_table_values_equal_parsel(name):
    page = Selector(text=PAGES[name])
    got = SiteVocabulary._labelled(page, record_fields(page))
    assert got == _labelled_by_parsel(page)
    if name == "tables":  # the reading itself, not only its agreement
        assert got["origin country"] == ["USA", "USA tail", "2"]
        assert got["year"] == ["1970", "-"]
        assert got["name"] == ["chevrolet chevelle", "buick skylark 320", "Total"]


SELECTS = """<form action="/f"><select name="a">
<option>  first\tlabel </option><option value="v2" selected>Second</option>
<optgroup label="g"><option value="v3" selected>third</option>
<option>non\xa0breaking  space</option></optgroup></select>
<select name="b"><option value="">Any</option><option value="x">X</option></select>
<select name="c"></select>
<select name="d"><option value="del">Delete all records</option><option>keep</option></select>
</form>"""


def test_select_options_read_as_a_browser_sends_them():
    from hiddenweb.forms.extract import extract_forms

    fields = {f.name: f for f in extract_forms(Selector(text=SELECTS), "http://h/")[0].fields}
    # XPath normalize-space: only XML whitespace collapses (a no-break space stays)
    assert fields["a"].options == ["first label", "v2", "v3", "non\xa0breaking space"]
    assert fields["a"].default == "v2"  # the first selected option
    assert fields["b"].default == ""  # the first option, an empty value
    assert fields["c"].options == [] and fields["c"].default == ""
    page = Selector(text=SELECTS)  # the same readings through parsel
    for name, field in fields.items():
        options = page.xpath(f'//select[@name="{name}"]//option')
        values = [o.attrib.get("value", o.xpath("normalize-space(.)").get()) for o in options]
        assert sorted(field.options + list(field.refused)) == sorted(values)
    assert "del" in fields["d"].refused and fields["d"].options == ["keep"]


RECORD = """<html><body><ul><li>City: <b>Springfield</b></li><li>Menu<ul><li>Authors: Orwell,
Huxley; Bradbury</li></ul></li><li>no pair here</li></ul>
<dl><dt>Published</dt><dd>1949</dd><dt>Empty</dt><dd></dd><dt>Keywords <i>(tags)</i></dt>
<dd>fern, <em>tulip</em>, rose</dd></dl>
<table><tr><th>Author</th><td>Smith, J.</td></tr><tr><td>Pages</td><td>328</td></tr></table>
<table><tr><th>Name</th><th>Year</th></tr><tr><td>skipped</td><td>1970</td></tr></table>
</body></html>"""


def test_record_fields_read_label_value_pairs():
    from hiddenweb.forms.records import record_fields

    assert record_fields(Selector(text=RECORD)) == {
        "city": ["Springfield"], "authors": ["Orwell", "Huxley", "Bradbury"],
        "published": ["1949"], "keywords tags": ["fern", "tulip", "rose"],
        "author": ["Smith, J."], "pages": ["328"]}
