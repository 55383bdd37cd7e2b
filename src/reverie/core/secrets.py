"""Find credential-shaped text before it is written to memory (requirement W4).

Memory holds ordinary chat facts, so the one rule that shapes everything here is: never refuse
natural conversation. A refused write costs the user a fact and teaches the agent to distrust
the store; a missed secret is caught by nothing else. So detection is precise first, then as
broad as that allows:

* **Vendor tokens** (Slack, GitHub, GitLab, npm, PyPI, Hugging Face, SendGrid, AWS, Google,
  Stripe, OpenAI, Anthropic, Azure, Twilio, Discord, Telegram, Vault, Mailgun, Shopify,
  DigitalOcean, Linear, Atlassian, Tailscale, Databricks, Grafana, New Relic, and the many
  that copy Stripe's ``xx_live_`` / ``xx_test_`` convention) carry a fixed prefix or shape and
  a known body alphabet. A match needs the
  prefix at a token boundary *and* a body that looks generated (long enough, mixed character
  classes, no placeholder such as ``xxxxx``, ``EXAMPLE`` or ``your-token-here``).
* **Structural secrets**: JSON Web Tokens (``eyJ`` header, three base64url parts), PEM private
  key blocks (the armour line *and* a base64 body: a bare ``-----BEGIN ... PRIVATE KEY-----``
  quoted in a sentence is talk about keys, not a key), Slack webhook URLs, and passwords inside
  URLs (``scheme://user:password@host``; ``user@host``, ``user:password@`` style placeholders,
  template references and a password equal to the user name, the common local-development
  default ``postgres:postgres``, are not flagged), ``.netrc`` entries and Docker
  ``config.json`` ``auth`` values. A complete armoured key block counts whatever its length.
* **Encoded secrets**: base64 that decodes to text in which one of the above is found.
* **Contextual secrets** need a keyword and a value that does not read as language:
  ``Authorization:``/``Bearer`` headers and assignments to ``api_key``, ``secret``,
  ``password``, ``token``, ``client_secret``, ``access_token`` and the like (``=``, ``:``,
  ``:=``, ``=>``; in prose ``the password is ...``, where a short token with a digit or a
  symbol is enough: "my password is hunter2"). The value must be long enough, mix
  character classes, and not be a placeholder (``<your key>``, ``changeme``, ``***``), a
  reference (``${VAR}``, ``$VAR``, ``os.environ[...]``, ``vault:...``), a path, a URL, a date, a
  version, an e-mail address, or a run of words and short numbers (``bert-base-uncased-v2``,
  ``1Password``, ``OPENAI_API_KEY``). Keys that name metadata about a secret (``token_count``,
  ``password_length``, ``secret_name``, ``tokenizer``) are not assignments of one.

Everything else (hex commit ids, UUIDs, hashes, ordinary URLs, paths, versions) is never
flagged on its own: a random-looking string without a prefix or a keyword is not evidence.

Invisible characters (zero-width spaces and the like, :mod:`reverie.core.chars`) are read
past: the detectors scan the text without them and report offsets in the text as given.

A finding's span covers the secret material itself (what a redactor would blank out), not the
key name in front of it. When two detectors match overlapping text, the more specific one wins
(``API_KEY=sk-proj-...`` is an ``openai_key``, not a ``generic_assignment``).

Backtracking safety: text comes from users and models, so scanning must stay linear on
hostile input. Every pattern begins with a literal, a keyword or a fixed-width lookaround, so
most start positions fail at once; every repetition is bounded or possessive (``++``,
``{m,n}+``, Python 3.11), so no attempt can retry the ways of splitting a run; nothing is
repeated inside a repetition without being possessive. Beyond the regexes: PEM footers are
found in one pass rather than one search per header; a rejected assignment is rescanned from
its value only when the value is short; identical candidates are judged once per call; and
overlapping findings are merged in one linear pass. Crafted text costs about a microsecond per
character at worst; ordinary text far less, and most messages skip most detectors through a
substring test for their trigger words.
"""

from __future__ import annotations

import base64
import binascii
import math
import re
import string
from bisect import bisect_left
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Final

from .chars import strip_invisible

__all__ = [
    "CREDENTIAL_KINDS",
    "QUANTITY_AFTER",
    "CredentialFinding",
    "describe",
    "find_credentials",
]


@dataclass(frozen=True)
class CredentialFinding:
    """One credential-shaped span of scanned text.

    ``kind`` is a stable short name (one of ``CREDENTIAL_KINDS``); ``line`` is the 1-based line
    where the span starts; ``start``/``end`` are character offsets (``text[start:end]`` is the
    secret material). The finding deliberately holds no copy of the secret.
    """

    kind: str
    line: int
    start: int
    end: int


# Human labels double as the list of kinds, so a new detector cannot ship without a message.
_LABELS: Final[dict[str, str]] = {
    "private_key": "private key block",
    "jwt": "JSON Web Token",
    "slack_webhook": "Slack webhook URL",
    "slack_token": "Slack token",
    "github_token": "GitHub token",
    "gitlab_token": "GitLab token",
    "reverie_token": "Reverie API token",
    "npm_token": "npm token",
    "pypi_token": "PyPI token",
    "huggingface_token": "Hugging Face token",
    "sendgrid_key": "SendGrid API key",
    "anthropic_key": "Anthropic API key",
    "openai_key": "OpenAI-style API key",
    "stripe_key": "Stripe secret key",
    "live_key": "live or test API key",
    "google_api_key": "Google API key",
    "aws_access_key": "AWS access key ID",
    "aws_secret_key": "AWS secret access key",
    "azure_key": "Azure storage or service bus key",
    "twilio_token": "Twilio auth token",
    "discord_token": "Discord bot token",
    "telegram_token": "Telegram bot token",
    "vault_token": "HashiCorp Vault token",
    "mailgun_key": "Mailgun API key",
    "mailchimp_key": "Mailchimp API key",
    "shopify_token": "Shopify access token",
    "digitalocean_token": "DigitalOcean token",
    "linear_key": "Linear API key",
    "atlassian_token": "Atlassian API token",
    "tailscale_key": "Tailscale key",
    "databricks_token": "Databricks token",
    "grafana_token": "Grafana token",
    "newrelic_key": "New Relic key",
    "docker_auth": "registry login in a Docker config",
    "netrc_password": "password in a .netrc line",
    "access_code": "access code (alarm, door, gate, lockbox, PIN)",
    "payment_card": "payment card number",
    "url_password": "password inside a URL",
    "bearer_token": "bearer or Authorization header token",
    "generic_assignment": "secret assigned to a key, token or password field",
    "encoded_secret": "base64-encoded credential",
}

CREDENTIAL_KINDS: Final[tuple[str, ...]] = tuple(_LABELS)

_Span = tuple[int, int]
_Scanner = Callable[[str], Iterator[_Span]]

# A character that may continue a token. A vendor prefix must not follow one, so that a
# hyphenated word such as "task-..." is never read as the key "sk-...".
_B = r"(?<![A-Za-z0-9_-])"

# --- value heuristics ------------------------------------------------------------------------

