"""The safety policy's words (:mod:`hiddenweb.safety`): what a text, a name or a value says.

Contract
--------
* :func:`normalize`: any text as lower-case words without accents, joined by single spaces;
  every lookup here reads normalized text.
* :data:`LEX`: a lexicon per class that has words (the harmful classes, ``contact``, ``search``,
  ``neutral``): words, phrases, stems (``delet*``) and CJK strings, in English and the common
  words of de, fr, es, it, pt, nl, pl, sv, ru and zh/ja; ``.search(text)`` gives the first entry
  found (a verdict's evidence), ``.search_all(text)`` every one.
* :func:`harmful_classes`: the harmful classes a text carries, in :data:`HARMFUL_ORDER` ("sort
  order", "order by" are not a purchase); :func:`short_label_classes`: the classes of a label
  that is only a short action word ("Like", "Yes, I'm sure").
* Words of fields and URLs: :data:`PASSWORD`, :data:`PASSWORD_NAMES`, :data:`PERSONAL`,
  :data:`CONTACT_FIELDS`, :data:`PAYMENT_FIELDS`, :data:`SEARCH_FIELDS`, :data:`SORT_NAMES`,
  :data:`ORDER`, :data:`STATE_NAMES` (a hidden field that carries an action),
  :data:`LINK_NOUNS` (a link's topic, not an action), :data:`URL_ACTIONS` (a path segment that
  is an action), :data:`MORE` (a control that shows more of a list: not a safety class).
* :func:`token_like` and :func:`secret_fields`: values that are tokens or secrets, not words.

Pure: no Scrapy, no I/O. A lookup costs a few dictionary probes per word, whatever the
lexicon's size.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Mapping
from functools import lru_cache
from typing import Any

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
        # reading data out in another format: an export or download sends nothing new
        "export", "download", "exportieren", "herunterladen", "exporter", "telecharger",
        "exportar", "descargar", "esporta", "scarica", "baixar", "exporteren", "downloaden",
        "eksportuj", "pobierz", "exportera", "ladda ner", "экспорт", "скачать", "导出", "下载",
        "エクスポート", "ダウンロード",
    ],
}
LEX = {name: _Lexicon(entries) for name, entries in _WORDS.items()}
#: words of a form that writes content: refused by POST (class ``edit``), harmless by GET
WRITE = _Lexicon([
    "add", "add new", "insert", "create", "new", "save", "edit", "modify", "post", "publish",
    "upload", "write", "submit changes", "rename", "restore", "wiederherstellen", "restaurer",
    "restaurar", "ripristina", "hinzufugen", "einfugen", "speichern",
    "erstellen", "anlegen", "bearbeiten", "ajouter", "inserer", "enregistrer", "creer",
    "modifier", "publier", "anadir", "agregar", "insertar", "guardar", "crear", "editar",
    "publicar", "aggiungi", "inserisci", "salva", "crea", "modifica", "pubblica",
    "adicionar", "inserir", "salvar", "criar", "toevoegen", "invoegen", "opslaan", "aanmaken",
    "bewerken", "dodaj", "zapisz", "utworz", "edytuj", "lagg till", "spara", "skapa",
    "redigera", "добавить", "сохранить", "создать", "редактировать", "添加", "保存", "创建",
    "编辑", "追加", "作成", "編集",
    "recover", "herstellen", "przywroc", "aterstall", "восстановить", "恢复", "復元",
])
_ALL = _Lexicon(_WORDS)
#: words of an API endpoint's path that say a script's POST to it reads (an API's
#: ``runs/search``, ``items/query``, ``suggest``): besides the ``search`` words, the verbs APIs
#: name their reads with (:func:`hiddenweb.safety.judge_script_request`)
SCRIPT_READS = _Lexicon([
    "get", "list", "fetch", "read", "count", "lookup", "filter*", "suggest*", "autocomplete",
    "complete", "preview", "resolve", "validate", "render",
])
#: words of an API endpoint's path, or of a script's POST body, that say it changes the site,
#: besides :data:`WRITE` and the harmful classes: the verbs APIs name their writes with
SCRIPT_WRITES = _Lexicon([
    "set", "unset", "update", "upsert", "log", "put", "patch", "sync", "mark", "track",
    "record", "send", "submit", "import", "move", "copy", "merge", "clear", "reset", "archive",
    "assign", "unassign", "approve", "reject", "close", "reopen", "lock", "unlock", "start",
    "stop", "run", "execute", "exec", "trigger", "enqueue", "schedule", "grant", "revoke",
    "register", "attach", "detach", "link", "unlink", "share", "pin", "unpin", "star",
    "unstar", "hide", "unhide", "seen", "ack", "dismiss", "commit", "rollback", "drop",
    "truncate", "replace", "increment", "decrement", "batch", "bulk", "mutation", "mutate",
])
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
SORT_NAMES = {"order", "orderby", "order by", "sort", "sortorder", "sort order", "dir"}
ORDER = re.compile(r"(?<!\S)(?:order|orders|ordine|ordina)(?!\S)")

PASSWORD = _Lexicon(["password*", "passwd", "pwd", "passwort*", "kennwort*", "mot de passe",
                      "contrasena", "senha", "wachtwoord", "hasło", "losenord", "пароль",
                      "passcode", "pin code", "密码", "パスワード"])
PASSWORD_NAMES = {"pw", "pass", "pin", "pword", "passw", "pwd", "secret"}
PERSONAL = _Lexicon([
    "name", "full name", "fullname", "first name", "firstname", "last name", "lastname",
    "surname", "your name", "email", "e mail", "mail", "email address", "phone", "telephone",
    "tel", "mobile", "cell", "address", "street", "birthday", "birthdate", "date of birth",
    "dob", "ssn", "company", "website", "vorname", "nachname", "telefon", "adresse", "strasse",
    "geburtsdatum", "nom", "prenom", "courriel", "nombre", "apellido", "apellidos",
    "telefono", "correo", "direccion", "nome", "cognome", "indirizzo", "sobrenome", "telefone",
    "endereco", "naam", "voornaam", "achternaam", "telefoon", "adres", "imie", "nazwisko",
    "имя", "фамилия", "телефон",
])
CONTACT_FIELDS = _Lexicon(["message", "comment", "comments", "body", "subject", "feedback",
                            "your message", "nachricht", "betreff", "commentaire", "sujet",
                            "mensaje", "asunto", "messaggio", "oggetto", "mensagem", "assunto",
                            "bericht", "onderwerp"])
PAYMENT_FIELDS = _Lexicon(["card", "cc", "ccnum", "cc number", "cvv", "cvc", "iban", "exp month",
                            "exp year", "amount", "recipient", "beneficiary", "payee", "quantity",
                            "qty", "betrag", "montant", "importe", "importo", "valor", "bedrag"])
SEARCH_FIELDS = {"q", "s", "k", "kw", "query", "search", "keyword", "keywords", "term", "terms",
                  "search term", "searchterm", "text", "w", "wd", "p"}
STATE_NAMES = {"action", "op", "do", "cmd", "command", "task", "mode", "method", "event",
                "intent", "act", "operation", "submit", "what"}
#: words that name a topic in a link ("Password managers", "/p/7 payment"), not an action
LINK_NOUNS = frozenset(normalize(w) for w in (
    "password", "passwords", "passwort", "kennwort", "mot de passe", "contraseña", "senha",
    "wachtwoord", "пароль", "payment", "payments", "paiement", "pagamento", "pago", "zahlung",
    "betaling", "deposit", "billing", "reservation", "reservations", "booking", "registration",
    "newsletter", "newsletters", "username", "user name", "order", "orders", "donation",
    "donations"))
URL_ACTIONS = {"del", "rm", "kill", "unsub", "signoff"}  # a whole path segment: an action
#: words of a control that shows more of a list in place ("Load more", "Show more", "Next"):
#: not a safety class; :mod:`hiddenweb.browser.scroll` clicks such controls (the policy first)
MORE = _Lexicon([
    "load more", "show more", "see more", "view more", "more results", "more items",
    "more posts", "more stories", "more articles", "more comments", "more replies",
    "load older", "older posts", "older entries", "load next", "show next", "next",
    "next page", "more", "loadmore", "showmore", "load all", "show all", "view all",
    "mehr laden", "mehr anzeigen", "weitere laden", "weitere anzeigen", "mehr ergebnisse",
    "mehr", "weiter", "nachste", "nachste seite", "alle anzeigen",
    "charger plus", "voir plus", "afficher plus", "en voir plus", "plus de resultats",
    "suivant", "suivante", "page suivante", "tout afficher", "voir tout",
    "cargar mas", "ver mas", "mostrar mas", "mas resultados", "siguiente", "pagina siguiente",
    "ver todo", "carica altri", "carica altro", "mostra altri", "mostra di piu",
    "vedi altro", "vedi altri", "altri risultati", "successivo", "successiva",
    "pagina successiva", "avanti", "carregar mais", "ver mais", "mostrar mais",
    "mais resultados", "proximo", "proxima", "proxima pagina", "meer laden", "toon meer",
    "meer weergeven", "bekijk meer", "meer resultaten", "volgende", "volgende pagina",
    "załaduj wiecej", "pokaz wiecej", "wiecej", "nastepna", "nastepna strona", "dalej",
    "ladda fler", "visa fler", "visa mer", "fler resultat", "nasta", "nasta sida",
    "загрузить еще", "показать еще", "показать больше", "еще", "далее", "следующая",
    "следующая страница", "加载更多", "显示更多", "查看更多", "更多", "下一页", "もっと見る",
    "さらに表示", "次へ", "次のページ",
])
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


def harmful_classes(text: str, nouns: frozenset[str] = frozenset()) -> list[str]:
    """Harmful classes whose words ``text`` (normalized) carries, in :data:`HARMFUL_ORDER`;
    a match that is one of ``nouns`` (a link's topic: "password", "payment") does not count."""
    found = {c for c, entry in _ALL.find(text) if entry not in nouns}
    if "payment" in found and ORDER.search(text):
        probe = _SORT.sub(" ", text)
        if _SORTWORDS.search(probe):
            probe = ORDER.sub(" ", probe)
        if not any(entry not in nouns for entry in LEX["payment"].search_all(probe)):
            found.discard("payment")
    ordered = [name for name in HARMFUL_ORDER if name in found]
    if "password_reset" not in found and PASSWORD.search(text) and _RESET.search(text):
        ordered.insert(0, "password_reset")
    return ordered


_RESET = re.compile(
    r"(?<!\S)(?:forgot\w*|reset|recover\w*|lost|vergessen|oublie|olvid\w*|"
    r"dimenticat\w*|esquec\w*|vergeten|recuper\w*|restablec\w*|redefin\w*)(?!\S)")


def short_label_classes(text: str) -> list[str]:
    """Classes of a label that is only a short action word ("Like", "Yes, I'm sure")."""
    return [name for name, labels in _SHORT_LABELS.items() if text in labels]
