"""The safety policy: which forms are submitted, which buttons clicked, which links followed.

One place decides, for the spider's forms, submit buttons, links and recrawl replays alike
(``docs/safety.md`` states the policy in plain words). The module is pure: it reads words, field
kinds, methods and URLs, and imports nothing of Scrapy but a type.

Contract
--------
* :func:`judge_form` → :class:`FormVerdict`: the form's class, whether it may be submitted, the
  button to click (the first one the policy allows) and the buttons refused. It reads the form's
  text (its buttons' labels included), every button's label, name, value and ``formaction``,
  every field's name, label, id, placeholder, ``aria-label`` and type (a ``password`` field, or
  any field *labelled* password), state-carrying hidden fields (``_method=DELETE``,
  ``action=remove``) and the action URL's path and query, in English and in the common words of
  German, French, Spanish, Italian, Portuguese, Dutch, Polish, Swedish, Russian, Chinese and
  Japanese.
* Classes (:data:`FORM_CLASSES`): ``search``, ``filter``, ``neutral`` (nothing harmful, no
  personal data, a word such as "show" or only finite fields), ``unknown``, ``contact`` (contact,
  comment, feedback), ``edit`` (a POST form that adds, creates, saves or edits content: never
  sent, like ``unknown``), and the refused-by-default ``login``, ``signup``, ``password_reset``,
  ``payment`` (buying, ordering, carts, checkout, paying, sending or transferring money),
  ``subscribe``, ``vote`` (votes, likes, follows, flags) and ``destructive`` (delete, remove,
  reset, cancel, unsubscribe, log out).
* **GET** submissions are allowed for every class but :data:`GET_REFUSED`; **POST** submissions
  only for :data:`POST_ALLOWED` (search, filter, neutral; such a form has no password field and
  no destructive, auth or commerce word, else it would not be of those classes). ``unknown`` is
  never sent by POST. ``allow`` (``HIDDENWEB_FORMS_ALLOW``) opts in to more classes.
* :func:`judge_link` → :class:`Verdict`: a link (or a button outside a form) whose label or URL
  (path, query keys and values) carries a destructive, auth, commerce, subscribe or vote word, or
  whose markup says it is not a plain GET (``data-method="delete"``, ``data-confirm``), is not
  followed. Contact links are followed (a contact page is public content).
* :func:`judge_replay` → :class:`Verdict`: a stored request (method, URL, submitted fields, the
  class its form had) for ``-a recrawl=1``, judged again by the current policy from what the
  store kept; a stored POST without a class is never replayed.

Refusal reasons are the refused class names; the spider counts them as
``hiddenweb/safety/refused/<reason>``.
"""

from __future__ import annotations

import logging
import re
import unicodedata
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import TYPE_CHECKING, Any, Protocol
from urllib.parse import parse_qsl, unquote_plus, urljoin, urlsplit

if TYPE_CHECKING:
    from scrapy.settings import BaseSettings

logger = logging.getLogger(__name__)

FORM_CLASSES = ("search", "filter", "neutral", "unknown", "contact", "edit", "login", "signup",
                "password_reset", "payment", "subscribe", "vote", "destructive")
#: refused for GET submissions and links unless allowed
GET_REFUSED = frozenset({"login", "signup", "password_reset", "payment", "subscribe", "vote",
                         "destructive"})
#: the only classes sent by POST unless allowed
POST_ALLOWED = frozenset({"search", "filter", "neutral"})
#: refused link classes (a contact page is followed: it is public content)
LINK_REFUSED = GET_REFUSED
#: ``HIDDENWEB_UNSAFE_FORM_CLASSES`` (deprecated) names → classes of this policy
LEGACY_CLASSES = {"other": ("unknown",), "login": ("login",), "signup": ("signup",),
                  "contact": ("contact",), "payment": ("payment",),
                  "destructive": ("destructive",)}


# -- words ----------------------------------------------------------------------------------------
_CAMEL = re.compile(r"([a-z])([A-Z])")
_SPLIT = re.compile(r"[\W_]+")
_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af]")


@lru_cache(maxsize=1 << 16)
def normalize(text: str) -> str:
    """Lower-case words without accents, joined by single spaces (``"Löschen_Sie"`` →
    ``"loschen sie"``): camelCase, snake_case, kebab-case and punctuation split words."""
    if not text:
        return ""
    text = _CAMEL.sub(r"\1 \2", text)
    if text.isascii():
        text = text.lower()
    else:
        text = unicodedata.normalize("NFKD", text)
        text = "".join(c for c in text if not unicodedata.combining(c)).casefold()
    return " ".join(t for t in _SPLIT.split(text) if t)


_MAX_GRAM = 5