_PLACEHOLDER_WORDS: Final[tuple[str, ...]] = (
    "example",
    "your",
    "placeholder",
    "redacted",
    "changeme",
    "change_me",
    "change-me",
    "dummy",
    "sample",
    "insert",
    "replace",
)
# The words in one case only ("your", "YOUR", "Your"): a random mixed-case key spells "yOUr"
# now and then, a writer does not. Then xxxxx, ***, ..., or one character eight times: docs
# write these, generators almost never do.
_PLACEHOLDER_MARKER = re.compile(
    "|".join(
        re.escape(variant)
        for word in _PLACEHOLDER_WORDS
        for variant in (word, word.upper(), word.capitalize())
    )
    + r"|[xX]{5}|\*{3}|\.{3}|\u2026|(.)\1{7}"
)
# Template and reference syntax: a value that points at a secret is not the secret.
_REFERENCE = re.compile(
    r"\$\{[^}]*\}|\$\([^)]*\)|%[A-Za-z_][A-Za-z0-9_]*%|%\(\w+\)s|%s"
    r"|\{\{.*\}\}|\{[A-Za-z_][A-Za-z0-9_.]*\}|<[^<>]*>|\[[^\[\]]*\]"
    r"|(?i:env[.:(\[]|os\.|process\.env|getenv|secrets?[.:]|vault:|ssm:|arn:|op:|settings\."
    r"|config\.|self\.|this\.|ref\().*",
    re.DOTALL,
)
_DATE_OR_VERSION = re.compile(
    r"\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?)?"
    r"|\d{1,2}:\d{2}(?::\d{2})?(?:\s?[AaPp][Mm])?"
    r"|[vV]?\d+(?:\.\d+){1,3}(?:[-+][0-9A-Za-z.-]{1,40})?"
)
# An Ethereum-style address is public ("the token is 0x1f98..."); a 64-digit key is not.
_PUBLIC_ADDRESS = re.compile(r"0x[0-9a-fA-F]{40}")
_EMAIL = re.compile(r"[^@\s]{1,64}@[A-Za-z0-9-]{1,63}(?:\.[A-Za-z0-9-]{1,63}){1,8}")
# A word (lower, Capitalised, ACRONYM, or camelCase parts of two letters or more; "iPhone"
# too) with at most two trailing digits, a short number with an optional word ("2nd",
# "1Password"), a short letters+number code ("v2", "py311", "MP3") or a single letter. Random
# strings rarely split this way ("auFmOS", "qXb5" do not). Possessive throughout: the parts
# could otherwise split a run in many ways.
_WORDISH_SEGMENT = re.compile(
    r"(?:[a-z](?=[A-Z]))?+(?:[A-Z]{2,}+(?![a-z])|[A-Z]?+[a-z]{2,}+)++[0-9]{0,2}+"
    r"|[0-9]{1,4}+(?:[A-Z]{2,}+(?![a-z])|[A-Z]?+[a-z]{2,}+)*+"
    r"|(?:[A-Z]?+[a-z]{0,2}+|[A-Z]{1,3}+)[0-9]{1,4}+"
    r"|[A-Za-z]"
)
_SEGMENT_SPLIT = re.compile(r"[^A-Za-z0-9]+")
_WORD_PART = re.compile(r"[A-Z]{2,}(?![a-z])|[A-Z]?[a-z]+")
# Identifiers, paths, module names and type hints use only these; "+&#!%^*=?" are not.
_NOT_IDENTIFIER_CHAR = re.compile(r"[^\w./:\[\]\\-]")
_SPACE = re.compile(r"\s")
_LETTER = re.compile(r"[^\W\d_]")
_WINDOWS_PATH = re.compile(r"[A-Za-z]:\\")


def _is_reference(value: str) -> bool:
    """``${VAR}``, ``$DB_PASSWORD``, ``<token>``, ``os.environ[...]``: a pointer, not a secret."""
    if _REFERENCE.fullmatch(value):
        return True
    # "$" + a name is a shell variable when the name reads as words; "$Hv8Fq..." is a password.
    name = value[1:]
    return value.startswith("$") and name.isidentifier() and _is_wordish(name)


_LOWER: Final[frozenset[str]] = frozenset(string.ascii_lowercase)
_UPPER: Final[frozenset[str]] = frozenset(string.ascii_uppercase)
_DIGITS: Final[frozenset[str]] = frozenset(string.digits)
_ASCII_ALNUM: Final[frozenset[str]] = _LOWER | _UPPER | _DIGITS


def _alnum_classes(value: str) -> int:
    """How many of lower case, upper case and digits occur: punctuation does not count."""
    chars = set(value)
    return (
        (not chars.isdisjoint(_LOWER))
        + (not chars.isdisjoint(_UPPER))
        + (not chars.isdisjoint(_DIGITS))
    )


def _char_classes(value: str) -> int:
    """Lower case, upper case, digits, and anything else: how many of the four occur."""
    return _alnum_classes(value) + (not set(value) <= _ASCII_ALNUM)


def _entropy(value: str) -> float:
    """Shannon entropy in bits per character."""
    size = len(value)
    return -sum(n / size * math.log2(n / size) for n in Counter(value).values())


def _has_placeholder_marker(value: str) -> bool:
    return _PLACEHOLDER_MARKER.search(value) is not None


def _is_periodic(value: str) -> bool:
    """A short pattern repeated ("abc123abc123..."): generated keys almost never repeat."""
    if len(value) < 12:
        return False
    trigrams = {value[i : i + 3] for i in range(len(value) - 2)}
    return len(trigrams) * 3 < len(value) - 2


def _is_placeholder(value: str) -> bool:
    # Fewer than six distinct characters ("0000-1111", "AKIAAAAA...") or a repeated pattern:
    # a mask or a filler, not a key.
    return _has_placeholder_marker(value) or len(set(value)) < 6 or _is_periodic(value)


def _is_wordish(value: str) -> bool:
    """True when the value reads as words and short numbers joined like an identifier.

    ``bert-base-uncased-v2``, ``OPENAI_API_KEY``, ``prod/db/password``, ``1Password`` and
    ``Optional[str]`` are wordish; ``ukg95+-2shNX&Mbib`` (a symbol no identifier uses) and
    ``5pssGLMFIHJ`` (a three-letter "word" without a vowel) are not.
    """
    if _NOT_IDENTIFIER_CHAR.search(value):
        return False
    segments = [s for s in _SEGMENT_SPLIT.split(value) if s]
    if not all(_WORDISH_SEGMENT.fullmatch(s) for s in segments):
        return False
    # Words of three letters or more have a vowel; short acronyms ("HTTPS", "SQL") need none.
    words = (w for s in segments for w in _WORD_PART.findall(s))
    return all(
        len(w) < 3 or (w.isupper() and len(w) <= 5) or any(c in "aeiouyAEIOUY" for c in w)
        for w in words
    )


def _generated_body(body: str, *, min_len: int, classes: int = 2) -> bool:
    """Does a vendor token's body look machine-generated rather than written by hand?

    Wordish bodies are identifiers that happen to share a prefix (``hf_modelDownloadConfig``).
    Single-case bodies skip that test: every upper-case run reads as an acronym.
    """
    if len(body) < min_len or _alnum_classes(body) < classes or _is_placeholder(body):
        return False
    return body.isupper() or body.islower() or not _is_wordish(body)


def _value_is_secret(value: str, *, password_like: bool, prose: bool) -> bool:
    """Decide whether a value assigned to a secret-sounding key is itself a secret.

    Cheap tests first: hostile text can hold one candidate value every few characters.
    """
    if len(value) < (8 if password_like else 16):
        return False
    classes = _char_classes(value)
    if classes < (3 if password_like and prose else 2) or not _LETTER.search(value):
        return False
    if _SPACE.search(value):
        # Spaces mean prose or a passphrase; we only claim single-token values.
        return False
    if "(" in value or "://" in value or value[0] in "/~" or value.startswith(("./", "../")):
        return False
    if _WINDOWS_PATH.match(value) or _is_reference(value):
        return False
    if _DATE_OR_VERSION.fullmatch(value) or _EMAIL.fullmatch(value):
        return False
    if _PUBLIC_ADDRESS.fullmatch(value) or _is_placeholder(value) or _is_wordish(value):
        return False
    if password_like:
        return True
    # 2.5 bits: a random 24-digit hex string can dip to 2.9; "aaaabbbb1111..." cannot pass.
    if _entropy(value) < 2.5:
        return False
    return not prose or any(c.isdigit() for c in value)


