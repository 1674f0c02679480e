"""The safety policy's rules, one by one (hiddenweb/safety.py, docs/safety.md)."""

from __future__ import annotations

import logging

import pytest
from parsel import Selector
from scrapy.settings import Settings

from hiddenweb.forms.extract import extract_forms
from hiddenweb.safety import SafetyPolicy, judge_form, judge_link, judge_replay, normalize


def form(html: str):
    return extract_forms(Selector(text=html), "http://127.0.0.1:8000/page")[0]


def test_words_are_read_without_case_accents_or_joins():
    assert normalize("Passwort_Zurücksetzen camelCase-kebab") == \
        "passwort zurucksetzen camel case kebab"


def test_a_text_field_labelled_password_is_a_password():
    v = judge_form(form('<form method="post" action="/a"><label for="x">Passwort</label>'
                        '<input id="x" name="x"><button>Weiter</button></form>'))
    assert not v.allowed and v.kind == "login" and v.has_password


def test_get_forms_of_any_class_but_the_harmful_ones():
    get = '<form action="/p"><input name="name"><input name="phone"><button>Go</button></form>'
    assert judge_form(form(get)).allowed  # unknown by GET: allowed
    post = get.replace("<form ", '<form method="post" ')
    v = judge_form(form(post))
    assert not v.allowed and v.reason == "unknown"


def test_a_post_poll_is_not_a_filter():
    poll = ('<form method="post" action="/p/3"><input type="radio" name="c" value="a">'
            '<input type="radio" name="c" value="b"><button>Submit</button></form>')
    assert not judge_form(form(poll)).allowed
    assert judge_form(form(poll.replace("Submit", "Filter"))).allowed


def test_the_first_allowed_button_is_clicked_and_the_others_counted():
    v = judge_form(form(
        '<form action="/old"><input name="q"><button name="op" value="clear" formmethod="post" '
        'formaction="/account/delete">Clear my saved searches</button>'
        '<button formaction="/find">Search</button></form>'))
    assert v.allowed and v.button == 1 and v.refused_buttons == ((0, "destructive"),)


def test_a_form_whose_every_button_is_refused_is_not_sent():
    v = judge_form(form('<form action="/cart"><input name="q"><button>Remove</button>'
                        '<button>Checkout</button></form>'))
    assert not v.allowed and v.button is None and len(v.refused_buttons) == 2


def test_hidden_method_override_is_destructive():
    v = judge_form(form('<form method="post" action="/items/3"><input type="hidden" '
                        'name="_method" value="DELETE"><button>OK</button></form>'))
    assert not v.allowed and v.reason == "destructive"


def test_a_sort_order_select_is_not_a_purchase():
    v = judge_form(form('<form method="post" action="/list"><select name="order"><option>asc'
                        '</option></select><button>Apply</button></form>'))
    assert v.allowed and v.kind == "filter"


def test_a_link_that_only_navigates_says_nothing_of_the_submission():
    """"Cancel" and "Reset filters" links beside the button go back without submitting; a
    scripted link (it may submit the form) keeps its words."""
    html = ('<form method="post" action="/t/export"><select name="format"><option>json</option>'
            '<option>csv</option></select><button>Export</button><a href="/t/">Cancel</a>'
            '<a href="/t/?reset=1">Reset filters</a></form>')
    v = judge_form(form(html))
    assert v.allowed and v.kind == "filter" and v.evidence == "export"
    scripted = html.replace('href="/t/"', 'href="#" onclick="this.form.submit()"')
    assert judge_form(form(scripted)).reason == "destructive"
    assert judge_form(form(html.replace('href="/t/"', 'href="javascript:go()"'))).reason \
        == "destructive"