class _Lexicon:
    """Words (``delete``), phrases (``add to cart``), stems (``delet*``, a word's start) and
    CJK strings (found anywhere) of one or more classes, looked up in normalized
    text by its word n-grams: a few dictionary lookups per word, whatever the lexicon's size."""

    def __init__(self, entries: Iterable[str] | Mapping[str, Iterable[str]]):
        classes = entries if isinstance(entries, Mapping) else {"": entries}
        self.grams: dict[str, tuple[str, ...]] = {}
        self.stems: dict[str, tuple[str, ...]] = {}
        self.cjk: list[tuple[str, str]] = []
        for name, words in classes.items():
            for entry in words:
                if _CJK.search(entry):
                    self.cjk.append((entry, name))
                    continue
                stem = entry.endswith("*")
                key = normalize(entry.rstrip("*"))
                table = self.stems if stem else self.grams
                if key and name not in table.get(key, ()):
                    table[key] = (*table.get(key, ()), name)
        self.stem_starts = tuple(self.stems)

    def find(self, text: str) -> list[tuple[str, str]]:
        """(class, entry found) for every entry in normalized ``text``, left to right."""
        out: list[tuple[str, str]] = []
        tokens = text.split()
        grams, stems = self.grams, self.stem_starts
        for i, token in enumerate(tokens):
            if token.isdigit() or len(token) > 30:  # numbers, ids, tokens: no entry starts so
                continue
            gram = token
            for j in range(i + 1, min(i + _MAX_GRAM, len(tokens)) + 1):
                if j > i + 1:
                    gram = f"{gram} {tokens[j - 1]}"
                hit = grams.get(gram)
                if hit:
                    out.extend((c, gram) for c in hit)
            if stems and token.startswith(stems):
                for stem, names in self.stems.items():
                    if token.startswith(stem):
                        out.extend((c, token) for c in names)
        if self.cjk and not text.isascii():
            out.extend((c, s) for s, c in self.cjk if s in text)
        return out

    def search_all(self, text: str) -> list[str]:
        """Every entry found in normalized ``text``."""
        return [entry for _, entry in self.find(text)]

    def search(self, text: str) -> str | None:
        """The first entry found in normalized ``text``, else None."""
        found = self.find(text)
        return found[0][1] if found else None