#: Values that read as passwords but name a product or a rule.
_NOT_PASSWORDS: Final[frozenset[str]] = frozenset({"1password", "keepass2", "keepassxc"})


def _told_password(value: str) -> bool:
    """A password told in prose ("my password is hunter2") or written in a ``.netrc``: one
    token of six characters or more that holds a digit or a symbol, unless it reads as a
    reference, a placeholder, a date, a version, an e-mail address, a path or a URL.

    Looser than :func:`_value_is_secret` on purpose: after "password is", a short word with a
    digit is the password; elsewhere it would be a name.
    """
    if len(value) < 6 or _SPACE.search(value) or value.lower() in _NOT_PASSWORDS:
        return False
    if all(c.isalpha() for c in value) or len(set(value)) < 4:
        return False
    if "://" in value or value[0] in "/~" or value.startswith(("./", "../")):
        return False
    if _WINDOWS_PATH.match(value) or _is_reference(value) or _has_placeholder_marker(value):
        return False
    return not (_DATE_OR_VERSION.fullmatch(value) or _EMAIL.fullmatch(value))


def _decode_base64(text: str) -> str | None:
    """Base64 (standard or URL-safe, padded or not) decoded to printable text, or ``None``."""
    stripped = text.rstrip("=")
    padded = stripped + "=" * (-len(stripped) % 4)
    try:
        raw = (
            base64.urlsafe_b64decode(padded)
            if "-" in text or "_" in text
            else base64.b64decode(padded, validate=True)
        )
        decoded = raw.decode("utf-8")
    except (binascii.Error, ValueError, UnicodeDecodeError):
        return None
    printable = sum(c.isprintable() or c in "\n\t" for c in decoded)
    return decoded if decoded and printable == len(decoded) else None


# --- scanners --------------------------------------------------------------------------------


def _regex_scanner(pattern: str, check: Callable[[re.Match[str]], _Span | None]) -> _Scanner:
    compiled = re.compile(pattern)

    def scan(text: str) -> Iterator[_Span]:
        # Checks read only the match, so a repeated match (text built to be slow, or the same
        # key pasted twice) is judged once; spans are cached relative to the match start.
        verdicts: dict[str, _Span | None] = {}
        for match in compiled.finditer(text):
            origin = match.start()
            if match[0] not in verdicts:
                span = check(match)
                verdicts[match[0]] = None if span is None else (span[0] - origin, span[1] - origin)
            relative = verdicts[match[0]]
            if relative is not None:
                yield origin + relative[0], origin + relative[1]

    return scan


def _body_check(
    group: str, *, min_len: int, classes: int = 2, need_digit: bool = False
) -> Callable[[re.Match[str]], _Span | None]:
    """Accept the whole match when the named group looks generated."""

    def check(match: re.Match[str]) -> _Span | None:
        body = match[group]
        if body is None:
            return None
        if need_digit and not any(c.isdigit() for c in body):
            return None
        if not _generated_body(body, min_len=min_len, classes=classes):
            return None
        return match.span()

    return check


def _first_group_check(
    groups: tuple[str, ...], *, min_len: int, classes: int = 2
) -> Callable[[re.Match[str]], _Span | None]:
    """Like _body_check for patterns with alternative bodies (one named group per variant)."""

    def check(match: re.Match[str]) -> _Span | None:
        body = next((match[g] for g in groups if match[g] is not None), None)
        if body is None or not _generated_body(body, min_len=min_len, classes=classes):
            return None
        return match.span()

    return check


# PEM: the armour line, optional RFC 1421 / OpenPGP header lines ("Proc-Type: 4,ENCRYPTED",
# "Version: ..."), then a first body line of at least 40 base64 characters. Line breaks may be
# real or escaped ("\n" inside a JSON string).
_PEM_BREAK = r"(?:\s|\\[rn])"
_PEM_BEGIN = re.compile(
    r"-----BEGIN (?:[A-Z0-9]{1,16} ){0,3}PRIVATE KEY(?: BLOCK)?-----"
    rf"(?:{_PEM_BREAK}++[A-Za-z][A-Za-z0-9-]{{0,31}}:[^\r\n\\]{{0,256}}+){{0,6}}+"
    rf"{_PEM_BREAK}*+[A-Za-z0-9+/=]{{40,}}+"
)
_PEM_END = re.compile(r"-----END (?:[A-Z0-9]{1,16} ){0,3}PRIVATE KEY(?: BLOCK)?-----")
# A body is a few KiB even for RSA-8192; a footer further away belongs to another block.
_PEM_MAX_BLOCK = 65_536


_PEM_ARMOUR = re.compile(r"-----BEGIN (?:[A-Z0-9]{1,16} ){0,3}PRIVATE KEY(?: BLOCK)?-----")
_PEM_HEADER_LINE = re.compile(r"^[A-Za-z][A-Za-z0-9-]{0,31}:[^\n]*$", re.MULTILINE)
_PEM_SHORT_BODY = re.compile(r"[A-Za-z0-9+/=]{16,}+")


def _scan_private_keys(text: str) -> Iterator[_Span]:
    """A block is a key when its armour line leads to a base64 body of 40 characters or more
    (with or without a footer), or when it is complete, armour to footer, around any base64
    body of 16 characters or more: a quoted ``...`` between the two is talk about keys."""
    if "PRIVATE KEY" not in text:
        return
    # One pass for all footers, then a bisect per header: never one search per header.
    footers = [(m.start(), m.end()) for m in _PEM_END.finditer(text)]
    starts = [f[0] for f in footers]
    for match in _PEM_ARMOUR.finditer(text):
        start = match.start()
        i = bisect_left(starts, match.end())
        near = i < len(footers) and footers[i][1] - start <= _PEM_MAX_BLOCK
        footer = footers[i] if near else None
        long_body = _PEM_BEGIN.match(text, start)
        if long_body is not None:
            yield start, footer[1] if footer else long_body.end()
        elif footer and _complete_body(text[match.end() : footer[0]]):
            yield start, footer[1]


def _complete_body(between: str) -> bool:
    body = _PEM_HEADER_LINE.sub("", between.replace("\\n", "\n").replace("\\r", ""))
    body = "".join(body.split())
    return (
        _PEM_SHORT_BODY.fullmatch(body) is not None
        and _alnum_classes(body) >= 2
        and not _is_placeholder(body)
    )


_JWT = _B + r"eyJ[A-Za-z0-9_-]{12,}+\.[A-Za-z0-9_-]{8,}+\.[A-Za-z0-9_-]*+"


def _check_jwt(match: re.Match[str]) -> _Span | None:
    signature = match[0].rsplit(".", 1)[1]
    # An unsigned token ("alg": "none") is still replayable against lax servers, so it counts;
    # a signature of "xxxxx" is documentation.
    if signature and _is_placeholder(signature):
        return None
    return match.span()


_SLACK_WEBHOOK = (
    r"(?:https?://)?hooks\.slack\.com/(?:services|workflows|triggers)/"
    r"(?P<path>[A-Za-z0-9_/-]{16,512}+)"
)


def _check_slack_webhook(match: re.Match[str]) -> _Span | None:
    parts = [p for p in match["path"].split("/") if p]
    if len(parts) < 2 or not _generated_body(parts[-1], min_len=16):
        return None
    if any(_has_placeholder_marker(p) for p in parts):
        return None
    return match.span()