def test_a_harmful_choice_is_never_made_and_a_harmful_default_refuses_the_form():
    """A bulk-action select: its "Delete selected" option and a checkbox whose value says
    purge are left out of what the explorer may choose; a form that sends one by default is
    refused."""
    f = form('<form method="post" action="/items"><select name="action"><option value="">'
             '---------</option><option value="delete_selected">Delete selected items</option>'
             '<option value="export">Export</option><option value="archive">Archive</option>'
             '</select><label><input type="checkbox" name="then" value="purge">Tidy up '
             'afterwards</label><input type="checkbox" name="_selected" value="7">'
             '<button>Go</button></form>')
    action, opt, selected = f.fields
    assert action.options == ["", "export"] and action.default == ""
    assert action.refused == {"delete_selected": "destructive", "archive": "destructive"}
    assert opt.options == [] and opt.refused == {"purge": "destructive"} and opt.default == ""
    assert selected.options == ["7"] and not selected.refused
    assert judge_form(f).allowed
    by_default = form('<form method="post" action="/inbox"><select name="do"><option '
                      'value="mark_all_read">Mark all as read</option><option value="none">'
                      'Nothing</option></select><button>Go</button></form>')
    v = judge_form(by_default)
    assert not v.allowed and v.reason == "destructive" and v.evidence == "mark_all_read"
    # by GET a short word is a filter's value ("Archive": the archived items), not an action
    get = form('<form action="/list"><select name="show"><option>All</option><option>Archive'
               '</option></select><button>Show</button></form>')
    assert get.fields[0].options == ["All", "Archive"] and judge_form(get).allowed


@pytest.mark.parametrize(("url", "label", "markup", "reason"), [
    ("/account/delete?confirm=1", "Delete my account", None, "destructive"),
    ("/logout", "Log out", None, "destructive"),
    ("/cart/remove?item=3", "Remove item", None, "destructive"),
    ("/x", "Jetzt kaufen", None, "payment"),
    ("/c/3", "Remove", {"data-method": "delete"}, "destructive"),
    ("/poll?vote=1", "A", None, "vote"),
])
def test_harmful_links_are_refused(url, label, markup, reason):
    v = judge_link(url, label, markup)
    assert not v.allowed and v.reason == reason


@pytest.mark.parametrize(("url", "label"), [
    ("/page/2", "Next"), ("/contact", "Contact us"), ("/p/7", "password broker debit"),
    ("/p/8", "payment deposit"), ("/books/9", "The Order of the Phoenix"),
    ("/list?sort=date&order=desc", "Newest first"),
])
def test_ordinary_links_are_followed(url, label):
    assert judge_link(url, label).allowed


def test_replays_are_judged_again():
    assert judge_replay("GET", "http://h/p/3", None).allowed
    assert not judge_replay("GET", "http://h/logout", None).allowed
    # a store written before the policy keeps no form class: its POSTs are never replayed
    v = judge_replay("POST", "http://h/1", {"name": "a", "p": "b"})
    assert not v.allowed and v.reason == "unknown"
    ok = {"author": "Christie", "csrf": "9f8e7d6c5b4a39281706f5e4"}
    assert judge_replay("POST", "http://h/c/2/find", ok, "search").allowed
    assert not judge_replay("POST", "http://h/c/2/find", ok, "contact").allowed
    assert judge_replay("GET", "http://h/c/2/find?author=x", {"author": "x"}, "unknown").allowed
    assert not judge_replay("POST", "http://h/x", {"action": "delete"}, "search").allowed
    assert not judge_replay("POST", "http://h/x", {"q": "a", "pw": "b"}, "search").allowed
    assert not judge_replay("POST", "http://h/cart/add", {"q": "a"}, "search").allowed


def test_allow_opts_in_and_the_old_setting_is_an_alias(caplog):
    contact = form('<form method="post" action="/contact"><textarea name="m"></textarea>'
                   '<button>Send</button></form>')
    assert not SafetyPolicy.from_settings(Settings()).form(contact).allowed
    policy = SafetyPolicy.from_settings(Settings({"HIDDENWEB_FORMS_ALLOW": "contact,unknown"}))
    assert policy.form(contact).allowed
    with caplog.at_level(logging.WARNING):
        legacy = SafetyPolicy.from_settings(Settings({"HIDDENWEB_UNSAFE_FORM_CLASSES": "other"}))
    assert legacy.allow == {"unknown"} and "deprecated" in caplog.text


@pytest.mark.parametrize("name", ["HIDDENWEB_FORMS_ALLOW", "HIDDENWEB_UNSAFE_FORM_CLASSES"])
def test_an_unknown_class_is_refused_naming_the_setting(name):
    with pytest.raises(ValueError, match=name):
        SafetyPolicy.from_settings(Settings({name: "logn"}))


def test_the_start_up_check_names_a_bad_class():
    from scrapy.exceptions import UsageError

    from hiddenweb.config import check

    with pytest.raises(UsageError, match="HIDDENWEB_FORMS_ALLOW: unknown class 'logn'"):
        check(Settings({"HIDDENWEB_FORMS_ALLOW": "contact,logn"}))
    check(Settings({"HIDDENWEB_FORMS_ALLOW": "contact,unknown"}))