# Each class: English, then de, fr, es, it, pt, nl, pl, sv, ru, zh/ja. Stems end with "*".
_WORDS: dict[str, list[str]] = {
    "password_reset": [
        "forgot password", "forgot your password", "forgotten password", "forgot my password",
        "lost password", "lost your password", "reset password", "reset your password",
        "reset my password", "password reset", "recover password", "password recovery",
        "recover account", "recover your account", "change password", "change your password",
        "new password", "trouble signing in", "can t sign in", "can t log in",
        "passwort vergessen", "kennwort vergessen", "passwort zurucksetzen",
        "passwort andern", "mot de passe oublie", "reinitialiser le mot de passe",
        "reinitialiser mot de passe", "mot de passe perdu", "nouveau mot de passe",
        "olvide mi contrasena", "olvidaste tu contrasena", "olvido su contrasena",
        "recuperar contrasena", "restablecer contrasena", "nueva contrasena",
        "password dimenticata", "hai dimenticato la password", "recupera password",
        "reimposta password", "esqueci minha senha", "esqueceu sua senha", "esqueceu a senha",
        "recuperar senha", "redefinir senha", "nova senha", "wachtwoord vergeten",
        "wachtwoord herstellen", "nie pamietam hasła", "przypomnij hasło", "glomt losenordet",
        "забыли пароль", "восстановить пароль", "忘记密码", "パスワードを忘れ", "重置密码",
    ],
    "destructive": [
        "delet*", "remov*", "erase", "erasure", "destroy*", "purge", "wipe", "discard",
        "deactivat*", "unsubscri*", "opt out", "optout", "logout", "log out", "logoff",
        "log off", "sign out", "signout", "sign off", "exit", "cancel*", "reset", "trash",
        "empty trash", "empty cart", "empty basket", "clear cart", "clear history",
        "close account", "close my account", "close session", "end session",
        "stop emails", "stop these emails", "stop all emails", "stop receiving", "terminate",
        "revok*", "unlink", "disconnect",
        "leave group", "approve", "reject", "unpublish", "ban", "mark as read", "mark all read",
        "mark all as read", "dismiss", "revert", "rollback", "undo", "destroy",
        "loschen", "losche", "loesch*", "entfern*", "abmelden", "ausloggen", "abmeldung",
        "abbestellen", "kundig*", "stornier*", "zurucksetzen", "deaktivier*", "austragen",
        "vernichten", "leeren",
        "supprim*", "effac*", "retirer", "retirez", "deconnex*", "deconnect*", "desabonn*",
        "desinscri*", "desactiv*", "annul*", "reinitialis*", "resili*", "vider",
        "elimin*", "borrar", "borra", "borre", "quitar", "quita", "cerrar sesion", "salir",
        "dar de baja", "darse de baja", "darme de baja", "desuscri*", "restablecer", "vaciar",
        "rimuov*", "esci", "disconnett*", "disiscri*", "disattiv*", "reimpost*", "svuota",
        "excluir", "exclua", "apagar", "apague", "sair", "desconect*", "descadastr*",
        "redefinir", "esvaziar", "verwijder*", "uitloggen", "uitschrijven", "afmelden",
        "opzeggen", "deactiv*", "resetten", "usun", "wyloguj*", "anuluj", "wypisz",
        "ta bort", "radera", "logga ut", "avregistrera", "avbryt", "удалить", "удалить аккаунт",
        "выйти", "выход", "отписаться", "отменить", "сбросить",
        "删除", "削除", "退出", "注销", "ログアウト", "取消", "退会",
    ],
    "payment": [
        "buy", "buy now", "purchas*", "order now", "place order", "place your order",
        "submit order", "confirm order", "complete order", "order", "orders", "pre order",
        "preorder", "checkout", "check out", "add to cart", "add to basket", "add to bag",
        "add to trolley", "cart", "basket", "pay", "pay now", "payment*", "payout",
        "card number", "credit card", "debit card", "cardholder", "card holder", "name on card",
        "security code", "cvv", "cvc", "cvv2", "expiry", "expiration date", "iban", "bic",
        "routing number", "sort code", "billing", "send money", "transfer*",
        "wire", "remit*", "withdraw*", "deposit", "donat*", "bid", "place bid", "book now",
        "reserve", "reservation", "reservations", "booking", "book this", "book a", "book your",
        "book online", "free trial", "start trial", "start your trial", "start free trial",
        "tip the", "send a tip", "leave a tip", "tip jar", "rent now", "coupon", "voucher",
        "promo code", "gift card", "subscribe and save",
        "kaufen", "kauf", "kaufe", "jetzt kaufen", "bestell*", "warenkorb", "in den warenkorb",
        "kasse", "zur kasse", "bezahl*", "zahlung*", "zahlen", "uberweis*", "ueberweis*",
        "spenden", "kreditkarte", "kartennummer", "jetzt buchen", "buchen", "reservieren",
        "acheter", "achetez", "achat", "commander", "commandez", "commande",
        "passer la commande", "panier", "ajouter au panier", "payer", "payez", "paiement",
        "caisse", "virement", "envoyer de l argent", "carte bancaire", "numero de carte",
        "faire un don", "reserver",
        "comprar", "compra", "compre", "pedido", "realizar pedido", "hacer pedido", "carrito",
        "anadir al carrito", "agregar al carrito", "pagar", "pago", "transferir",
        "enviar dinero", "tarjeta", "numero de tarjeta", "donar", "donacion", "reservar",
        "acquist*", "comprare", "ordina", "ordina ora", "ordine", "carrello",
        "aggiungi al carrello", "paga", "pagare", "pagamento", "bonifico", "trasferisci",
        "invia denaro", "carta di credito", "dona ora", "donazione", "prenot*",
        "finalizar compra", "carrinho", "adicionar ao carrinho", "fazer pedido",
        "enviar dinheiro", "cartao", "cartao de credito", "doar", "doacao",
        "kopen", "koop", "nu kopen", "winkelwagen", "winkelmand", "in winkelwagen", "betal*",
        "overmaken", "overboeken", "afrekenen", "doneren", "reserveren",
        "kup", "kupuje", "zamow*", "koszyk", "zapłac", "przelew", "płatnosc",
        "kop", "kop nu", "bestall", "varukorg", "betala", "betalning",
        "купить", "заказать", "заказ", "корзина", "в корзину", "оплатить", "оплата",
        "перевести деньги",
        "购买", "購入", "买", "支付", "付款", "结账", "結帳", "购物车", "カート", "注文", "下单",
    ],
    "signup": [
        "register", "registration", "sign up", "signup", "create account",
        "create an account", "create your account", "create my account", "new account",
        "open an account", "join", "join now", "join us", "join free", "enroll", "enrol",
        "registrieren", "registrierung", "konto erstellen", "konto anlegen", "neues konto",
        "inscription", "s inscrire", "inscrivez vous", "creer un compte", "creer mon compte",
        "registrarse", "registrate", "crear cuenta", "crear una cuenta", "registrati",
        "registrazione", "crea un account", "crea account", "cadastr*", "criar conta",
        "criar uma conta", "registrar", "registreren", "registreer", "account aanmaken",
        "rejestracja", "zarejestruj*", "załoz konto", "registrera", "skapa konto",
        "регистрация", "зарегистрироваться", "注册", "新規登録", "会員登録",
    ],
    "login": [
        "login", "log in", "log on", "logon", "sign in", "signin", "sign on",
        "remember me", "stay signed in", "keep me signed in", "keep me logged in",
        "continue with google", "sign in with", "my account", "username", "user name",
        "password", "passwort", "kennwort", "anmelden", "einloggen", "anmeldung",
        "benutzername", "connexion", "se connecter", "connectez vous", "mot de passe",
        "identifiant", "iniciar sesion", "inicia sesion", "entrar", "acceder", "contrasena",
        "usuario", "accedi", "accesso", "senha", "iniciar sessao", "inloggen", "log in",
        "wachtwoord", "gebruikersnaam", "zaloguj*", "hasło", "logga in", "losenord",
        "войти", "вход", "пароль", "登录", "登入", "ログイン", "パスワード", "密码",
    ],
    "subscribe": [
        "subscri*", "newsletter", "newsletters", "mailing list", "notify me", "get notified",
        "email alerts", "email me", "abonn*", "nieuwsbrief", "suscri*",
        "iscriv*", "abbona*", "assinar", "inscreva se", "inscrever se", "inschrijv*",
        "prenumerera", "zapisz sie", "subskrybuj", "подписаться", "订阅", "購読",
    ],
    "vote": [
        "vote", "votes", "voted", "upvote", "downvote", "vote up", "vote down", "thumbs up",
        "thumbs down", "rate this", "add to favorites", "add to favourites", "favorite",
        "favourite", "add to wishlist", "wishlist", "bookmark this", "report abuse",
        "report spam", "report this", "flag as", "rsvp", "attend", "i m going", "abstimmen",
        "stimme abgeben", "bewerten",
        "gefallt mir", "voter", "votez", "j aime", "votar", "voto", "me gusta", "vota",
        "votare", "mi piace", "curtir", "stemmen", "glosuj", "rosta",
        "голосовать", "投票", "いいね", "点赞",
    ],
    "contact": [
        "contact*", "message", "messages", "comment", "comments", "feedback", "reply",
        "respond", "enquiry", "inquiry", "send", "send message", "write a review",
        "submit review", "leave a reply", "leave a comment", "post comment", "post a comment",
        "post reply", "ask a question", "get in touch", "kontakt*", "nachricht*", "kommentar*",
        "senden", "absenden", "antworten", "anfrage", "ruckmeldung", "contactez", "commentaire",
        "envoyer", "repondre", "votre message", "contacto", "mensaje", "comentar*", "enviar",
        "responder", "contatt*", "messaggio", "commento", "invia", "inviare", "rispondi",
        "contato", "mensagem", "reactie", "verzenden", "versturen", "opmerking",
        "wiadomosc", "wyslij", "komentarz", "skicka", "meddelande", "сообщение",
        "отправить", "комментарий", "留言", "评论", "お問い合わせ", "送信",
    ],
    "search": [
        "search*", "find", "finder", "lookup", "look up", "query", "keyword", "keywords",
        "browse", "locate", "explore", "suche", "suchen", "suchbegriff*",
        "suchwort*", "finden", "stichwort*", "recherch*",
        "cherch*", "trouver", "mot cle", "mots cles", "busc*", "busqueda", "encontrar",
        "palabra clave", "cerca", "ricerca", "cercare", "trova", "pesquis*", "procurar",
        "zoek*", "vinden", "trefwoord", "szukaj", "wyszukaj", "sok", "soka", "поиск",
        "найти", "искать", "搜索", "検索", "查询", "搜尋", "查找",
    ],
    "neutral": [
        "filter*", "sort*", "refine", "apply", "show", "view", "display", "go", "ok",
        "next", "previous", "prev", "page", "more", "load more", "list", "results", "update",
        "refresh", "select", "choose", "change", "switch", "language", "currency", "per page",
        "filtern", "sortieren", "anzeigen", "weiter", "zuruck", "seite", "mehr", "filtrer",
        "trier", "afficher", "voir", "suivant", "precedent", "filtrar", "ordenar", "mostrar",
        "ver", "siguiente", "anterior", "pagina", "filtra", "mostra", "vedi", "avanti",
        "successivo", "proximo", "filteren", "sorteren", "toon", "bekijk", "volgende", "vorige",
        "filtruj", "sortuj", "pokaz", "visa", "sortera", "показать", "фильтр", "筛选", "显示",
    ],
}
_LEX = {name: _Lexicon(entries) for name, entries in _WORDS.items()}
#: words of a form that writes content: refused by POST (class ``edit``), harmless by GET
_WRITE = _Lexicon([
    "add", "add new", "insert", "create", "new", "save", "edit", "modify", "post", "publish",
    "upload", "write", "submit changes", "rename", "hinzufugen", "einfugen", "speichern",
    "erstellen", "anlegen", "bearbeiten", "ajouter", "inserer", "enregistrer", "creer",
    "modifier", "publier", "anadir", "agregar", "insertar", "guardar", "crear", "editar",
    "publicar", "aggiungi", "inserisci", "salva", "crea", "modifica", "pubblica",
    "adicionar", "inserir", "salvar", "criar", "toevoegen", "invoegen", "opslaan", "aanmaken",
    "bewerken", "dodaj", "zapisz", "utworz", "edytuj", "lagg till", "spara", "skapa",
    "redigera", "добавить", "сохранить", "создать", "редактировать", "添加", "保存", "创建",
    "编辑", "追加", "作成", "編集",
])
_ALL = _Lexicon(_WORDS)
#: harmful classes, in the order a reason is given when several apply
HARMFUL_ORDER = ("password_reset", "destructive", "payment", "signup", "login", "subscribe",
                 "vote")