_SLACK_TOKEN = _B + r"(?:xox[abeprs]|xapp)-(?P<body>[A-Za-z0-9_-]{16,512}+)"
_GITHUB_TOKEN = (
    _B
    + r"(?:gh[pousr]_(?P<classic>[A-Za-z0-9]{30,255}+)|github_pat_(?P<pat>[A-Za-z0-9_]{40,255}+))"
)
_GITLAB_TOKEN = _B + r"glpat-(?P<body>[A-Za-z0-9_-]{20,255}+)"
# Reverie's own API tokens (``store/tokens.py``): rvt_ and 43 URL-safe base64 characters.
_REVERIE_TOKEN = _B + r"rvt_(?P<body>[A-Za-z0-9_-]{40,64}+)"
_NPM_TOKEN = _B + r"npm_(?P<body>[A-Za-z0-9]{36,255}+)"
# Every PyPI token starts with the same macaroon bytes: base64 of "\x02\x01\x08pypi.org".
_PYPI_TOKEN = _B + r"pypi-AgEIcHlwaS5vcmc(?P<body>[A-Za-z0-9_-]{40,4096}+)"
_HUGGINGFACE_TOKEN = _B + r"hf_(?P<body>[A-Za-z0-9]{30,64}+)"
_SENDGRID_KEY = _B + r"SG\.(?P<body>[A-Za-z0-9_-]{16,32}+\.[A-Za-z0-9_-]{30,64}+)"
_ANTHROPIC_KEY = _B + r"sk-ant-(?P<body>[A-Za-z0-9_-]{24,1024}+)"
# Legacy OpenAI keys are sk- plus one alphanumeric run; current ones name their type first.
# Other OpenAI-compatible providers (DeepSeek, Together, local servers) reuse sk- + hex.
_OPENAI_KEY = (
    _B + r"sk-(?:(?:proj|svcacct|admin|None)-(?P<typed>[A-Za-z0-9_-]{20,1024}+)"
    r"|(?P<legacy>[A-Za-z0-9]{32,1024}+))"
)
# Publishable keys (pk_live_, pk_test_) are designed to ship in web pages: not secrets.
_STRIPE_KEY = (
    _B + r"(?:(?:sk|rk)_(?:live|test)_(?P<secret>[A-Za-z0-9]{16,255}+)"
    r"|whsec_(?P<webhook>[A-Za-z0-9+/=]{24,255}+))"
)
# Many payment and booking APIs copy Stripe's convention: a short vendor prefix, then live or
# test, then the key ("rzp_live_...", "bk_live_..."). The publishable pk_ kind is left out.
_LIVE_KEY = _B + r"(?!pk_)[a-z]{2,8}_(?:live|test)_(?P<body>[A-Za-z0-9]{16,255}+)"
# Fixed length, no right boundary: a word glued after the key does not hide it.
_GOOGLE_API_KEY = _B + r"AIza(?P<body>[A-Za-z0-9_-]{35})"
# Bounded on the right too: "ASIAPACIFICSUMMIT2024" is one word, not a key plus a tail.
_AWS_ACCESS_KEY = r"(?<![A-Za-z0-9])(?:AKIA|ASIA|ABIA|ACCA)(?P<body>[A-Z0-9]{16})(?![A-Z0-9])"
_AWS_SECRET_KEY = (
    r"(?i:aws_?secret_?(?:access_?)?key)[\"']?[ \t]*+(?:=>|:=|[:=])[ \t]*+[\"']?"
    r"(?P<body>[A-Za-z0-9/+]{40})"
)


def _check_aws_secret(match: re.Match[str]) -> _Span | None:
    body = match["body"]
    if not _generated_body(body, min_len=40) or _entropy(body) < 3.5:
        return None
    return match.span("body")


# Azure: a storage account key in a connection string, a service bus shared access key, or the
# signature of a shared access signature URL.
_AZURE_KEY = (
    r"(?:AccountKey|SharedAccessKey)=(?P<key>[A-Za-z0-9+/]{40,128}+={0,2}+)"
    r"|(?<=[?&])sig=(?P<sig>(?:[A-Za-z0-9+/]|%2[BbFf]){30,256}+(?:=|%3[Dd]){0,2}+)"
)


def _check_azure(match: re.Match[str]) -> _Span | None:
    group = "key" if match["key"] is not None else "sig"
    body = match[group]
    if group == "sig" and "sv=" not in match.string[max(0, match.start() - 512) : match.start()]:
        return None  # a "sig=" parameter of something that is not a SAS URL
    if not _generated_body(body.replace("%2B", "+").replace("%2F", "/"), min_len=30):
        return None
    return match.span(group)


# Twilio: an account or API key SID (AC or SK and 32 hex digits) is an id; a 32-hex-digit
# token beside one is its auth token or key secret.
_TWILIO_SID = re.compile(r"(?<![A-Za-z0-9])(?:AC|SK)[0-9a-f]{32}(?![A-Za-z0-9])")
_HEX32 = re.compile(r"(?<![A-Za-z0-9])[0-9a-f]{32}(?![A-Za-z0-9])")


def _scan_twilio(text: str) -> Iterator[_Span]:
    if _TWILIO_SID.search(text) is None:
        return
    for match in _HEX32.finditer(text):
        if _generated_body(match[0], min_len=32) and _entropy(match[0]) >= 3.0:
            yield match.span()


# Discord: the user id in base64 (so its first part decodes to digits), a timestamp, an HMAC.
_DISCORD_TOKEN = (
    r"(?<![A-Za-z0-9_.-])(?P<id>[MNO][A-Za-z0-9_-]{21,27})\.[A-Za-z0-9_-]{6,7}\."
    r"(?P<body>[A-Za-z0-9_-]{27,40})(?![A-Za-z0-9_-])"
)


def _check_discord(match: re.Match[str]) -> _Span | None:
    part = match["id"]
    try:
        user = base64.urlsafe_b64decode(part + "=" * (-len(part) % 4)).decode("ascii")
    except (ValueError, UnicodeDecodeError):
        return None
    if not user.isdigit() or not _generated_body(match["body"], min_len=27):
        return None
    return match.span()


# Telegram: the bot's numeric id, a colon, 35 characters.
_TELEGRAM_TOKEN = r"(?<![A-Za-z0-9:_-])\d{8,10}:(?P<body>[A-Za-z0-9_-]{35})(?![A-Za-z0-9_-])"
# Service tokens whose prefix alone names them; the body must still look generated.
_VAULT_TOKEN = _B + r"hv[sbr]\.(?P<body>[A-Za-z0-9_-]{24,512}+)"
_MAILGUN_KEY = (
    _B + r"(?:key-(?P<legacy>[0-9a-z]{32})(?![A-Za-z0-9])"
    r"|(?P<current>[0-9a-f]{32}-[0-9a-f]{8}-[0-9a-f]{8})(?![A-Za-z0-9-]))"
)
# Mailchimp: 32 hex characters, then the data centre ("-us21"). Shortened or lengthened keys
# as people paste them (24-40) are still a key: nothing else ends hex with "-us" and a number.
_MAILCHIMP_KEY = _B + r"(?P<body>[0-9a-f]{24,40})-us\d{1,2}(?![A-Za-z0-9])"
# Shopify: the prefix and 32 hex characters; a token pasted a few characters short or long is
# still the token (the prefix names it).
_SHOPIFY_TOKEN = _B + r"shp(?:at|ss|ca|pa)_(?P<body>[a-fA-F0-9]{24,40})(?![A-Za-z0-9])"
_DIGITALOCEAN_TOKEN = _B + r"do[opr]_v1_(?P<body>[a-f0-9]{64})(?![A-Za-z0-9])"
_LINEAR_KEY = _B + r"lin_(?:api|oauth)_(?P<body>[A-Za-z0-9]{40})(?![A-Za-z0-9])"
_ATLASSIAN_TOKEN = _B + r"AT(?:ATT|CTT)3(?P<body>[A-Za-z0-9_=-]{60,512}+)"
_TAILSCALE_KEY = (
    _B + r"tskey-(?:auth|api|client|scim|webhook)-[A-Za-z0-9]{6,32}+-(?P<body>[A-Za-z0-9]{16,128}+)"
)
_DATABRICKS_TOKEN = _B + r"dapi(?P<body>[a-f0-9]{32})(?:-\d)?(?![A-Za-z0-9])"
_GRAFANA_TOKEN = (
    _B + r"(?:glsa_(?P<sa>[A-Za-z0-9]{32}_[A-Fa-f0-9]{8})"
    r"|glc_(?P<cloud>[A-Za-z0-9+/]{32,1024}+={0,2}+))"
)
_NEWRELIC_KEY = _B + r"NR(?:AK|AA|II|IQ|JS|RA|SP)-(?P<body>[A-Za-z0-9_-]{19,40}+)"
# Docker's config.json: "auth" holds base64 of "user:password".
_DOCKER_AUTH = r"\"auth\"[ \t]*+:[ \t]*+\"(?P<body>[A-Za-z0-9+/]{8,4096}+={0,2}+)\""


def _check_docker_auth(match: re.Match[str]) -> _Span | None:
    decoded = _decode_base64(match["body"])
    if decoded is None or ":" not in decoded:
        return None
    _user, _, password = decoded.partition(":")
    if not password or password.lower() in _URL_PLACEHOLDERS or _has_placeholder_marker(password):
        return None
    return match.span("body")


# .netrc: "machine HOST login USER password SECRET", on one line or several.
_NETRC = (
    r"(?i:\b(?:machine|default)\b)[^\0]{0,300}?(?<![A-Za-z])(?i:password|passwd)[ \t]++"
    r"(?P<value>[^\s]{4,256}+)"
)


def _check_netrc(match: re.Match[str]) -> _Span | None:
    value = match["value"]
    if "login" not in match[0].lower() or value.lower() in _URL_PLACEHOLDERS:
        return None  # a .netrc names the login before the password; prose rarely does
    if not (_told_password(value) or _value_is_secret(value, password_like=True, prose=False)):
        return None
    return match.span("value")


# An access code told in prose: "the alarm code is 59130", "PIN: 4471", and, for the things that
# are nothing but a code, "the lockbox at the rental is 7229". The code's name is followed at
# once by the verb or a colon; only a lockbox or key safe may have a few words between (and
# then a verb, never a colon: "(source: c-7#0-2)" after any text is a citation).
# A number followed by one of these is a quantity or a time ("4471 kg", "7 am"), not a code.
QUANTITY_AFTER = (
    r"[ \t]*(?i:mm|cm|km|kg|ft|feet|foot|inch|inches|lbs?|pounds|percent|degrees|years?|"
    r"months?|weeks?|days?|hours?|minutes?|seconds?|am|pm|[%\u00b0])(?![A-Za-z])"
)
_CODE_VALUE = r"(?P<value>[A-Za-z0-9#*-]{3,16}+)(?![A-Za-z0-9#*-])(?!" + QUANTITY_AFTER + ")"
_ACCESS_CODE = (
    r"(?i:\b(?:(?:(?:alarm|door|gate|garage|entry|keypad|building|entrance|access|security|"
    r"front[ -]door|back[ -]door|lock ?box|key ?safe|safe)[ \t]+"
    r"(?:code|combination|combo|pin|passcode)|pin(?:[ \t]+(?:code|number))?|passcode|"
    r"pass[ \t]+code)(?:[ \t]+(?:is|are|was|reads)[ \t]+|[ \t]*[:=][ \t]*)"
    r"|(?:lock ?box|key ?safe)\b[^.:\n]{0,40}?[ \t]+(?:is|was)[ \t]+))" + _CODE_VALUE
)


def _check_access_code(match: re.Match[str]) -> _Span | None:
    """At least three digits, and not a date, a version or a source range (a code, not a word,
    a size or a citation)."""
    value = match["value"].strip("-")
    if sum(c.isdigit() for c in value) < 3 or _DATE_OR_VERSION.fullmatch(value):
        return None
    if re.fullmatch(r"[A-Za-z0-9._:@+/-]*#\d+-\d+", value):
        return None
    start = match.start("value") + match["value"].index(value)
    return start, start + len(value)


# A payment card number: 13-19 digits, written whole or in the groups cards print (4-4-4-4,
# Amex and Diners 4-6-5 and 4-6-4), one separator throughout, with a card network's prefix
# and either a valid Luhn check digit or a word of cards beside it ("card", "exp", "cvv": a
# number typed wrong is still the card). A phone number, an order number or a date almost
# never passes (a random number passes the check digit one time in ten, the prefix and
# grouping rarely). The payment providers' published test numbers, and numbers that are
# mostly one digit, are talk about testing, not a card.
_PAYMENT_CARD = r"(?<![\w.,/+-])(?P<value>\d(?:[ -]?+\d){12,18}+)(?![\w/]|[.,-]\d)"
_CARD_GROUPS: Final[frozenset[tuple[int, ...]]] = frozenset(
    {(4, 4, 4, 4), (4, 4, 4, 1), (4, 4, 4, 2), (4, 4, 4, 3), (4, 4, 4, 4, 3), (4, 6, 5),
     (4, 6, 4), (4, 4, 5), (4, 4, 4, 4, 1), (4, 4, 4, 4, 2)}
)  # fmt: skip
_CARD_PREFIX = re.compile(
    r"4\d{12}(?:\d{3}){0,2}"  # Visa: 13, 16 or 19 digits
    r"|(?:5[1-5]\d\d|222[1-9]|22[3-9]\d|2[3-6]\d\d|27[01]\d|2720)\d{12}"  # Mastercard
    r"|3[47]\d{13}"  # American Express
    r"|(?:6011|65\d\d|64[4-9]\d)\d{12,15}"  # Discover
    r"|35(?:2[89]|[3-8]\d)\d{12,15}"  # JCB
    r"|3(?:0[0-5]|[689]\d)\d{11,16}"  # Diners Club
    r"|62\d{14,17}"  # UnionPay
)


_CARD_WORDS = re.compile(
    r"(?i:card|visa|mastercard|amex|american express|discover|cvv|cvc|exp|expiry|expires|"
    r"credit|debit)(?![a-z])"
)
_TEST_CARDS: Final[frozenset[str]] = frozenset(
    {"4242424242424242", "4111111111111111", "4012888888881881", "4000056655665556",
     "5555555555554444", "5105105105105100", "5200828282828210", "2223003122003222",
     "378282246310005", "371449635398431", "6011111111111117", "6011000990139424",
     "3530111333300000", "3566002020360505", "30569309025904", "38520000023237",
     "6200000000000005"}
)  # fmt: skip


def _luhn(digits: str) -> bool:
    total = 0
    for i, c in enumerate(reversed(digits)):
        d = int(c) * (2 if i % 2 else 1)
        total += d - 9 if d > 9 else d
    return total % 10 == 0


def _check_payment_card(match: re.Match[str]) -> _Span | None:
    value = match["value"]
    digits = "".join(c for c in value if c.isdigit())
    separators = {c for c in value if not c.isdigit()}
    if len(separators) > 1 or not (13 <= len(digits) <= 19):
        return None
    if separators:
        groups = tuple(len(g) for g in re.split(r"[ -]", value))
        if groups not in _CARD_GROUPS:
            return None
    if not _CARD_PREFIX.fullmatch(digits) or digits in _TEST_CARDS:
        return None
    if max(Counter(digits).values()) >= len(digits) - 4:
        return None  # 4000 0000 0000 0002: a test or made-up number
    if not _luhn(digits):
        start, end = match.span("value")
        if not _CARD_WORDS.search(match.string, max(0, start - 40), end + 40):
            return None
    return match.span("value")