#: a label that is only one of these words is a reaction or an action
_SHORT_LABELS = {
    "vote": {"like", "unlike", "star", "unstar", "flag", "report", "upvote", "pin",
             "unpin", "mi piace", "j aime", "me gusta", "curtir",
             "gefallt mir", "leuk", "polub", "lubie to", "follow", "unfollow", "watch",
             "unwatch", "subscribe"},
    "destructive": {"x", "close", "clear", "clear all", "block", "mute", "hide", "archive",
                    "kick", "lock", "unlock", "suspend", "disable", "publish", "edit and save",
                    "save", "confirm", "yes", "yes i m sure", "i m sure"},
}
# "sort order", "order by", "ordina per": a sort, not a purchase
_SORT = re.compile(r"(?<!\S)(?:sort(?:ed)? order|order(?:ed)? by|orderby|sort by|in order|"
                   r"ascending order|descending order|alphabetical order|reverse order|"
                   r"order asc|order desc|ordina per|ordinare per|ordenar por|trier par)(?!\S)")
_SORTWORDS = re.compile(r"(?<!\S)(?:sort\w*|asc|desc|ascending|descending|newest|oldest|"
                        r"relevance|sortieren|trier|ordenar|ordinare|sorteren)(?!\S)")
_SORT_NAMES = {"order", "orderby", "order by", "sort", "sortorder", "sort order", "dir"}
_ORDER = re.compile(r"(?<!\S)(?:order|orders|ordine|ordina)(?!\S)")