# Userinfo is found after "://" so the scheme needs no pattern of its own.
_URL_PASSWORD = (
    r"(?<=://)(?P<user>[^\s:/?#@\[\]]{0,128}+):(?P<password>[^\s/?#@]{1,256}+)@"
    r"(?=[A-Za-z0-9\[])"
)
_URL_PLACEHOLDERS: Final[frozenset[str]] = frozenset(
    {"password", "passwd", "pass", "pwd", "pw", "pword", "secret", "mypassword", "my_password",
     "guest", "anonymous", "foo", "bar", "baz", "test", "demo"}
)  # fmt: skip


def _check_url_password(match: re.Match[str]) -> _Span | None:
    user, password = match["user"], match["password"]
    lowered = password.lower()
    if lowered in _URL_PLACEHOLDERS or lowered == user.lower():
        return None
    if _has_placeholder_marker(password) or lowered.startswith("%3c"):
        return None
    if password.isdigit() and len(password) <= 5:
        # "http://host:8080@other" is a port in a phishing example, not a password.
        return None
    if _is_reference(password) or set(password) <= {"*", "x", "X", "."}:
        return None
    return match.span("password")


# RFC 6750 token68 syntax: "=" only as trailing padding, so "Bearer API_KEY=..." is not one
# token (the assignment after it is reported as such).
_BEARER = (
    r"(?i:authorization)[\"']?[ \t]*+[:=][ \t]*+[\"']?"
    r"(?:(?i:bearer|token|basic|bot|digest|apikey|ssws)[ \t]++)?"
    r"(?P<header>[A-Za-z0-9._~+/-]{12,4096}+={0,2}+)"
    r"|(?:(?i:bearer)|(?<![A-Za-z])SSWS)[ \t]++(?P<bearer>[A-Za-z0-9._~+/-]{16,4096}+={0,2}+)"
)


def _check_bearer(match: re.Match[str]) -> _Span | None:
    group = "header" if match["header"] is not None else "bearer"
    start, end = match.span(group)
    token = match[group].rstrip(".")
    end = start + len(token)
    if len(token) < 12 or _char_classes(token) < 2 or not _LETTER.search(token):
        return None
    if _is_placeholder(token) or _is_wordish(token) or _DATE_OR_VERSION.fullmatch(token):
        return None
    if _entropy(token) < 2.5:
        return None
    return start, end


_GENERIC = (
    # The lookahead lets the engine skip to a possible first letter instead of trying the
    # case-insensitive alternation at every position (three times faster on prose).
    r"(?=[AaSsPpTtCcEe])"
    r"(?i:(?P<stem>api[ _-]?key|apikey|secret|passw(?:or)?d|passphrase|pwd|token"
    r"|access[ _-]?key|private[ _-]?key|auth[_-]?key|signing[_-]?key|encryption[_-]?key"
    r"|credentials?|pass(?=[\"']?[ \t]*[:=])))"
    r"(?P<suffix>[A-Za-z0-9_-]{0,24}+)"
    r"(?:[\"']?[ \t]*+(?:=>|:=|[:=])[ \t]*+|[ \t]++(?P<verb>(?i:is|was))[ \t]++)"
    r"(?:\"(?P<dq>[^\"\r\n]{1,256}+)\"|'(?P<sq>[^'\r\n]{1,256}+)'|`(?P<bq>[^`\r\n]{1,256}+)`"
    r"|(?P<bare>[^\s\"'`,;]{1,256}+))"
)
# Key names that describe a secret rather than hold one, and English words that merely
# start with a stem ("secretary", "tokenizer", "passwordless").
_NOT_A_SECRET_KEY = re.compile(
    r"(?:[_-]?(?:ids?|names?|types?|counts?|limits?|len|length|size|urls?|uris?|paths?|files?"
    r"|dir|env|vars?|hash|hashed|ttl|expiry|expires|expiration|lifetime|timeout|header|prefix"
    r"|field|policy|mode|version|format|endpoint|rotation|manager|provider|store|storage|vault"
    r"|source|ref|reference|location|hint|required|enabled|min|max|encoding|budget|usage|cost"
    r"|price|rate|window)(?:$|[_-])"
    r"|(?:ary|aries|ion|ions|ive|ize|ized|izer|izers|ization|ise|ised|iser|ed|ing|less|ly|s)"
    r"(?:$|[_-]))",
    re.IGNORECASE,
)
# Identifier words in front of the stem that make a token non-secret by design.
# The word must end at a separator ("next_page_", "max_") so that letters glued in front of a
# key in prose ("...maxapi_key") are not mistaken for one.
_NOT_A_SECRET_PREFIX = re.compile(
    r"(?:^|[^A-Za-z])(?:page|next|continuation|sync|cursor|public|publishable|max|num|total"
    r"|hash|hashed)[_.-]$",
    re.IGNORECASE,
)
_NOT_A_SECRET_WORDS = (
    "Page|Next|Continuation|Sync|Cursor|Public|Publishable|Max|Num|Total|Hash|Hashed"
)
# camelCase: "nextPageToken", "maxTokens": the word is capitalised or is the whole prefix.
_NOT_A_SECRET_CAMEL = re.compile(
    rf"(?:{_NOT_A_SECRET_WORDS})$|(?:^|(?<=[^A-Za-z]))(?i:{_NOT_A_SECRET_WORDS})$"
)
_IDENTIFIER_CHARS = string.ascii_letters + string.digits + "_.-"
_STRIP_TRAILING = ".,;:)]}!?"
_OPENERS: Final[dict[str, str]] = {")": "(", "]": "[", "}": "{"}
_QUERY_CONTINUATION = re.compile(r"&(?=[A-Za-z_][A-Za-z0-9_.-]*=)")
_RESCAN_LIMIT = 64


def _strip_trailing(value: str) -> str:
    """Sentence punctuation after a value, but not a bracket that closes one the value opened
    (``${DB_PASSWORD}``, ``os.environ["KEY"]``)."""
    while value and value[-1] in _STRIP_TRAILING:
        opener = _OPENERS.get(value[-1])
        if opener is not None and value.count(opener) >= value.count(value[-1]):
            break
        value = value[:-1]
    return value


def _key_prefix(text: str, stem_start: int) -> str:
    """The identifier characters just before the stem (at most 40), e.g. ``next_page_``."""
    window = text[max(0, stem_start - 40) : stem_start]
    return window[len(window.rstrip(_IDENTIFIER_CHARS)) :]


def _generic_scanner() -> _Scanner:
    compiled = re.compile(_GENERIC)

    def accept(
        text: str, match: re.Match[str], group: str, verdicts: dict[tuple[str, bool, bool], bool]
    ) -> _Span | None:
        start, end = match.span(group)
        value = match[group]
        prefix = _key_prefix(text, match.start())
        # The name of a variable inside a reference: ${ADMIN_PASSWORD:?required}. Looked for
        # in a bounded window, so that hostile text cannot make this quadratic.
        window = max(0, match.start() - 256)
        if text.rfind("${", window, match.start()) > text.rfind("}", window, match.start()):
            return None
        if group == "bare":
            # In a URL query ("?api_key=...&page=2") "&name=" starts the next parameter; a
            # password may hold "&". Sentence punctuation after the value is not part of it.
            key_start = match.start() - len(prefix)
            if key_start > 0 and text[key_start - 1] in "?&":
                value = _QUERY_CONTINUATION.split(value, maxsplit=1)[0]
            value = _strip_trailing(value)
            end = start + len(value)
        # Judge the value without base64 padding: "password=" is a word and an equals sign.
        core = value.rstrip("=")
        if len(core) < 6:  # the shortest value any rule accepts; most candidates stop here
            return None
        stem = match["stem"]
        key = (core, stem[:4].lower() == "pass" or stem.lower() == "pwd", match["verb"] is not None)
        # Repeated candidates (a pasted config, or text built to be slow) are judged once.
        verdict = verdicts.get(key)
        if verdict is None:
            told = key[1] and key[2] and stem.lower().startswith("passw")
            verdict = verdicts[key] = (
                _told_password(core)
                if told
                else _value_is_secret(core, password_like=key[1], prose=key[2])
            )
        if not verdict:
            return None
        suffix = match["suffix"]
        if suffix and _NOT_A_SECRET_KEY.match(suffix):
            return None
        if _NOT_A_SECRET_PREFIX.search(prefix):
            return None
        if stem[0].isupper() and _NOT_A_SECRET_CAMEL.search(prefix):
            return None
        return start, end

    def scan(text: str) -> Iterator[_Span]:
        verdicts: dict[tuple[str, bool, bool], bool] = {}
        position = 0
        while (match := compiled.search(text, position)) is not None:
            # The value groups close last, so lastgroup names the one that matched.
            group = match.lastgroup or "bare"
            span = accept(text, match, group, verdicts)
            if span is not None:
                yield span
                position = match.end()
            elif match.end(group) - match.start(group) <= _RESCAN_LIMIT:
                # A rejected value may itself begin the real assignment ("the password is
                # password = ..."), so resume at the value, not after it. The value starts
                # after the key, so the scan moves forward; the limit bounds the text scanned
                # twice, so hostile input cannot make this quadratic.
                position = match.start(group)
            else:
                position = match.end()

    return scan


@dataclass(frozen=True)
class _Detector:
    kind: str
    # Literals of which at least one must occur (in the lower-cased text when ``folded``)
    # before the regex runs: a substring test is far cheaper than a scan, and most chat
    # messages contain none of them.
    triggers: tuple[str, ...]
    folded: bool
    scan: _Scanner


def _detector(
    kind: str, triggers: tuple[str, ...], scan: _Scanner, *, folded: bool = False
) -> _Detector:
    return _Detector(kind=kind, triggers=triggers, folded=folded, scan=scan)


# Order is priority: when spans overlap, the earlier (more specific) detector wins.
_DETECTORS: Final[tuple[_Detector, ...]] = (
    _detector("private_key", ("PRIVATE KEY",), _scan_private_keys),
    _detector("jwt", ("eyJ",), _regex_scanner(_JWT, _check_jwt)),
    _detector(
        "slack_webhook",
        ("hooks.slack.com",),
        _regex_scanner(_SLACK_WEBHOOK, _check_slack_webhook),
    ),
    _detector(
        "slack_token",
        ("xox", "xapp-"),
        _regex_scanner(_SLACK_TOKEN, _body_check("body", min_len=20, need_digit=True)),
    ),
    _detector(
        "github_token",
        ("gh", "github_pat_"),
        _regex_scanner(_GITHUB_TOKEN, _first_group_check(("classic", "pat"), min_len=30)),
    ),
    _detector(
        "gitlab_token",
        ("glpat-",),
        _regex_scanner(_GITLAB_TOKEN, _body_check("body", min_len=20)),
    ),
    _detector(
        "reverie_token",
        ("rvt_",),
        _regex_scanner(_REVERIE_TOKEN, _body_check("body", min_len=40)),
    ),
    _detector("npm_token", ("npm_",), _regex_scanner(_NPM_TOKEN, _body_check("body", min_len=36))),
    _detector(
        "pypi_token",
        ("pypi-",),
        _regex_scanner(_PYPI_TOKEN, _body_check("body", min_len=40)),
    ),
    _detector(
        "huggingface_token",
        ("hf_",),
        _regex_scanner(_HUGGINGFACE_TOKEN, _body_check("body", min_len=30)),
    ),
    _detector(
        "sendgrid_key",
        ("SG.",),
        _regex_scanner(_SENDGRID_KEY, _body_check("body", min_len=47)),
    ),
    _detector(
        "anthropic_key",
        ("sk-ant-",),
        _regex_scanner(_ANTHROPIC_KEY, _body_check("body", min_len=24)),
    ),
    _detector(
        "openai_key",
        ("sk-",),
        _regex_scanner(_OPENAI_KEY, _first_group_check(("typed", "legacy"), min_len=20)),
    ),
    _detector(
        "stripe_key",
        ("sk_", "rk_", "whsec_"),
        _regex_scanner(_STRIPE_KEY, _first_group_check(("secret", "webhook"), min_len=16)),
    ),
    _detector(
        "live_key",
        ("_live_", "_test_"),
        _regex_scanner(_LIVE_KEY, _body_check("body", min_len=16, need_digit=True)),
    ),
    _detector(
        "google_api_key",
        ("AIza",),
        _regex_scanner(_GOOGLE_API_KEY, _body_check("body", min_len=35)),
    ),
    _detector(
        "aws_access_key",
        ("AKIA", "ASIA", "ABIA", "ACCA"),
        _regex_scanner(_AWS_ACCESS_KEY, _body_check("body", min_len=16, classes=1)),
    ),
    _detector(
        "aws_secret_key",
        ("secret",),
        _regex_scanner(_AWS_SECRET_KEY, _check_aws_secret),
        folded=True,
    ),
    _detector(
        "azure_key",
        ("AccountKey=", "SharedAccessKey=", "sig="),
        _regex_scanner(_AZURE_KEY, _check_azure),
    ),
    _detector("twilio_token", ("AC", "SK"), _scan_twilio),
    _detector(
        "discord_token",
        # base64 of a user id's first digit and the next: "1" is "MT", "2" "Mj", ... "9" "OT"
        ("MT", "Mj", "Mz", "ND", "NT", "Nj", "Nz", "OD", "OT"),
        _regex_scanner(_DISCORD_TOKEN, _check_discord),
    ),
    _detector(
        "telegram_token",
        (":",),
        _regex_scanner(_TELEGRAM_TOKEN, _body_check("body", min_len=35)),
    ),
    _detector(
        "vault_token",
        ("hvs.", "hvb.", "hvr."),
        _regex_scanner(_VAULT_TOKEN, _body_check("body", min_len=24)),
    ),
    _detector(
        "mailgun_key",
        ("key-", "-"),
        _regex_scanner(
            _MAILGUN_KEY, _first_group_check(("legacy", "current"), min_len=32, classes=2)
        ),
    ),
    _detector(
        "mailchimp_key",
        ("-us",),
        _regex_scanner(_MAILCHIMP_KEY, _body_check("body", min_len=24)),
    ),
    _detector(
        "shopify_token",
        ("shpat_", "shpss_", "shpca_", "shppa_"),
        _regex_scanner(_SHOPIFY_TOKEN, _body_check("body", min_len=24)),
    ),
    _detector(
        "digitalocean_token",
        ("_v1_",),
        _regex_scanner(_DIGITALOCEAN_TOKEN, _body_check("body", min_len=64)),
    ),
    _detector(
        "linear_key",
        ("lin_api_", "lin_oauth_"),
        _regex_scanner(_LINEAR_KEY, _body_check("body", min_len=40)),
    ),
    _detector(
        "atlassian_token",
        ("ATATT3", "ATCTT3"),
        _regex_scanner(_ATLASSIAN_TOKEN, _body_check("body", min_len=60)),
    ),
    _detector(
        "tailscale_key",
        ("tskey-",),
        _regex_scanner(_TAILSCALE_KEY, _body_check("body", min_len=16)),
    ),
    _detector(
        "databricks_token",
        ("dapi",),
        _regex_scanner(_DATABRICKS_TOKEN, _body_check("body", min_len=32)),
    ),
    _detector(
        "grafana_token",
        ("glsa_", "glc_"),
        _regex_scanner(_GRAFANA_TOKEN, _first_group_check(("sa", "cloud"), min_len=32)),
    ),
    _detector(
        "newrelic_key",
        ("NRAK-", "NRAA-", "NRII-", "NRIQ-", "NRJS-", "NRRA-", "NRSP-"),
        _regex_scanner(_NEWRELIC_KEY, _body_check("body", min_len=19)),
    ),
    _detector("docker_auth", ('"auth"',), _regex_scanner(_DOCKER_AUTH, _check_docker_auth)),
    _detector(
        "netrc_password",
        ("machine", "default"),
        _regex_scanner(_NETRC, _check_netrc),
        folded=True,
    ),
    _detector(
        "access_code",
        ("code", "pin", "combination", "combo", "lockbox", "lock box", "keysafe", "key safe"),
        _regex_scanner(_ACCESS_CODE, _check_access_code),
        folded=True,
    ),
    _detector(
        "payment_card",
        tuple("23456"),  # the first digit of every prefix above
        _regex_scanner(_PAYMENT_CARD, _check_payment_card),
    ),
    _detector("url_password", ("://",), _regex_scanner(_URL_PASSWORD, _check_url_password)),
    _detector(
        "bearer_token",
        ("bearer", "authorization", "ssws"),
        _regex_scanner(_BEARER, _check_bearer),
        folded=True,
    ),
    _detector(
        "generic_assignment",
        ("key", "secret", "pass", "pwd", "token", "credential"),
        _generic_scanner(),
        folded=True,
    ),
)