_PASSWORD = _Lexicon(["password*", "passwd", "pwd", "passwort*", "kennwort*", "mot de passe",
                      "contrasena", "senha", "wachtwoord", "hasło", "losenord", "пароль",
                      "passcode", "pin code", "密码", "パスワード"])
_PASSWORD_NAMES = {"pw", "pass", "pin", "pword", "passw", "pwd", "secret"}
_PERSONAL = _Lexicon([
    "name", "full name", "fullname", "first name", "firstname", "last name", "lastname",
    "surname", "your name", "email", "e mail", "mail", "email address", "phone", "telephone",
    "tel", "mobile", "cell", "address", "street", "birthday", "birthdate", "date of birth",
    "dob", "ssn", "company", "website", "vorname", "nachname", "telefon", "adresse", "strasse",
    "geburtsdatum", "nom", "prenom", "courriel", "nombre", "apellido", "apellidos",
    "telefono", "correo", "direccion", "nome", "cognome", "indirizzo", "sobrenome", "telefone",
    "endereco", "naam", "voornaam", "achternaam", "telefoon", "adres", "imie", "nazwisko",
    "имя", "фамилия", "телефон",
])
_CONTACT_FIELDS = _Lexicon(["message", "comment", "comments", "body", "subject", "feedback",
                            "your message", "nachricht", "betreff", "commentaire", "sujet",
                            "mensaje", "asunto", "messaggio", "oggetto", "mensagem", "assunto",
                            "bericht", "onderwerp"])
_PAYMENT_FIELDS = _Lexicon(["card", "cc", "ccnum", "cc number", "cvv", "cvc", "iban", "exp month",
                            "exp year", "amount", "recipient", "beneficiary", "payee", "quantity",
                            "qty", "betrag", "montant", "importe", "importo", "valor", "bedrag"])
_SEARCH_FIELDS = {"q", "s", "k", "kw", "query", "search", "keyword", "keywords", "term", "terms",
                  "search term", "searchterm", "text", "w", "wd", "p"}
_STATE_NAMES = {"action", "op", "do", "cmd", "command", "task", "mode", "method", "event",
                "intent", "act", "operation", "submit", "what"}
#: words that name a topic in a link ("Password managers", "/p/7 payment"), not an action
_LINK_NOUNS = frozenset(normalize(w) for w in (
    "password", "passwords", "passwort", "kennwort", "mot de passe", "contraseña", "senha",
    "wachtwoord", "пароль", "payment", "payments", "paiement", "pagamento", "pago", "zahlung",
    "betaling", "deposit", "billing", "reservation", "reservations", "booking", "registration",
    "newsletter", "newsletters", "username", "user name", "order", "orders", "donation",
    "donations"))
_URL_ACTIONS = {"del", "rm", "kill", "unsub", "signoff"}  # a whole path segment: an action
_TEXT_KINDS = frozenset({"text", "search", "email", "tel", "url", "number", ""})
_FINITE_KINDS = frozenset({"select", "radio", "checkbox"})
_HEX = re.compile(r"^[0-9a-fA-F]{8,}$")


def token_like(value: str) -> bool:
    """A value that looks like a token, key or secret rather than words: long, hex, or mixed
    letters and digits of 16+ characters (CSRF tokens, API keys, session ids)."""
    value = value or ""
    if _HEX.match(value):
        return True
    return len(value) >= 16 and " " not in value.strip()


_SECRET_NAMES = {"csrf", "xsrf", "token", "nonce", "secret", "apikey", "api key", "key",
                 "session", "sid", "auth", "signature", "sig", "viewstate", "eventvalidation",
                 "authenticity", "hash", "otp"}


def secret_fields(sent: Mapping[str, Any], hidden: Iterable[str]) -> set[str]:
    """The names, among the fields ``sent``, whose values are secrets rather than data: a hidden
    field whose value looks like a token (:func:`token_like`) or whose name says so (``csrf``,
    ``authenticity_token``, ``api_key``, ``__VIEWSTATE``…). Kept off items and the visit store
    unless ``HIDDENWEB_KEEP_TOKENS``."""
    hidden = set(hidden)
    out = set()
    for name, value in sent.items():
        words = set(normalize(str(name)).split())
        named = bool(words & _SECRET_NAMES) or normalize(str(name)).replace(" ", "") in \
            _SECRET_NAMES
        if name in hidden and (named or token_like("" if value is None else str(value))):
            out.add(name)
        elif named and words & {"csrf", "xsrf", "token", "nonce", "secret", "apikey"}:
            out.add(name)
    return out


def _harmful(text: str, nouns: frozenset[str] = frozenset()) -> list[str]:
    """Harmful classes whose words ``text`` (normalized) carries, in :data:`HARMFUL_ORDER`;
    a match that is one of ``nouns`` (a link's topic: "password", "payment") does not count."""
    found = {c for c, entry in _ALL.find(text) if entry not in nouns}
    if "payment" in found and _ORDER.search(text):
        probe = _SORT.sub(" ", text)
        if _SORTWORDS.search(probe):
            probe = _ORDER.sub(" ", probe)
        if not any(entry not in nouns for entry in _LEX["payment"].search_all(probe)):
            found.discard("payment")
    ordered = [name for name in HARMFUL_ORDER if name in found]
    if "password_reset" not in found and _PASSWORD.search(text) and _RESET.search(text):
        ordered.insert(0, "password_reset")
    return ordered