# Base64 long enough to hold a credential (a 16-character secret is 24 characters encoded).
# No boundary before it: scanning left to right, a run is always met at its first character.
_BASE64_RUN = re.compile(r"[A-Za-z0-9+/_-]{24,8192}+={0,2}+")


def _scan_encoded(text: str) -> Iterator[_Span]:
    """Base64 runs that decode to text in which a credential is found (one level deep)."""
    for match in _BASE64_RUN.finditer(text):
        run = match[0]
        if run.startswith("eyJ") or _alnum_classes(run) < 2:
            continue  # a JWT is found as one; one character class is a word or a number
        decoded = _decode_base64(run)
        if decoded is not None and _spans(decoded):
            yield match.span()


def find_credentials(text: str) -> list[CredentialFinding]:
    """Find credential-shaped spans in ``text``, in order of position.

    Pure and total: any string is accepted and nothing is raised. Overlapping matches are
    reported once, under the most specific kind. An empty list means the text may be stored.
    Invisible characters (``reverie.core.chars.INVISIBLE``) are read past, so that one inside
    a token cannot hide it, and base64 that decodes to a credential is reported as
    ``encoded_secret``.
    """
    scanned, offsets = strip_invisible(text)
    spans = _spans(scanned)
    encoded = sorted(_scan_encoded(scanned))
    if encoded:
        spans = _merge(spans, encoded, "encoded_secret")
    if offsets is not None:  # back to offsets in ``text``
        spans = [(offsets[s], offsets[e - 1] + 1, kind) for s, e, kind in spans]
    findings: list[CredentialFinding] = []
    line, position = 1, 0
    for start, end, kind in spans:
        # Spans are sorted, so counting newlines incrementally stays linear in the text.
        line += text.count("\n", position, start)
        position = start
        findings.append(CredentialFinding(kind=kind, line=line, start=start, end=end))
    return findings


_REDACTED = "[redacted]"
#: A known secret shorter than this is too likely to occur in ordinary text to be blanked.
MIN_SECRET = 6


#: An escape as ``repr`` or JSON writes a character ("\\t", "\\x00", "\\u202e"): read as
#: spaces too, so that a token quoted right after one ("'memory/x\\tghp_...'") is seen whole.
_ESCAPE = re.compile(r"\\(?:[tnr0]|x[0-9a-fA-F]{2}|u[0-9a-fA-F]{4}|U[0-9a-fA-F]{8})")


def redact(text: str, secrets: Iterable[str | None] = ()) -> str:
    """``text`` with each known secret and every credential-shaped span blanked out: those
    found in it as written, and those found with its escapes read as spaces (one written
    with escaped line breaks is found as written)."""
    for secret in secrets:
        if secret and len(secret) >= MIN_SECRET:
            text = text.replace(secret, _REDACTED)
    spans = [(f.start, f.end) for f in find_credentials(text)]
    scanned = _ESCAPE.sub(lambda m: " " * len(m.group(0)), text)  # same offsets
    if scanned != text:
        spans += [(f.start, f.end) for f in find_credentials(scanned)]
    merged: list[list[int]] = []
    for start, end in sorted(spans):
        if merged and start <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], end)
        else:
            merged.append([start, end])
    for start, end in reversed(merged):
        text = text[:start] + _REDACTED + text[end:]
    return text


def _spans(text: str) -> list[tuple[int, int, str]]:
    """Every detector's findings in ``text`` as sorted ``(start, end, kind)``, merged."""
    # Only used to test for trigger words; offsets always come from ``text`` itself.
    folded = text.lower()
    spans: list[tuple[int, int, str]] = []
    for detector in _DETECTORS:
        haystack = folded if detector.folded else text
        for trigger in detector.triggers:  # a loop, not any(): no generator per detector
            if trigger in haystack:
                break
        else:
            continue
        candidates = sorted(span for span in detector.scan(text) if span[0] < span[1])
        if candidates:
            spans = _merge(spans, candidates, detector.kind)
    return spans


def _merge(
    accepted: list[tuple[int, int, str]], candidates: list[_Span], kind: str
) -> list[tuple[int, int, str]]:
    """Add candidates that overlap nothing already accepted; both inputs sorted by start.

    A linear merge rather than an insert per finding, so that text crafted to produce many
    findings of several kinds cannot make this step quadratic.
    """
    merged: list[tuple[int, int, str]] = []
    j = 0
    last_end = -1
    for start, end in candidates:
        while j < len(accepted) and accepted[j][0] <= start:
            merged.append(accepted[j])
            last_end = max(last_end, accepted[j][1])
            j += 1
        if last_end > start or (j < len(accepted) and accepted[j][0] < end):
            continue
        merged.append((start, end, kind))
        last_end = end
    merged.extend(accepted[j:])
    return merged


def describe(findings: list[CredentialFinding]) -> str:
    """Name what was found and where, for the message that refuses a write.

    For example ``"GitHub token on lines 1 and 3; Google API key on line 3"``: a phrase the
    caller embeds in its own refusal (which says what to do instead). It never quotes the
    secret: findings hold offsets, not text, and only kinds and line numbers are used. Long
    lists of lines are cut ("lines 1, 2, ... 8 and 40 more").
    """
    if not findings:
        return "no credential-shaped text"
    lines_by_kind: dict[str, set[int]] = {}
    for finding in findings:
        lines_by_kind.setdefault(finding.kind, set()).add(finding.line)
    parts = []
    for kind, lines in lines_by_kind.items():
        label = _LABELS.get(kind, kind.replace("_", " "))
        numbers = [str(n) for n in sorted(lines)]
        if len(numbers) == 1:
            parts.append(f"{label} on line {numbers[0]}")
        elif len(numbers) <= _LINES_SHOWN:
            parts.append(f"{label} on lines {', '.join(numbers[:-1])} and {numbers[-1]}")
        else:
            shown = ", ".join(numbers[:_LINES_SHOWN])
            parts.append(f"{label} on lines {shown} and {len(numbers) - _LINES_SHOWN} more")
    return "; ".join(parts)


_LINES_SHOWN = 8