_RESET = re.compile(
    r"(?<!\S)(?:forgot\w*|reset|recover\w*|lost|vergessen|oublie|olvid\w*|"
    r"dimenticat\w*|esquec\w*|vergeten|recuper\w*|restablec\w*|redefin\w*)(?!\S)")


def _short(text: str) -> list[str]:
    """Classes of a label that is only a short action word ("Like", "Yes, I'm sure")."""
    return [name for name, labels in _SHORT_LABELS.items() if text in labels]


# -- verdicts -------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Verdict:
    """What the policy says of a link or a stored request."""

    allowed: bool
    kind: str  # a class of FORM_CLASSES ("neutral" for a plain link)
    reason: str | None = None  # the refused class, when not allowed
    evidence: str = ""  # the word or sign that decided


@dataclass(frozen=True)
class FormVerdict(Verdict):
    """What the policy says of a form: ``button`` is the index (among the form's submit
    buttons) of the one to click, ``None`` when the form has none (submitted by Enter);
    ``refused_buttons`` the (index, reason) of buttons never clicked."""

    button: int | None = None
    refused_buttons: tuple[tuple[int, str], ...] = ()
    has_password: bool = False


class FieldLike(Protocol):
    name: str
    kind: str
    default: str
    descriptors: list[str]


class ButtonLike(Protocol):
    name: str
    value: str
    text: str
    action: str
    method: str


class FormLike(Protocol):
    """What :func:`judge_form` reads of a form (``hiddenweb.forms.FormInfo`` has it)."""

    action: str
    method: str
    text: str

    @property
    def fields(self) -> Sequence[FieldLike]: ...

    @property
    def buttons(self) -> Sequence[ButtonLike]: ...


def url_words(url: str) -> str:
    """Normalized words of a URL's path and query (keys and values), not its host."""
    parts = urlsplit(url or "")
    query = " ".join(f"{k} {v}" for k, v in parse_qsl(parts.query, keep_blank_values=True))
    return normalize(f"{unquote_plus(parts.path)} {query} {unquote_plus(parts.fragment)}")


def permitted(kind: str, method: str, allow: frozenset[str] = frozenset()) -> bool:
    """Whether a submission of class ``kind`` by ``method`` may be sent."""
    if kind in allow:
        return True
    if method.upper() == "POST":
        return kind in POST_ALLOWED
    return kind not in GET_REFUSED


def _field_words(f: FieldLike) -> tuple[str, str]:
    """(name words, label words) of a field: name and id; label, placeholder, aria-label."""
    d = list(f.descriptors) + [""] * 6
    return normalize(f"{f.name} {d[2]}"), normalize(f"{d[0]} {d[3]} {d[4]}")


def _is_password(f: FieldLike) -> bool:
    if f.kind == "password":
        return True
    if f.kind not in _TEXT_KINDS:
        return False
    name, label = _field_words(f)
    if set(normalize(f.name).split()) & _PASSWORD_NAMES:
        return True
    nearby = normalize(f.descriptors[5]) if len(f.descriptors) > 5 else ""
    return bool(_PASSWORD.search(name) or _PASSWORD.search(label)
                or (nearby and len(nearby.split()) <= 4 and _PASSWORD.search(nearby)))


def _hidden_state(f: FieldLike) -> str:
    """Words of a hidden field that carries an action: ``_method=DELETE``, ``action=remove``."""
    name = normalize(f.name)
    if name in _STATE_NAMES or name.endswith(" action"):
        value = f.default or ""
        if not token_like(value):
            return normalize(value)
    return ""


@dataclass
class _Facts:
    """What a form's fields say, gathered once for every way of submitting it."""

    texts: list[str] = field(default_factory=list)
    passwords: int = 0
    personal: bool = False
    contact_fields: bool = False
    payment_fields: bool = False
    search_fields: bool = False
    only_email: bool = False
    free: int = 0
    finite: int = 0
    textarea: int = 0


def _facts(form: FormLike) -> _Facts:
    facts = _Facts()
    emails = 0
    for f in form.fields:
        name, label = _field_words(f)
        if f.kind in _FINITE_KINDS or normalize(f.name) in _SORT_NAMES:
            # a select or radio named "order" is a sort order, not a purchase
            name, label = _ORDER.sub(" ", name), _ORDER.sub(" ", label)
        if f.kind == "hidden":
            state = _hidden_state(f)
            facts.texts.append(f"{name} {state}")
            if normalize(f.name) == "method" and state in ("delete", "put", "patch"):
                facts.texts.append("delete")
            continue
        facts.texts.append(f"{name} {label}")
        if _is_password(f):
            facts.passwords += 1
            continue
        if f.kind in _FINITE_KINDS:
            facts.finite += 1
        elif f.kind == "textarea":
            facts.textarea += 1
            facts.contact_fields = True
        elif f.kind in _TEXT_KINDS:
            facts.free += 1
            if f.kind in ("email", "tel") or _PERSONAL.search(name) or _PERSONAL.search(label):
                facts.personal = True
            if f.kind == "email" or "mail" in normalize(f.name).split():
                emails += 1
        if _CONTACT_FIELDS.search(name):
            facts.contact_fields = True
        if _PAYMENT_FIELDS.search(name) or _PAYMENT_FIELDS.search(label):
            facts.payment_fields = True
        if name in _SEARCH_FIELDS or normalize(f.name) in _SEARCH_FIELDS or f.kind == "search":
            facts.search_fields = True
    facts.only_email = facts.free == 1 and emails == 1 and not facts.finite
    return facts


def _own_text(form: FormLike) -> str:
    """The form's text without its first button's label (``FormInfo.text`` appends it)."""
    text, buttons = form.text or "", list(form.buttons)
    if buttons and buttons[0].text and text.rstrip().endswith(buttons[0].text.strip()):
        text = text.rstrip()[: -len(buttons[0].text.strip())]
    return text


def judge_form(form: FormLike, allow: frozenset[str] = frozenset()) -> FormVerdict:
    """The policy's verdict on ``form``: every way to submit it (each submit button, or Enter
    when it has none) is judged as the form's own words plus that button's label, name, value
    and ``formaction``, sent by that button's method; the first allowed one is chosen."""
    facts = _facts(form)
    base = [normalize(_own_text(form)), url_words(form.action), *facts.texts]
    buttons = list(form.buttons)
    if not buttons:
        kind, evidence = _classify(" ".join(base), normalize(form.text), facts, form.method)
        ok = permitted(kind, form.method, allow)
        return FormVerdict(ok, kind, None if ok else kind, evidence, None, (),
                           facts.passwords > 0)
    refused: list[tuple[int, str]] = []
    chosen: tuple[int, str, str] | None = None
    first: tuple[str, str] | None = None
    for i, b in enumerate(buttons):
        label = normalize(b.text)
        own = f"{label} {normalize(b.name)} {normalize(b.value)}"
        if b.action != form.action:
            own += " " + url_words(b.action)
        kind, evidence = _classify(" ".join([*base, own]), label, facts, b.method)
        first = first or (kind, evidence)
        if permitted(kind, b.method, allow):
            chosen = chosen or (i, kind, evidence)
        else:
            refused.append((i, kind))
    if chosen is None:
        assert first is not None
        return FormVerdict(False, first[0], refused[0][1], first[1], None, tuple(refused),
                           facts.passwords > 0)
    return FormVerdict(True, chosen[1], None, chosen[2], chosen[0], tuple(refused),
                       facts.passwords > 0)


def _classify(text: str, label: str, facts: _Facts, method: str) -> tuple[str, str]:
    """(class, evidence) of a submission whose words are ``text`` (``label``: its button's)."""
    harmful = _harmful(text) + _short(label)
    if facts.payment_fields and "payment" not in harmful:
        harmful.append("payment")
    post = method.upper() == "POST"
    if harmful:
        first = harmful[0]
        if facts.passwords and first in ("subscribe", "vote"):
            first = "signup" if facts.passwords >= 2 else "login"
        return first, (_LEX[first].search(text) or label or first)
    if facts.passwords:
        return ("signup" if facts.passwords >= 2 else "login"), "password field"
    if facts.textarea or (facts.contact_fields and (facts.personal or post)):
        return "contact", "message field"
    writes = _WRITE.search(text) if post else None
    if writes:  # a POST that adds or changes content ("Add note", "insert into", "Save")
        return "edit", writes
    searchy = _LEX["search"].search(text)
    if searchy or facts.search_fields:
        return "search", searchy or "search field"
    contacty = _LEX["contact"].search(text)
    if contacty and (facts.personal or post):
        return "contact", contacty
    if facts.personal:
        if facts.only_email:
            return "subscribe", "e-mail field alone"
        return "unknown", "personal data"
    neutral = _LEX["neutral"].search(text)
    if facts.finite and not facts.free and (neutral or not post):
        # by POST only with a word that says so: a poll or an RSVP is finite fields too
        return "filter", neutral or "finite fields"
    if neutral:
        return "neutral", neutral
    return "unknown", "no known word"


def judge_link(url: str, label: str = "", markup: Mapping[str, str] | None = None,
               allow: frozenset[str] = frozenset()) -> Verdict:
    """The policy's verdict on following a link (or clicking a button outside a form):
    ``label`` is its text, title or ``aria-label``; ``markup`` its attributes, if known."""
    if not markup:
        return _judge_words(url, label, allow)
    method = (markup.get("data-method") or markup.get("data-turbo-method") or "get").lower()
    if method != "get" and "destructive" not in allow:
        return Verdict(False, "destructive", "destructive", f"data-method={method}")
    if ("data-confirm" in markup or "data-turbo-confirm" in markup) \
            and "destructive" not in allow:
        return Verdict(False, "destructive", "destructive", "data-confirm")
    return _judge_words(url, label, allow)


@lru_cache(maxsize=1 << 15)
def _judge_words(url: str, label: str, allow: frozenset[str]) -> Verdict:
    """:func:`judge_link` on words alone (cached: a site's navigation repeats on every page)."""
    words = normalize(label)
    if len(words.split()) > 3 and set(_LEX["payment"].search_all(words)) <= {"order", "orders"}:
        words = _ORDER.sub(" ", words)  # a title ("The Order of the Phoenix"), not an action
    segments = {seg.lower() for seg in urlsplit(url or "").path.split("/")}
    if segments & _URL_ACTIONS and "destructive" not in allow:
        return Verdict(False, "destructive", "destructive", "/".join(segments & _URL_ACTIONS))
    text = f"{words} {url_words(url)}"
    for kind in _harmful(text, _LINK_NOUNS) + _short(words):
        if kind in LINK_REFUSED and kind not in allow:
            return Verdict(False, kind, kind, _LEX[kind].search(text) or words)
    return Verdict(True, "neutral")


_MARKED = ("//a[@href][@title or @aria-label or @data-method or @data-confirm"
           " or @data-turbo-method or @data-turbo-confirm]")
_MARKUP_KEYS = ("data-method", "data-confirm", "data-turbo-method", "data-turbo-confirm")


def link_markup(selector: Any, base_url: str) -> dict[str, tuple[str, dict[str, str]]]:
    """Absolute URL → (``title`` and ``aria-label`` text, the ``data-method``/``data-confirm``
    attributes) of a page's links that have any, for :func:`judge_link` (a link extractor keeps
    only the anchor text). ``selector``: the page's parsel ``Selector``; empty when it is not
    markup."""
    out: dict[str, tuple[str, dict[str, str]]] = {}
    try:
        anchors = selector.xpath(_MARKED)
    except (ValueError, AttributeError):
        return out
    for a in anchors:
        attrs = a.attrib
        url = urljoin(base_url, attrs.get("href", "").strip())
        label = " ".join(attrs.get(k, "") for k in ("title", "aria-label")).strip()
        marks = {k: attrs[k] for k in _MARKUP_KEYS if k in attrs}
        old = out.get(url)
        if old is not None:  # the same URL twice: keep every word and mark
            label, marks = f"{old[0]} {label}".strip(), {**old[1], **marks}
        out[url] = (label, marks)
    return out


def judge_replay(method: str, url: str, fields: Mapping[str, Any] | None,
                 form_class: str | None = None, allow: frozenset[str] = frozenset()
                 ) -> Verdict:
    """The policy's verdict on replaying a stored request (``-a recrawl=1``): its URL as a link's;
    a submission only when the class its form was given when it was made (``form_class``, kept
    by the store) is one the policy sends by ``method`` — a POST without one is never replayed —
    and no field name or value is harmful or a password."""
    link = judge_link(url, allow=allow)
    if not link.allowed:
        return link
    if form_class is None:
        if method.upper() == "POST" and "unknown" not in allow:
            return Verdict(False, "unknown", "unknown", "no form class stored")
        if not fields:
            return link
    elif not permitted(form_class, method, allow):
        return Verdict(False, form_class, form_class, "stored form class")
    names = [str(n) for n in (fields or {})]
    if any(set(normalize(n).split()) & _PASSWORD_NAMES or _PASSWORD.search(normalize(n))
           for n in names) and "login" not in allow:
        return Verdict(False, "login", "login", "password field")
    words = " ".join(normalize(n) for n in names)
    for name, value in (fields or {}).items():
        text = "" if value is None else str(value)
        if not token_like(text):
            words += " " + normalize(text)
        if normalize(str(name)) == "method" and text.lower() in ("delete", "put", "patch"):
            words += " delete"
    for kind in _harmful(words):
        if not permitted(kind, method, allow):
            return Verdict(False, kind, kind, _LEX[kind].search(words) or kind)
    return Verdict(True, form_class or "neutral")


# -- configuration --------------------------------------------------------------------------------
@dataclass(frozen=True)
class SafetyPolicy:
    """The policy with its opt-ins (``HIDDENWEB_FORMS_ALLOW``)."""

    allow: frozenset[str] = frozenset()

    @classmethod
    def from_settings(cls, settings: BaseSettings) -> SafetyPolicy:
        """Read ``HIDDENWEB_FORMS_ALLOW`` (and its deprecated alias
        ``HIDDENWEB_UNSAFE_FORM_CLASSES``); raise ``ValueError`` naming an unknown class."""
        from hiddenweb import defaults

        allow = set(settings.getlist("HIDDENWEB_FORMS_ALLOW", defaults.HIDDENWEB_FORMS_ALLOW))
        unknown = sorted(c for c in allow if c not in FORM_CLASSES)
        if unknown:
            raise ValueError(f"HIDDENWEB_FORMS_ALLOW: unknown class {', '.join(unknown)} "
                             f"(known: {', '.join(FORM_CLASSES)})")
        legacy = settings.getlist("HIDDENWEB_UNSAFE_FORM_CLASSES",
                                  defaults.HIDDENWEB_UNSAFE_FORM_CLASSES)
        if legacy:
            bad = sorted(c for c in legacy if c not in LEGACY_CLASSES)
            if bad:
                raise ValueError(f"HIDDENWEB_UNSAFE_FORM_CLASSES: unknown class "
                                 f"{', '.join(bad)} (known: {', '.join(LEGACY_CLASSES)})")
            logger.warning("HIDDENWEB_UNSAFE_FORM_CLASSES is deprecated: use "
                           "HIDDENWEB_FORMS_ALLOW (docs/safety.md)")
            for c in legacy:
                allow.update(LEGACY_CLASSES[c])
        return cls(frozenset(allow))

    def form(self, form: FormLike) -> FormVerdict:
        return judge_form(form, self.allow)

    def link(self, url: str, label: str = "", markup: Mapping[str, str] | None = None
             ) -> Verdict:
        return judge_link(url, label, markup, self.allow)

    def replay(self, method: str, url: str, fields: Mapping[str, Any] | None,
               form_class: str | None = None) -> Verdict:
        return judge_replay(method, url, fields, form_class, self.allow)
