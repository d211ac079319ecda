"""Secrets in transcripts: find common credential shapes and replace them with a placeholder.

Agent transcripts hold whatever users pasted: API keys, tokens, private keys, database
URLs with passwords. The log is append-only and synced to the gateway, so every event is
redacted before it is written (the writer's door, ``eventlog.redact``; ingest also
redacts a whole file at once to count what it found), and every prompt to a model and
every hook output is redacted again. There is no opt-out. A secret is replaced by ``[REDACTED:<kind>]``, which names what was there and
keeps nothing of it; the text around it (a URL's scheme, user and host, an assignment's
name and quotes, an ``Authorization:`` header's scheme) stays. What is detected, one
entry of ``CATALOGUE`` per kind:

===================  =====================================================================
kind                 shape
===================  =====================================================================
private-key          a PEM block ``-----BEGIN ... PRIVATE KEY-----`` (RSA, EC, DSA, OPENSSH,
                     ENCRYPTED, PGP ``PRIVATE KEY BLOCK``) with its base64 body, up to the
                     matching END line (or the end of the base64 lines if it was cut off);
                     real newlines or ``\\n`` escapes
anthropic-key        ``sk-ant-`` + 20 or more of ``[A-Za-z0-9_-]`` (api, admin, oauth keys)
openai-key           ``sk-`` (``sk-proj-``, ``sk-svcacct-``, ``sk-admin-``) + 20 or more of
                     ``[A-Za-z0-9_-]`` mixing upper case, lower case and digits, or 32+ hex
                     digits (the ``sk-`` keys of OpenAI-compatible providers such as DeepSeek)
aws-access-key       ``AKIA``/``ASIA``/``ABIA``/``ACCA`` + 16 of ``[A-Z2-7]``
aws-secret-key       40 of ``[A-Za-z0-9/+]`` (upper, lower and a digit) within 200 characters
                     after an AWS access key id, or assigned to an ``aws_secret_access_key``
                     / ``SecretAccessKey`` name
github-token         ``ghp_``/``gho_``/``ghu_``/``ghs_``/``ghr_`` + 36+ alphanumerics,
                     ``github_pat_`` + 50+
gitlab-token         ``glpat-``, ``gldt-``, ``glrt-``, ``glptt-``, ``glcbt-``, ``gloas-``,
                     ``glsoat-``, ``glffct-``, ``glimt-``, ``glagent-`` + 20+; ``GR1348941`` + 20+
slack-token          ``xoxb-``/``xoxp-``/``xoxa-``/``xoxo-``/``xoxr-``/``xoxs-``/``xoxe-``,
                     ``xapp-`` + 10+ of ``[A-Za-z0-9-]`` with a digit
slack-webhook        the path of ``hooks.slack.com/services/...`` (and ``workflows``, ``triggers``)
google-api-key       ``AIza`` + 35 of ``[A-Za-z0-9_-]``
google-oauth         ``ya29.`` access tokens, ``GOCSPX-`` client secrets
stripe-key           ``sk_live_``/``sk_test_``/``rk_live_``/``rk_test_`` + 20+, ``whsec_`` + 24+
huggingface-token    ``hf_`` + 34+ letters and digits, mixed case
npm-token            ``npm_`` + 36 letters and digits
jwt                  ``eyJ...`` ``.`` ``eyJ...`` ``.`` signature, whose header decodes to JSON
bearer-token         the credential after ``Authorization: Bearer`` (or ``Token``), in headers,
                     curl ``-H`` arguments and JSON
basic-auth           the credential after ``Authorization: Basic`` (it must decode to
                     ``user:password``), and the password of ``curl -u user:password``
url-password         the password of ``scheme://user:password@host``; scheme, user and host stay
password-assignment  the value assigned (``=``, ``:``, ``=>``, ``:=``) to a name whose last word
                     is password/passwd/pwd, PASS (upper case), secret, token (not
                     max/next_page/idempotency... tokens), apikey, or key after api, secret,
                     private, access, client, auth... (``DB_PASSWORD``, ``dbPassword``,
                     ``client_secret``, ``GITHUB_TOKEN``, ``x-api-key``, ``SECRET_KEY``), in
                     code, env files, YAML, JSON, headers and ``--flag=value``, when the value
                     looks like a secret: passwords 6+ characters with a digit or a symbol,
                     other secrets 12+ with letters and digits, no whitespace, not a
                     placeholder, reference, path, URL or identifier (see ``_assigned_kind``);
                     also a JSON object's string value under such a key (or ``Authorization``);
                     in prose, ``password is X`` / ``password: X`` when X has letters and digits
cli-password         a password given as a command argument: ``mysql``/``mariadb`` ``-pX``
                     (attached; ``-p DB`` prompts), ``sshpass -p X``, ``redis-cli -a X``,
                     ``... login -p X`` (docker, podman, helm, az...), ``sqlcmd``/``bcp -P X``,
                     ``mongo``/``mongosh -p X``, ``ldap* -w X``, ``smbclient -U user%X``,
                     ``zip -P X``, ``7z -pX``, openssl's ``pass:X``, ``htpasswd -b [file] user X``,
                     and any ``--<secret name> X`` (``--password X``, ``--client-secret X``)
cookie               the values of ``Cookie:`` pairs, of the first pair of ``Set-Cookie:`` (the
                     attributes stay), of curl's ``-b``/``--cookie 'name=value; ...'``, when 8+
                     characters with a digit, mixed case or 16+ long
high-entropy-token   a random-looking token (20+ characters, letters and digits, 3.5 bits per
                     character, or 32+ hex digits at 3.0) starting within ``ENTROPY_WINDOW`` (48)
                     characters after the word key/token/secret/password on the same line; not
                     after "primary key", "next page token"..., not a version, uuid or path
===================  =====================================================================

Tokens split by invisible characters (zero-width spaces and joiners, soft hyphens, BOMs)
or by a line break a terminal wrapped into them are read through: ``find`` also scans the
text as if they were not there and replaces the whole token, with them. Across a line
break only shapes that prove themselves count (a known prefix or structure,
``_SHAPE_KINDS``), and only where the line before is at least ``WRAP_MIN_LINE`` (30)
characters and the token across the break ``WRAP_MIN_TOKEN`` (16): a wrapped paragraph is
not a token.

Every shape has a boundary on both sides (``xsk-...`` or a run inside base64 data is not a
key) and rejects obvious placeholders: ``sk-...``, ``YOUR_API_KEY``, ``<token>``,
``${VAR}``, ``$VAR``, ``****``, ``xxxx``, ``None``/``null``, ``changeme``, values with
"example"/"placeholder"/"dummy"/"redacted" in them. Git SHAs, UUIDs, base64 image
data, file paths and URLs without a password are never matched on their own.

API: ``redact(text) -> (text, kinds)``, ``redact_value(obj) -> (obj, kinds)`` for decoded
JSON (dicts, lists, strings; keys are kept as they are), and ``redact_values(values)`` to
do many at once (one scan for all of them: what ingest uses). ``kinds`` has one entry per
secret replaced, in text order. All three are idempotent: redacting redacted text finds
nothing new (placeholders never match a shape).

Speed: one precompiled anchor regex finds the few places a shape could start (see "the
anchor scan" below), and only there are the shapes matched precisely; ``redact_values``
joins all the strings of a batch with NUL (no shape crosses one) so a whole transcript
file is one scan. About 60 MB/s on tools/bench.py's chat text (130 before the command,
cookie, prose and wrap shapes), ~11 us for a chat-sized message, which is what the log's
door adds to an append (``python -m eventlog.ingest.secrets [--show] PATH...`` measures it
on transcripts and lists what it finds, with the secrets themselves masked). The scan is ``re``'s floor here: a
multi-pattern engine (hyperscan) scans the same text ~6x faster, at the cost of a
native dependency. Every pattern is an ``eventlog.lazy_pattern.LazyPattern``, compiled at its
first use: compiling all ~50 at import took ~17 ms, about a third of ``python -c pass``, and a
short process (a SessionStart hook redacting its memory files) runs the anchor scan and only
the shapes whose anchors it found.
"""

from __future__ import annotations

import base64
import binascii
import json
import math
import re
from bisect import bisect_right
from itertools import repeat

from eventlog.lazy_pattern import LazyPattern
from eventlog.record import FrozenRecord

TYPE_CHECKING = False  # typing's, without importing it: a SessionStart that renders loads this module
if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Iterator, Sequence
    from typing import Any

__all__ = ["CATALOGUE", "KINDS", "PLACEHOLDER", "Kind", "find", "kinds_summary", "placeholder", "collect_strings", "redact", "redact_value", "suspects",
           "redact_values"]

#: The text that replaces a secret: names the kind, keeps nothing of the secret.
PLACEHOLDER = "[REDACTED:{}]"
_REDACTED = "[REDACTED:"


class Kind(FrozenRecord):
    """One kind of secret: its name (used in placeholders and ``redacted`` lists) and what is matched."""

    __slots__ = ("name", "shape")
    name: str
    shape: str

    def __init__(self, name: str, shape: str) -> None:
        self._freeze(name=name, shape=shape)


CATALOGUE: tuple[Kind, ...] = (
    Kind("private-key", "PEM block -----BEGIN ... PRIVATE KEY----- with its base64 body, to its END line"),
    Kind("anthropic-key", "sk-ant-... (20+ of [A-Za-z0-9_-] after the type)"),
    Kind("openai-key", "sk-, sk-proj-, sk-svcacct-, sk-admin- + 20+ chars mixing case and digits, or 32+ hex"),
    Kind("aws-access-key", "AKIA/ASIA/ABIA/ACCA + 16 of [A-Z2-7]"),
    Kind("aws-secret-key", "40 of [A-Za-z0-9/+] just after an AWS key id, or assigned to aws_secret_access_key"),
    Kind("github-token", "ghp_/gho_/ghu_/ghs_/ghr_ + 36+ alphanumerics, github_pat_ + 50+"),
    Kind("gitlab-token", "glpat-, gldt-, glrt-, glptt-, glcbt-, gloas-, glsoat-, glffct-, glimt-, glagent- + 20+; GR1348941..."),
    Kind("slack-token", "xoxb-/xoxp-/xoxa-/xoxo-/xoxr-/xoxs-/xoxe-, xapp- + 10+ with a digit"),
    Kind("slack-webhook", "the path of https://hooks.slack.com/services/..."),
    Kind("google-api-key", "AIza + 35 of [A-Za-z0-9_-]"),
    Kind("google-oauth", "ya29. access tokens, GOCSPX- client secrets"),
    Kind("stripe-key", "sk_live_/sk_test_/rk_live_/rk_test_ + 20+, whsec_ + 24+"),
    Kind("huggingface-token", "hf_ + 34+ letters/digits, mixed case"),
    Kind("npm-token", "npm_ + 36 letters/digits"),
    Kind("jwt", "eyJ<header>.eyJ<payload>.<signature>, the header decoding to JSON"),
    Kind("bearer-token", "the credential in Authorization: Bearer <token> (or Token <token>)"),
    Kind("basic-auth", "the credential in Authorization: Basic <base64 user:pass>, the password in curl -u user:pass"),
    Kind("url-password", "the password in scheme://user:password@host"),
    Kind("password-assignment", "a secret-looking value assigned to a password/secret/token/api-key name"),
    Kind("cli-password", "a password given as a command argument: mysql -pX, sshpass -p X, redis-cli -a X, az/docker "
         "login -p X, openssl pass:X, htpasswd -b f u X, --password X..."),
    Kind("cookie", "the values of Cookie: and Set-Cookie: headers and of curl -b/--cookie name=value"),
    Kind("high-entropy-token", "a random-looking 20+ character token within 48 characters after key/token/secret/password"),
)
KINDS: tuple[str, ...] = tuple(k.name for k in CATALOGUE)


def placeholder(kind: str) -> str:
    """``[REDACTED:<kind>]``."""
    return PLACEHOLDER.format(kind)


# ----------------------------------------------------------------------------- shared checks

_ALNUM = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789")
#: characters that continue a token: a shape preceded or followed by one is part of something longer
_TOKEN = _ALNUM | frozenset("_-")
#: ... and for shapes that could sit inside base64 data
_B64 = _TOKEN | frozenset("+/")

#: in a value (lower-cased), these mark an example or a placeholder, not a credential
_FAKE_MARKS = ("xxxx", "***", "...", "\u2026", "${", "{{", "%(", "your", "example", "placeholder", "redacted", "dummy",
               "fake", "changeme", "change_me", "replaceme", "replace_me", "insert", "goes_here", "goeshere", "_here",
               "123456789", "abcdefghij", "00000000")
_WORDS_ONLY = frozenset({
    "none", "null", "nil", "undefined", "true", "false", "string", "str", "bytes", "bool", "int", "required",
    "optional", "empty", "default", "env", "value", "secret", "secrets", "password", "passwd", "pass", "pwd",
    "token", "key", "apikey", "redacted", "hidden", "masked", "notset", "unset", "todo", "tbd", "na", "test",
})


def _fake(s: str) -> bool:
    """An obvious placeholder or example rather than a credential."""
    if len(set(s)) <= 2:
        return True
    low = s.lower()
    if any(mark in low for mark in _FAKE_MARKS) or ("<" in low and ">" in low):
        return True
    return low.replace("_", "").replace("-", "") in _WORDS_ONLY


def _free_before(text: str, i: int, chars: frozenset[str] = _TOKEN) -> bool:
    return i == 0 or text[i - 1] not in chars


def _free_after(text: str, i: int, chars: frozenset[str] = _TOKEN) -> bool:
    return i >= len(text) or text[i] not in chars


_UPPER = LazyPattern(r"[A-Z]")
_LOWER = LazyPattern(r"[a-z]")
_DIGIT = LazyPattern(r"[0-9]")
_SPACE = LazyPattern(r"\s")
_SYMBOL = LazyPattern(r"[^A-Za-z0-9_.-]")


def _classes(s: str) -> tuple[bool, bool, bool]:
    """(has upper case, has lower case, has a digit) among ASCII letters and digits."""
    return _UPPER.search(s) is not None, _LOWER.search(s) is not None, _DIGIT.search(s) is not None


_HEX = LazyPattern(r"[0-9a-fA-F]+")

Hit = tuple[int, int, str]  # start, end (of the part replaced), kind
Out = list[tuple[int, int, str, int]]  # hits with a priority: 0 = a token shape, 1 = a shape found by its context


# ----------------------------------------------------------------------------- the precise shapes
#
# Each ``_at_*`` function checks one shape at a position the anchor scan (below) found and
# appends what it accepts to ``out`` as (start, end, kind, priority): priority 0 for token
# shapes, 1 for shapes found by their context, which lose where the two overlap.

_SK = LazyPattern(r"sk-([A-Za-z0-9_-]{20,})")
_SK_PREFIXES = ("proj-", "svcacct-", "admin-", "None-")


def _at_sk(text: str, s: int, out: Out) -> None:
    m = _SK.match(text, s)
    if m is None or not _free_before(text, s):
        return
    body = m.group(1)
    if body.startswith("ant-"):
        if len(body) >= 24 and not _fake(body[4:]):
            out.append((s, m.end(), "anthropic-key", 0))
        return
    for p in _SK_PREFIXES:
        if body.startswith(p):
            body = body[len(p):]
            break
    if len(body) < 20 or _fake(body):
        return
    up, lo, dig = _classes(body[:256])
    if (up and lo and dig) or (len(body) >= 32 and _HEX.fullmatch(body)):
        out.append((s, m.end(), "openai-key", 0))


_A = LazyPattern(r"A(?:(?:KIA|SIA|BIA|CCA)[A-Z2-7]{16}|Iza[A-Za-z0-9_-]{35})")
_AWS40 = LazyPattern(r"(?<![A-Za-z0-9/+=])[A-Za-z0-9/+]{40}(?![A-Za-z0-9/+=])")
#: how far after an AWS access key id its secret key is looked for
AWS_SECRET_WINDOW = 200


def _at_a(text: str, s: int, out: Out) -> None:
    m = _A.match(text, s)
    if m is None:
        return
    e = m.end()
    if not (_free_before(text, s, _B64) and _free_after(text, e, _B64)):
        return
    tok = m.group()
    if tok[1] == "I":
        if not _fake(tok[4:]):
            out.append((s, e, "google-api-key", 0))
        return
    if "EXAMPLE" in tok:  # AWS's documented example key
        return
    out.append((s, e, "aws-access-key", 0))
    stop = text.find("\x00", e, e + AWS_SECRET_WINDOW)
    w = _AWS40.search(text, e, stop if stop >= 0 else min(len(text), e + AWS_SECRET_WINDOW))
    if w is not None and _free_after(text, w.end(), _B64) and _aws_secret_ok(w.group()):
        out.append((w.start(), w.end(), "aws-secret-key", 0))


def _aws_secret_ok(v: str) -> bool:
    up, lo, dig = _classes(v)
    return len(v) == 40 and up and lo and dig and "EXAMPLE" not in v and not _fake(v)


_G = LazyPattern(r"g(?:h[pousr]_[A-Za-z0-9]{36,251}|ithub_pat_[A-Za-z0-9_]{50,250}|"
                r"l(?:pat|dt|rt|ptt|cbt|oas|soat|ffct|imt|agent)-[A-Za-z0-9_-]{20,}(?:\.[A-Za-z0-9]{2}\.[A-Za-z0-9]{6,12})?)")


def _at_g(text: str, s: int, out: Out) -> None:
    m = _G.match(text, s)
    if m is None or not _free_before(text, s):
        return
    tok = m.group()
    body = tok[tok.index("-") + 1:] if tok[1] == "l" else tok[4:] if tok[1] == "h" else tok[11:]
    if not _fake(body):
        out.append((s, m.end(), "gitlab-token" if tok[1] == "l" else "github-token", 0))


_G_UPPER = LazyPattern(r"G(?:OCSPX-[A-Za-z0-9_-]{20,}|R1348941[A-Za-z0-9_-]{20,})")


def _at_g_upper(text: str, s: int, out: Out) -> None:
    m = _G_UPPER.match(text, s)
    if m is not None and _free_before(text, s) and not _fake(m.group()[7:]):
        out.append((s, m.end(), "google-oauth" if m.group()[1] == "O" else "gitlab-token", 0))


_YA29 = LazyPattern(r"ya29\.[A-Za-z0-9_-]{20,}")


def _at_ya29(text: str, s: int, out: Out) -> None:
    m = _YA29.match(text, s)
    if m is not None and _free_before(text, s) and not _fake(m.group()[5:]):
        out.append((s, m.end(), "google-oauth", 0))


_X = LazyPattern(r"x(?:ox(?:[abposr]|e(?:\.xox[bp])?)|app)-([A-Za-z0-9-]{10,})")


def _at_x(text: str, s: int, out: Out) -> None:
    m = _X.match(text, s)
    if m is not None and _free_before(text, s) and _classes(m.group(1))[2] and not _fake(m.group(1)):
        out.append((s, m.end(), "slack-token", 0))


_SLACK_HOOK = LazyPattern(r"hooks\.slack\.com/(?:services|workflows|triggers)/([A-Za-z0-9_/-]{20,})")


def _at_slack_hook(text: str, s: int, out: Out) -> None:
    m = _SLACK_HOOK.match(text, s)
    if m is not None and not _fake(m.group(1)):
        out.append((m.start(1), m.end(1), "slack-webhook", 0))


_STRIPE = LazyPattern(r"[sr]k_(?:live|test)_[A-Za-z0-9]{20,}|whsec_[A-Za-z0-9+/=]{24,}")


def _at_stripe(text: str, s: int, out: Out) -> None:
    m = _STRIPE.match(text, s)
    if m is not None and _free_before(text, s) and not _fake(m.group()[8:]):
        out.append((s, m.end(), "stripe-key", 0))


_HF = LazyPattern(r"hf_([A-Za-z0-9]{34,})")
_NPM = LazyPattern(r"npm_([A-Za-z0-9]{36})(?![A-Za-z0-9])")


def _at_hf(text: str, s: int, out: Out) -> None:
    m = _HF.match(text, s)
    if m is None or not _free_before(text, s):
        return
    up, lo, _ = _classes(m.group(1))
    if up and lo and not _fake(m.group(1)):
        out.append((s, m.end(), "huggingface-token", 0))


def _at_npm(text: str, s: int, out: Out) -> None:
    m = _NPM.match(text, s)
    if m is None or not _free_before(text, s) or not _free_after(text, m.end()):
        return
    _, _, dig = _classes(m.group(1))
    if dig and not _fake(m.group(1)):
        out.append((s, m.end(), "npm-token", 0))


_JWT = LazyPattern(r"eyJ([A-Za-z0-9_-]{5,})\.eyJ[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]*")


def _at_jwt(text: str, s: int, out: Out) -> None:
    m = _JWT.match(text, s)
    if m is not None and _free_before(text, s) and _json_b64("eyJ" + m.group(1)):
        out.append((s, m.end(), "jwt", 0))


def _json_b64(seg: str) -> bool:
    """A base64url segment that decodes to a JSON object (a JWT header)."""
    try:
        raw = base64.urlsafe_b64decode(seg + "=" * (-len(seg) % 4))
        return isinstance(json.loads(raw), dict)
    except (binascii.Error, ValueError):
        return False


_PEM = LazyPattern(r"-----BEGIN ((?:[A-Z0-9]+ )*)PRIVATE KEY( BLOCK)?-----")
#: base64 lines (or RFC 1421 headers such as Proc-Type) after a BEGIN line whose END is missing
_PEM_TAIL = LazyPattern(r"(?:(?>(?:\\[nr]|[ \t\r\n])+)(?:[A-Za-z0-9+/=]{16,}|[A-Z][A-Za-z-]*: [^\n\\\x00]*))+")
_B64_RUN = LazyPattern(r"[A-Za-z0-9+/=]{16,}")
#: the longest private key block looked for (a 16384-bit RSA key is ~13 KB)
PEM_MAX = 64 * 1024


def _at_pem(text: str, s: int, out: Out) -> None:
    m = _PEM.match(text, s)
    if m is None:
        return
    stop = text.find("\x00", m.end(), m.end() + PEM_MAX)
    limit = stop if stop >= 0 else min(len(text), m.end() + PEM_MAX)
    end_line = f"-----END {m.group(1)}PRIVATE KEY{m.group(2) or ''}-----"
    e = text.find(end_line, m.end(), limit)
    if e >= 0 and _pem_body_ok(text[m.end():e]):
        out.append((s, e + len(end_line), "private-key", 0))
        return
    tail = _PEM_TAIL.match(text, m.end(), limit)  # cut off before its END line
    if tail is not None and _pem_body_ok(tail.group()):
        out.append((s, tail.end(), "private-key", 0))


def _pem_body_ok(body: str) -> bool:
    """Mostly base64 (at least 64 characters of it): a key, not code that mentions the markers."""
    runs = sum(len(r) for r in _B64_RUN.findall(body))
    rest = len(body) - runs - sum(body.count(c) for c in " \t\r\n\\")
    return runs >= 64 and rest <= runs // 4


# ----------------------------------------------------------------------------- shapes found by context

_URL = LazyPattern(r"://([^\s:/?#@\"'`<>\\\[\]\x00]{0,128}):([^\s/?#\"'`<>\\\x00]{1,256})@(?=[^\s/?#@\"'`<>\\\x00])")


def _at_url(text: str, s: int, out: Out) -> None:
    """``s`` is the ``://`` of a URL; its password, if it has one, is matched."""
    if s == 0 or text[s - 1] not in _ALNUM:  # no scheme before ://
        return
    m = _URL.match(text, s)
    if m is None:
        return
    pw = m.group(2)
    if _REDACTED in pw or _fake(pw) or _is_template_var(pw):
        return
    out.append((m.start(2), m.end(2), "url-password", 1))


def _is_template_var(v: str) -> bool:
    """``$VAR``, ``${VAR}``, ``%VAR%``, ``{name}``, ``<name>``: a reference, not a value."""
    return v.startswith(("$", "{", "<")) or (v.startswith("%") and v.endswith("%"))


_AUTH = LazyPattern(r"uthorization(?:\\?[\"'])?[ \t]*[:=][ \t]*(?:\\?[\"'])?[ \t]*"
                   r"(?:(?:[Bb]earer|BEARER|[Tt]oken)[ \t]+([A-Za-z0-9._~+/=-]{8,})|(?:[Bb]asic|BASIC)[ \t]+([A-Za-z0-9+/]{6,}={0,2}))")


def _at_auth(text: str, s: int, out: Out) -> None:
    """``s`` is the ``u`` of ``[Aa]uthorization``."""
    m = _AUTH.match(text, s)
    if m is None or s == 0 or text[s - 1] not in "Aa":
        return
    if m.group(1) is not None:
        if _bearer_ok(m.group(1)) and _free_after(text, m.end(1)):
            out.append((m.start(1), m.end(1), "bearer-token", 1))
    elif _basic_ok(m.group(2)) and _free_after(text, m.end(2)):
        out.append((m.start(2), m.end(2), "basic-auth", 1))


def _bearer_ok(v: str) -> bool:
    if _REDACTED in v or _fake(v):
        return False
    up, lo, dig = _classes(v)
    return dig or (len(v) >= 24 and up and lo)


def _basic_ok(v: str) -> bool:
    try:
        raw = base64.b64decode(v, validate=True).decode("utf-8")
    except (binascii.Error, ValueError):
        return False
    _, sep, pw = raw.partition(":")
    return bool(sep) and bool(pw) and raw.isprintable() and not _fake(pw)


_CURL_USER = LazyPattern(r"[ \t](?:-u|--user)(?:[ \t]+|=)\\?[\"']?([^\s:\"'`\\\x00]*):([^\s\"'`\\\x00]+)")


def _at_curl(text: str, s: int, out: Out) -> None:
    """``s`` is a ``curl``: the password of its ``-u user:password`` on the same line."""
    if not (_free_before(text, s) and _free_after(text, s + 4)):
        return
    eol = len(text)
    for stop in ("\n", "\x00"):
        i = text.find(stop, s, eol)
        if i >= 0:
            eol = i
    _curl_cookies(text, s + 4, eol, out)
    m = _CURL_USER.search(text, s + 4, eol)
    if m is None:
        return
    pw = m.group(2)
    if _REDACTED in pw or _fake(pw) or _is_template_var(pw):
        return
    out.append((m.start(2), m.end(2), "basic-auth", 1))


# ---- assignments: password=..., "api_key": "...", SECRET_KEY: ..., --token=...

#: what follows a name and its separator (the anchor scan matched up to the separator)
_VALUE = LazyPattern(r"[ \t]*(?:\\?\"([^\"\\\r\n\x00]{1,256})\\?\"|\\?'([^'\\\r\n\x00]{1,256})\\?'|"
                    r"([^\s\"'`,;(){}\[\]<>\\|&\x00]{1,256}))")
_NAME_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.-")
_SEP_CHARS = " \t=:>\"'*\\]"
_WORD = LazyPattern(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|[0-9]+")
_NOT_SECRET_TOKENS = frozenset({
    "next", "page", "continuation", "cursor", "sync", "max", "min", "input", "output", "total", "prompt",
    "completion", "eos", "bos", "pad", "unk", "sep", "cls", "mask", "special", "start", "end", "stop", "num",
    "count", "reasoning", "cache", "cached", "first", "last", "new", "old", "cancellation", "cancel", "csrf", "xsrf",
    # AWS-style request bookkeeping: idempotency and concurrency tokens, not credentials
    "change", "lock", "idempotency", "client", "request", "update", "import", "export", "sequence", "marker", "resume",
    "backward", "forward", "pagination", "iterator", "shard", "position", "action", "product", "task", "execution"})
_SECRET_KEY_WORDS = frozenset({
    "api", "secret", "private", "access", "signing", "encryption", "master", "client", "auth", "app", "license",
    "account", "service", "subscription", "admin", "sas", "storage", "shared", "webhook", "bot",
    "consumer", "deploy", "openai", "anthropic", "stripe"})
_BARE_BAD_START = tuple("$%{<[(!*&@:=.~/#")
_QUOTED_BAD_START = ("$", "%", "{", "<", "/", "~/", "./", "../", "#{")
_DOTTED_NAME = LazyPattern(r"[A-Za-z_$][\w$]*(?:\.[A-Za-z_$][\w$]*)+")
_SNAKE_NAME = LazyPattern(r"[a-z]+(?:_[a-z0-9]+)+")
_IDENTIFIER = LazyPattern(r"[A-Za-z_][A-Za-z0-9_]*")
_CODE_AFTER = frozenset(",)]};")
_name_cache: dict[str, str] = {}


def _name_family(name: str) -> str:
    """What a variable/field name says its value is: ``password``, ``secret``, ``aws-secret`` or ``""``.

    The name's last word decides (``DB_PASSWORD``, ``dbPassword``, ``PGPASSWORD``,
    ``client_secret``, ``GITHUB_TOKEN``, ``apiKey``, ``x-api-key``,
    ``aws_secret_access_key``); ``bypass``, ``monkey``, ``max_tokens``,
    ``next_page_token``, ``primary_key`` say nothing.
    """
    got = _name_cache.get(name)
    if got is not None:
        return got
    words = [w.lower() for w in _WORD.findall(name.rsplit(".", 1)[-1])]
    fam = ""
    if words and "public" not in words and "publishable" not in words:
        last, prev = words[-1], words[-2] if len(words) > 1 else ""
        if last.endswith(("password", "passwd", "passphrase")) or last in ("pwd", "pass"):
            fam = "password"
        elif last.endswith(("secret", "apikey")):
            fam = "secret"
        elif last.endswith("token"):
            fam = "" if prev in _NOT_SECRET_TOKENS or last[:-5] in _NOT_SECRET_TOKENS else "secret"
        elif last == "key" and prev in _SECRET_KEY_WORDS:
            fam = "aws-secret" if "secret" in words and ("access" in words or "aws" in words) else "secret"
    if len(_name_cache) < 4096:
        _name_cache[name] = fam
    return fam


def _assigned_kind(fam: str, v: str, *, bare: bool) -> str | None:
    """The kind to record for value ``v`` assigned to a name of family ``fam``, or None to keep it.

    A value is kept when it is a placeholder (``_fake``), a reference (``$VAR``,
    ``%VAR%``, ``{name}``, ``os.environ...``, ``self.token``), a path or URL, has
    whitespace, or is a plain word or identifier. Password values need 6+ characters
    with a digit or a symbol; secret/token/key values 12+ with letters and digits.
    """
    if not fam or not v or _REDACTED in v or "://" in v or _SPACE.search(v) is not None:
        return None
    if v.startswith(_BARE_BAD_START if bare else _QUOTED_BAD_START) or _is_template_var(v) or _fake(v):
        return None
    if bare and (_DOTTED_NAME.fullmatch(v) or _SNAKE_NAME.fullmatch(v)):
        return None
    if v.count("/") + v.count(":") >= 2:
        return None  # a path, an ARN or a URN, not a password
    if fam == "aws-secret" and len(v) == 40 and _aws_secret_ok(v) and _AWS40.fullmatch(v):
        return "aws-secret-key"
    up, lo, dig = _classes(v)
    if fam == "password":
        return "password-assignment" if len(v) >= 6 and (dig or _SYMBOL.search(v) is not None) else None
    return "password-assignment" if len(v) >= 12 and dig and (up or lo) else None


def _at_assign(text: str, m: re.Match[str], out: Out) -> None:
    """``m`` is an anchor match: the end of a secret-sounding name and its separator."""
    kw_end = m.start() + len(m.group().rstrip(_SEP_CHARS))
    s = kw_end
    while s > 0 and text[s - 1] in _NAME_CHARS and kw_end - s < 80:
        s -= 1
    if s > 0 and text[s - 1] == ":" and text[s - 2:s] == "::":
        return  # a type name such as AWS::ApiGateway::ApiKey, not a variable
    if not m.group()[kw_end - m.start():].strip(" \t"):  # a space after the name, no = or :
        if text.startswith("--", s) and (s == 0 or text[s - 1] in " \t\"'\n\x00"):
            _at_long_flag(text, s, kw_end, m.end(), out)
        else:
            _at_prose(text, s, kw_end, m.end(), out)
        return
    fam = _name_family(text[s:kw_end].lstrip("-"))
    if not fam:
        return
    v = _VALUE.match(text, m.end())
    if v is None:
        return
    g = v.lastindex or 0
    value = v.group(g)
    bare = g == 3
    if bare:
        nxt = text[v.end():v.end() + 1]
        if nxt == "(":
            return  # a call: password=get_password()
        if nxt in _CODE_AFTER and _IDENTIFIER.fullmatch(value):
            return  # a variable or a type in code: f(token=tok1, ...), private_key: PKCS7PrivateKeyTypes,
        if m.group().endswith(":") and m.group()[-2:-1] not in ("\"", "'") and not text[m.end():m.end() + 1].isspace():
            return  # name:value without a space is a label or part of a URL, not YAML
        value = value.rstrip(".:")
    kind = _assigned_kind(fam, value, bare=bare)
    if kind is not None:
        out.append((v.start(g), v.start(g) + len(value), kind, 1))


# ---- passwords given as command arguments: mysql -pX, sshpass -p X, redis-cli -a X, openssl pass:X ...

#: command word -> (flags whose value is a password, whether the value may follow the flag directly)
_CMD_FLAGS: dict[str, tuple[str, bool]] = {
    "mysql": ("p", True), "sshpass": ("p", True), "redis-cli": ("a", False), "login": ("p", False),
    "sqlcmd": ("P", False), "bcp": ("P", False), "mongo": ("p", False), "mongosh": ("p", False),
    "ldapsearch": ("w", False), "ldapadd": ("w", False), "ldapmodify": ("w", False), "ldapdelete": ("w", False),
    "ldapwhoami": ("w", False), "ldappasswd": ("w", False), "smbclient": ("U", False), "rpcclient": ("U", False),
    "smbmap": ("U", False), "zip": ("P", False), "unzip": ("P", False), "7z": ("p", True),
}
_CMD_PREFIXES = (("mysql", "mysql"), ("mariadb", "mysql"), ("mongo", "mongo"), ("ldap", "ldapsearch"))
#: what ends a shell command: a value or a command word is looked for within one
_CMD_STOP = LazyPattern(r"[\n\x00;|&`(]|\$\(")
_ARG = LazyPattern(r"\\?\"([^\"\\\r\n\x00]{1,256})\\?\"|'([^'\\\r\n\x00]{1,256})'|([^\s\"'`;|&<>()\x00]{1,256})")
_WORDS = LazyPattern(r"[^\s\"'`;|&<>()=\x00]+")


def _command_of(text: str, flag: int) -> str:
    """The known command the flag at ``flag`` belongs to: the nearest known command word before it."""
    start = max(0, flag - 300)
    for m in _CMD_STOP.finditer(text, start, flag):
        start = m.end()
    for word in reversed(_WORDS.findall(text, start, flag)):
        name = word.rsplit("/", 1)[-1].lower()
        if name.endswith(".exe"):
            name = name[:-4]
        if name in _CMD_FLAGS:
            return name
        for prefix, family in _CMD_PREFIXES:
            if name.startswith(prefix):
                return family
    return ""


def _cli_value_ok(v: str) -> bool:
    """A password typed as an argument: anything but a flag, a placeholder or a reference."""
    return (len(v) >= 3 and not v.startswith("-") and _REDACTED not in v and not _fake(v) and not _is_template_var(v)
            and not v.startswith(("$(", "`", "~/", "./", "/")))


def _at_flag(text: str, a: int, out: Out) -> None:
    """``a`` is the ``-`` of a one-letter flag after a space: ``-p``, ``-a``, ``-P``, ``-w``, ``-U``."""
    flag = text[a + 1]
    cmd = _command_of(text, a)
    if not cmd:
        return
    want, attached_ok = _CMD_FLAGS[cmd]
    if flag != want:
        return
    at = a + 2
    attached = at < len(text) and not text[at].isspace()
    if attached and not attached_ok:
        return
    if not attached:
        while at < len(text) and text[at] in " \t":
            at += 1
        if cmd == "mysql":
            return  # mysql -p DB prompts for the password: DB is a database
    m = _ARG.match(text, at)
    if m is None:
        return
    g = m.lastindex or 0
    s, e = m.start(g), m.end(g)
    if cmd in ("smbclient", "rpcclient", "smbmap"):
        cut = text.find("%", s, e)
        if cut < 0:
            return
        s = cut + 1
    if s < e and _cli_value_ok(text[s:e]):
        out.append((s, e, "cli-password", 1))


def _at_htpasswd(text: str, a: int, out: Out) -> None:
    """``a`` is the end of ``htpasswd``: with ``-b`` its last argument is the password (``-n``: no file before it)."""
    stop = _CMD_STOP.search(text, a)
    end = stop.start() if stop is not None else len(text)
    args = list(_ARG.finditer(text, a, end))
    flags = "".join(m.group()[1:] for m in args if m.group().startswith("-"))
    if "b" not in flags:
        return
    rest = [m for m in args if not m.group().startswith("-")]
    need = 2 if "n" in flags else 3
    if len(rest) < need:
        return
    m = rest[need - 1]
    g = m.lastindex or 0
    if _cli_value_ok(m.group(g)):
        out.append((m.start(g), m.end(g), "cli-password", 1))


def _at_pass_colon(text: str, a: int, out: Out) -> None:
    """``a`` is the ``:`` of openssl's ``pass:<password>`` (``-passin``, ``-passout``, ``-pass``)."""
    if a >= 5 and text[a - 5] in _TOKEN:
        return  # bypass:..., a longer name
    m = _ARG.match(text, a + 1)
    if m is None or m.start() != a + 1:
        return
    g = m.lastindex or 0
    if _cli_value_ok(m.group(g)):
        out.append((m.start(g), m.end(g), "cli-password", 1))


# ---- cookies: Cookie: and Set-Cookie: headers, curl -b / --cookie

_COOKIE_PAIR = LazyPattern(r"[ \t]*([!#$%&'*+.^_`|~0-9A-Za-z-]{1,128})=([^;\s\"'\\\x00]*)")


def _cookie_value_ok(v: str) -> bool:
    if len(v) < 8 or _REDACTED in v or _fake(v) or _is_template_var(v):
        return False
    up, lo, dig = _classes(v)
    return dig or len(v) >= 16 or (up and lo)


def _cookie_pairs(text: str, s: int, end: int, out: Out, *, first_only: bool) -> None:
    """Redact the values of ``name=value; ...`` in ``text[s:end]`` (names and attributes stay)."""
    while s < end:
        m = _COOKIE_PAIR.match(text, s, end)
        if m is None:
            return
        if _cookie_value_ok(m.group(2)):
            out.append((m.start(2), m.end(2), "cookie", 1))
        if first_only:
            return
        s = m.end()
        if s >= end or text[s] != ";":
            return
        s += 1


_COOKIE_HEADER = LazyPattern(r"ie(?:\\?[\"'])?[ \t]*:[ \t]*(?:\\?[\"'])?")


def _at_cookie(text: str, a: int, out: Out) -> None:
    """``a`` is the ``k`` of ``[Cc]ookie``: a ``Cookie:`` or ``Set-Cookie:`` header (or a JSON key of that name)."""
    m = _COOKIE_HEADER.match(text, a + 1)
    if m is None or (a >= 4 and text[a - 4] in _ALNUM and text[a - 8:a - 3].lower() != "set-c"):
        return
    end = len(text)
    for stop in ("\n", "\x00", '"', "'"):
        i = text.find(stop, m.end(), end)
        if i >= 0:
            end = i
    _cookie_pairs(text, m.end(), end, out, first_only=text[a - 8:a - 3].lower() == "set-c")


_CURL_COOKIE = LazyPattern(r"[ \t](?:-b|--cookie)(?:[ \t]+|=)(?:\\?[\"']?)([^\s\"'\\\x00=]+=[^\"'\\\n\x00]*)")


def _curl_cookies(text: str, s: int, eol: int, out: Out) -> None:
    """The cookie values of curl's ``-b 'name=value; ...'`` (``-b FILE`` names a file and is left alone)."""
    for m in _CURL_COOKIE.finditer(text, s, eol):
        quoted = text[m.start(1) - 1] in "\"'"
        end = m.end(1) if quoted else m.start(1) + len(m.group(1).split()[0])
        _cookie_pairs(text, m.start(1), end, out, first_only=False)


# ---- a long random token next to a word that names a secret: "the api key is 3kF9...", "token 8f2a..."

_ENTROPY_TOKEN = LazyPattern(r"(?<![A-Za-z0-9_+/=-])[A-Za-z0-9_+/=-]{20,256}(?![A-Za-z0-9_+/=-])")
#: how far after the word a token is looked for (characters, on the same line)
ENTROPY_WINDOW = 48
_PROSE_WORDS = frozenset({"key", "token", "secret", "password", "passwd", "passphrase", "credential", "apikey"})
_NOT_SECRET_KEY_PREV = frozenset({
    "primary", "foreign", "sort", "partition", "cache", "unique", "composite", "index", "public", "idempotency",
    "dedup", "lookup", "map", "dict", "hash", "row", "object", "hot", "ssh", "gpg", "pgp", "host", "license", "the"})
_VERSIONISH = LazyPattern(r"(?:[A-Za-z]+|[0-9]+)(?:[-_.](?:[A-Za-z]+|[0-9]+))*")
_UUID = LazyPattern(r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}")


def entropy(s: str) -> float:
    """Shannon entropy of ``s`` in bits per character."""
    n = len(s)
    counts: dict[str, int] = {}
    for ch in s:
        counts[ch] = counts.get(ch, 0) + 1
    return -sum(c / n * math.log2(c / n) for c in counts.values())


def _high_entropy(tok: str) -> bool:
    """A random-looking token: 20+ characters mixing letters and digits, not a name, version, path or id."""
    if len(tok) < 20 or _REDACTED in tok or _fake(tok) or tok.count("/") >= 2 or _UUID.fullmatch(tok):
        return False
    up, lo, dig = _classes(tok)
    if not dig or not (up or lo) or _VERSIONISH.fullmatch(tok):
        return False
    if _HEX.fullmatch(tok):
        return len(tok) >= 32 and entropy(tok) >= 3.0
    return (up and lo or len(tok) >= 24) and entropy(tok) >= 3.5


def _at_prose(text: str, name_start: int, kw_end: int, after: int, out: Out) -> None:
    """A secret-naming word followed by a space: ``password is X``, or a random token just after it."""
    password = text[kw_end - 1] in "dD"  # password, passwd, pwd (the anchors that end in d)
    token = None if password else _long_word(text, after)
    if token is None and not password:
        return  # the fast path: no word of 20+ characters in the window
    words = [w.lower() for w in _WORD.findall(text[name_start:kw_end])]
    if not words or words[-1] not in _PROSE_WORDS:
        return
    if len(words) == 1:  # the previous word in prose: "primary key", "next page token"
        j = name_start
        while j > 0 and text[j - 1] in " \t":
            j -= 1
        prev = _WORD.findall(text, max(0, j - 24, text.rfind("\x00", 0, j) + 1), j)  # not across strings
        words.insert(0, prev[-1].lower() if prev else "")
    last, prev = words[-1], words[-2]
    if (last == "key" and prev in _NOT_SECRET_KEY_PREV) or (last == "token" and prev in _NOT_SECRET_TOKENS):
        return
    if password:
        v = _PROSE_VALUE.match(text, after)
        if v is not None:
            g = v.lastindex or 0
            value = v.group(g).rstrip(".:,;!?*_)") if g == 3 else v.group(g)
            kind = _assigned_kind("password", value, bare=g == 3)
            up, lo, dig = _classes(value)
            if kind is not None and dig and (up or lo):  # prose: "password manager**" is not one
                out.append((v.start(g), v.start(g) + len(value), kind, 1))
                return
        token = _long_word(text, after)
    if token is not None:
        out.append((token[0], token[1], "high-entropy-token", 1))


def _long_word(text: str, after: int) -> tuple[int, int] | None:
    """The first random-looking token starting within ``ENTROPY_WINDOW`` characters after ``after`` (same line)."""
    seg = text[after:after + ENTROPY_WINDOW + 256]
    for stop in ("\n", "\x00"):
        cut = seg.find(stop)
        if cut >= 0:
            seg = seg[:cut]
    pos = 0
    for w in seg.split():
        i = seg.find(w, pos)
        pos = i + len(w)
        if i > ENTROPY_WINDOW:
            return None
        if len(w) < 20:
            continue
        for m in _ENTROPY_TOKEN.finditer(seg, i, pos):
            tok = m.group() if m.group().endswith("==") else m.group().rstrip("=-")
            if _high_entropy(tok):
                return after + m.start(), after + m.start() + len(tok)
    return None


_PROSE_VALUE = LazyPattern(r"(?:(?:is|was)[ \t]+|[=:][ \t]*)?(?:\"([^\"\\\r\n\x00]{1,256})\"|'([^'\\\r\n\x00]{1,256})'|"
                          r"([^\s\"'`,;(){}\[\]<>\\|&\x00]{1,256}))")


def _at_long_flag(text: str, s: int, kw_end: int, after: int, out: Out) -> None:
    """``--password X``, ``--client-secret X``, ``--token X``: a secret-naming long flag and its next argument."""
    fam = _name_family(text[s + 2:kw_end])
    m = _ARG.match(text, after)
    if not fam or m is None:
        return
    g = m.lastindex or 0
    kind = _assigned_kind(fam, m.group(g), bare=g == 3)
    if kind is not None:
        out.append((m.start(g), m.end(g), "cli-password" if kind == "password-assignment" else kind, 1))


# ----------------------------------------------------------------------------- the anchor scan
#
# One regex finds every place a shape could start; the shape is then matched precisely
# there (``_dispatch``). Speed matters (ingest scans every message), and ``re`` is fast
# here only when a pattern starts with a literal character: it then tests just the
# positions holding one of the first characters of the alternatives. So each
# alternative starts with a character that is rare in text, and checks what comes
# before it with a lookbehind (``J(?<=eyJ)`` finds ``eyJ`` by its ``J``); alternatives
# are grouped by that first character (one test per position), the most frequent
# characters first, and literals come before lookbehinds (they fail faster).

_SEP = r"(?:\\?[\"']\]?|\*\*)?[ \t]*(?:=>|:=|=|:)"  # after a name: a closing quote (and ]) or ** (markdown), then = : => :=
_SEP_WS = "(?:" + _SEP + r"|[ \t]+)"  # ... or a space: --password X, "password is X"
#: ... or a space before a 20+ character word within the window: "token 8f2a...", --api-key X (C-level prefilter)
_SEP_LONG = "(?:" + _SEP + r"|[ \t]+(?=[^\n\x00]{0,48}?[A-Za-z0-9_+/=-]{20}))"
_ANCHOR = LazyPattern("|".join([
    r"c(?:ret(?<=[sS]ecret)" + _SEP_LONG + r"|url|_(?<=whsec_))",     # password-assignment, high-entropy; curl -u/-b; stripe
    r"_(?:(?<=hf_)|(?<=npm_))",                                 # huggingface-token, npm-token
    r"g(?:h[pousr]_|ithub_pat_|l(?:pat|dt|rt|ptt|cbt|oas|soat|ffct|imt|agent)-)",  # github-token, gitlab-token
    r":(?://|(?<=pass:))",                                      # url-password; openssl pass:X (cli-password)
    r"x(?:ox|app-)",                                            # slack-token
    r"ya29\.",                                                  # google-oauth
    r"w(?:ord(?<=assword)|d(?<=asswd)|d(?<=[pP]wd))" + _SEP_WS,   # password-assignment, cli-password (htpasswd)
    r"k(?:-(?<=sk-)|_(?:live|test)_|s\.slack\.com/(?<=hooks\.slack\.com/)|ie(?<=[Cc]ookie)|"  # keys, stripe, webhook, cookie
    r"ey" + _SEP_LONG + r"|en(?<=[tT]oken)" + _SEP_LONG + ")",         # password-assignment, high-entropy-token
    r"S(?<=PAS)S" + _SEP,                                       # password-assignment
    r"A(?:KIA|SIA|BIA|CCA|Iza)",                                # aws-access-key, google-api-key
    r"CRET(?<=SECRET)" + _SEP_LONG,                               # password-assignment
    r"BEGIN (?<=-----BEGIN )",                                  # private-key
    r"zation(?<=uthorization)",                                 # bearer-token, basic-auth
    r"G(?:OCSPX-|R1348941)",                                    # google-oauth, gitlab runner token
    r"W(?:ORD(?<=ASSWORD)|D(?<=ASSWD)|D(?<=PWD))" + _SEP_WS,   # password-assignment
    r"K(?:EN(?<=TOKEN)|ey|EY)" + _SEP_LONG,                       # password-assignment
    r"J(?<=eyJ)",                                               # jwt
    r"-(?<=[ \t]-)[pPawU]",                                     # cli-password: mysql -pX, sshpass -p X, redis-cli -a X
]))


def _at_c(text: str, m: re.Match[str], out: Out) -> None:
    """``curl``, stripe's ``whsec_`` (by its ``c_``), or the end of ``secret`` and its separator."""
    g = m.group()
    if g == "curl":
        _at_curl(text, m.start(), out)
    elif g == "c_":
        _at_stripe(text, m.start() - 4, out)
    else:
        _at_assign(text, m, out)


def _at_underscore(text: str, m: re.Match[str], out: Out) -> None:
    """``hf_`` or ``npm_``, by the character before the ``_``."""
    a = m.start()
    if text[a - 1] == "f":
        _at_hf(text, a - 2, out)
    else:
        _at_npm(text, a - 3, out)


def _at_colon(text: str, m: re.Match[str], out: Out) -> None:
    """``://`` (a URL) or openssl's ``pass:``."""
    if m.group() == "://":
        _at_url(text, m.start(), out)
    else:
        _at_pass_colon(text, m.start(), out)


def _at_k(text: str, m: re.Match[str], out: Out) -> None:
    """``Cookie``, ``sk-``, stripe's ``sk_``/``rk_``, a slack hook, or the end of ``key``/``token``."""
    a = m.start()
    second = m.group()[1]
    if second == "i":
        _at_cookie(text, a, out)
    elif second == "-":
        _at_sk(text, a - 1, out)
    elif second == "_":
        if text[a - 1:a] in ("s", "r"):
            _at_stripe(text, a - 1, out)
    elif second == "s":
        _at_slack_hook(text, a - 3, out)
    else:
        _at_assign(text, m, out)


def _at_w(text: str, m: re.Match[str], out: Out) -> None:
    """``htpasswd``, or the end of ``password``/``passwd``/``pwd`` and its separator."""
    a = m.start()
    if text.endswith("htpass", 0, a):
        _at_htpasswd(text, a + 2, out)
    else:
        _at_assign(text, m, out)


#: the shape to match, by the first character of the anchor (``_ANCHOR``); any other first
#: character (S, C, W, K) is the end of a name and its separator (``_at_assign``)
_BY_FIRST: dict[str, Callable[[str, re.Match[str], Out], None]] = {
    "c": _at_c,
    "_": _at_underscore,
    "g": lambda text, m, out: _at_g(text, m.start(), out),
    ":": _at_colon,
    "-": lambda text, m, out: _at_flag(text, m.start(), out),
    "x": lambda text, m, out: _at_x(text, m.start(), out),
    "y": lambda text, m, out: _at_ya29(text, m.start(), out),
    "k": _at_k,
    "w": _at_w,
    "A": lambda text, m, out: _at_a(text, m.start(), out),
    "B": lambda text, m, out: _at_pem(text, m.start() - 5, out),
    "z": lambda text, m, out: _at_auth(text, m.start() - 6, out),
    "G": lambda text, m, out: _at_g_upper(text, m.start(), out),
    "J": lambda text, m, out: _at_jwt(text, m.start() - 2, out),
}


def _dispatch(text: str, m: re.Match[str], out: Out) -> None:
    """Match the shape the anchor ``m`` announces."""
    _BY_FIRST.get(m.group()[0], _at_assign)(text, m, out)


#: rounds of ``find`` + replace at most (a replacement can uncover a shape that a boundary hid)
_ROUNDS = 4


#: characters no one sees: a token split by one of them is still the token
_INVISIBLE = LazyPattern("[\u00ad\u180e\u200b-\u200f\u2060-\u2064\ufeff]+")
_INVISIBLE_ONE = LazyPattern("[\u00ad\u180e\u200b-\u200f\u2060-\u2064\ufeff]")  # search: faster without the +
_RUN = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_+/=.-")
#: a line break between two token characters, after at least 8 of them or before at least 8 (C-level prefilter)
_T = "[A-Za-z0-9_+/=-]"
_WRAP = LazyPattern(r"\n(?:(?<=" + _T + r"{8}\n)|(?<=" + _T + r"{8}\r\n)|(?<=" + _T + r"{2}\n)(?=" + _T + r"{8})|"
                   r"(?<=" + _T + r"{2}\r\n)(?=" + _T + r"{8}))(?=" + _T + ")")  # starts with a literal: fast
#: a wrapped line is at least this long (a terminal's width), and the token across the break this long
WRAP_MIN_LINE = 30
WRAP_MIN_TOKEN = 16


#: kinds a token's own shape proves (a prefix, a structure): the only ones accepted across a line break
_SHAPE_KINDS = frozenset({"private-key", "anthropic-key", "openai-key", "aws-access-key", "github-token", "gitlab-token",
                          "slack-token", "slack-webhook", "google-api-key", "google-oauth", "stripe-key",
                          "huggingface-token", "npm-token", "jwt"})


def _cuts(text: str) -> list[tuple[int, int, bool]]:
    """Spans to read through: invisible characters, and line breaks a terminal put inside a token (True)."""
    cuts: list[tuple[int, int, bool]] = []
    if not text.isascii() and _INVISIBLE_ONE.search(text) is not None:
        cuts = [(*m.span(), False) for m in _INVISIBLE.finditer(text)]
    if "\n" in text:
        for m in _WRAP.finditer(text):
            a, b = m.span()
            if text[a - 1] == "\r":
                a -= 1
            line = a - (text.rfind("\n", 0, a) + 1)
            if line < WRAP_MIN_LINE:
                continue
            left, right = a, b
            while left > 0 and a - left < 256 and text[left - 1] in _RUN:
                left -= 1
            while right < len(text) and right - b < 256 and text[right] in _RUN:
                right += 1
            if (a - left) + (right - b) >= WRAP_MIN_TOKEN:
                cuts.append((a, b, True))
        cuts.sort()
    return cuts


def find(text: str) -> list[Hit]:
    """The secrets in ``text``: ``(start, end, kind)`` of each part to replace, in order, not overlapping.

    Where shapes overlap, a token shape (a key with a known prefix, a PEM block) wins over
    one found by its context (an assignment, a header, a URL), then the earlier, then the longer.
    Invisible characters (zero-width spaces, soft hyphens) and line breaks a terminal wrapped
    into a long token are read through: the text is also scanned as if they were not there,
    and a secret they split is replaced whole, with them (across a line break, only a shape
    that proves itself: a known prefix or structure, ``_SHAPE_KINDS``).
    """
    hits = _find(text)
    cuts = _cuts(text)
    if not cuts:
        return hits
    view, at = _view(text, cuts)
    found: list[Hit] = []
    for vs, ve, kind in _find(view):
        s, e = at(vs), at(ve - 1) + 1
        inside = [wrap for a, b, wrap in cuts if s < a and b <= e]
        if inside and (kind in _SHAPE_KINDS or not any(inside)):
            found.append((s, e, kind))
    if not found:
        return hits
    kept = [h for h in hits if not any(h[0] < e and s < h[1] for s, e, _ in found)]
    return sorted(kept + found)


def _view(text: str, cuts: list[tuple[int, int, bool]]) -> tuple[str, Callable[[int], int]]:
    """``text`` without the cut spans, and the map from a position in it to one in ``text``."""
    parts: list[str] = []
    starts: list[int] = []  # view offset of each kept piece
    origins: list[int] = []  # its offset in text
    pos = vpos = 0
    for a, b, _ in cuts:
        if a < pos:
            continue
        parts.append(text[pos:a])
        starts.append(vpos)
        origins.append(pos)
        vpos += a - pos
        pos = b
    parts.append(text[pos:])
    starts.append(vpos)
    origins.append(pos)

    def at(v: int) -> int:
        i = bisect_right(starts, v) - 1
        return origins[i] + v - starts[i]

    return "".join(parts), at


def _find(text: str) -> list[Hit]:
    out: Out = []
    for m in _ANCHOR.finditer(text):
        _dispatch(text, m, out)
    if not out:
        return []
    out.sort(key=lambda h: (h[3], h[0], h[0] - h[1]))
    # placeholders already in the text are never (part of) a secret: redacting stays idempotent
    starts: list[int] = []
    taken: list[Hit] = []
    if _REDACTED in text:
        for m in _PLACEHOLDER.finditer(text):
            starts.append(m.start())
            taken.append((m.start(), m.end(), ""))
    for s, e, kind, _ in out:
        i = bisect_right(starts, s)
        if (i > 0 and taken[i - 1][1] > s) or (i < len(starts) and starts[i] < e) or "\x00" in text[s:e]:
            continue  # overlaps a hit already taken (or spans two strings of a batch)
        starts.insert(i, s)
        taken.insert(i, (s, e, kind))
    return [h for h in taken if h[2]]



def suspects(strings: Sequence[str]) -> set[int]:
    """The indexes of ``strings`` that may hold a secret: ``find`` of every other one is empty.

    A prefilter of many strings in one C-level scan of their ``\\x00``-joined text: a string is
    a suspect where the anchor of every shape (``_ANCHOR``) matches, or where it holds an
    invisible character or a line break ``_cuts`` could read through (``_WRAP``). Nothing those
    patterns match or look around at is a ``\\x00``, so each match lies in one string, and a
    string where one matches alone has a match in the joined text (or an overlapping one, in
    that string): without any, ``find`` finds no anchor in it, nor in its view.
    """
    if not strings:
        return set()
    joined = "\x00".join(strings)
    marks = [m.start() for m in _ANCHOR.finditer(joined)]
    if not joined.isascii():
        marks += [m.start() for m in _INVISIBLE_ONE.finditer(joined)]
    if "\n" in joined:
        marks += [m.start() for m in _WRAP.finditer(joined)]
    if not marks:
        return set()
    starts: list[int] = []
    pos = 0
    for text in strings:
        starts.append(pos)
        pos += len(text) + 1
    return {bisect_right(starts, p) - 1 for p in marks}

_PLACEHOLDER = LazyPattern(r"\[REDACTED:(?:" + "|".join(KINDS) + r")\]")


def _apply(text: str, hits: list[Hit]) -> str:
    parts = []
    pos = 0
    for s, e, kind in hits:
        parts.append(text[pos:s])
        parts.append(PLACEHOLDER.format(kind))
        pos = e
    parts.append(text[pos:])
    return "".join(parts)


def redact(text: str) -> tuple[str, list[str]]:
    """``text`` with every secret replaced by ``[REDACTED:<kind>]``, and the kinds replaced (one per secret).

    Text without secrets comes back unchanged (the same object).
    """
    kinds: list[str] = []
    for _ in range(_ROUNDS):
        hits = find(text)
        if not hits:
            break
        text = _apply(text, hits)
        kinds.extend(k for _, _, k in hits)
    return text, kinds


def redact_value(obj: Any) -> tuple[Any, list[str]]:
    """``redact`` for decoded JSON: every string in ``obj`` (dict values, list items, nested), keys kept.

    A string under a key whose name says it is a secret (``{"password": "hunter2"}``,
    ``{"Authorization": "Bearer ..."}``) is checked as an assignment to that name.
    Containers with nothing to redact are returned as they are (not copied).
    """
    ((value, kinds),) = redact_values([obj])
    return value, kinds


def redact_values(values: Sequence[Any]) -> list[tuple[Any, list[str]]]:
    """``redact_value`` for many values at once: all their strings are scanned together (fast)."""
    strings: list[str] = []
    keyed: dict[int, str] = {}  # string index -> the key it sits under (dict values only)
    bounds: list[int] = []  # index of each value's first string
    for v in values:
        bounds.append(len(strings))
        _collect(v, strings, keyed)
    found = _scan_strings(strings, keyed)
    touched = {bisect_right(bounds, i) - 1 for i in found}
    result: list[tuple[Any, list[str]]] = []
    for n, v in enumerate(values):
        if n not in touched:
            result.append((v, []))
            continue
        kinds: list[str] = []
        result.append((_rebuild(v, found, bounds[n], kinds), kinds))
    return result


def _collect(v: Any, strings: list[str], keyed: dict[int, str], depth: int = 0) -> None:
    """Append every string in ``v`` to ``strings`` (depth first, dicts in order); see ``_rebuild``.

    ``keyed`` gets the index of each string that is a dict value under a key naming a
    secret (``password``, ``apiKey``, ``Authorization``...). Written for speed (scalars
    are skipped without a call); below ``_DEEP`` levels it goes on iteratively, so any
    depth the JSON parser accepts is fine.
    """
    if isinstance(v, str):
        strings.append(v)
    elif depth > _DEEP:
        _collect_deep(v, strings, keyed)
    elif isinstance(v, dict):
        for k, x in v.items():
            if isinstance(x, str):
                secretish = _key_cache.get(k) if type(k) is str else False
                if secretish is None:
                    secretish = _secret_key(k)
                if secretish:
                    keyed[len(strings)] = k
                strings.append(x)
            elif isinstance(x, dict | list | tuple):
                _collect(x, strings, keyed, depth + 1)
    elif isinstance(v, list | tuple):
        for x in v:
            if isinstance(x, str):
                strings.append(x)
            elif isinstance(x, dict | list | tuple):
                _collect(x, strings, keyed, depth + 1)



def collect_strings(value: Any, strings: list[str]) -> bool:
    """Append every string ``redact_value`` would scan in ``value`` to ``strings``; True if one of them sits
    under a key naming a secret (``_keyed`` judges those whatever their shape)."""
    keyed: dict[int, str] = {}
    _collect(value, strings, keyed)
    return bool(keyed)

_DEEP = 64


def _collect_deep(v: Any, strings: list[str], keyed: dict[int, str]) -> None:
    """``_collect`` without recursion."""
    if not isinstance(v, dict | list | tuple):
        return
    stack: list[Iterator[Any]] = [iter(v.items()) if isinstance(v, dict) else zip(repeat(None), v)]
    while stack:
        for k, x in stack[-1]:
            if isinstance(x, str):
                if k is not None and type(k) is str and (_key_cache.get(k) or _secret_key(k)):
                    keyed[len(strings)] = k
                strings.append(x)
            elif isinstance(x, dict):
                stack.append(iter(x.items()))
                break
            elif isinstance(x, list | tuple):
                stack.append(zip(repeat(None), x))
                break
        else:
            stack.pop()


_key_cache: dict[str, bool] = {}


def _secret_key(k: str) -> bool:
    got = bool(_name_family(k)) or k.endswith(_AUTH_KEYS)
    if len(_key_cache) < 4096:
        _key_cache[k] = got
    return got


_AUTH_KEYS = ("uthorization", "UTHORIZATION")


def _scan_strings(strings: list[str], keyed: dict[int, str]) -> dict[int, tuple[str, list[str]]]:
    """{string index: (redacted string, kinds)} for the strings that hold secrets."""
    found: dict[int, tuple[str, list[str]]] = {}
    if not strings:
        return found
    joined = "\x00".join(strings)
    hits = find(joined)
    if hits:
        starts: list[int] = []
        pos = 0
        for text in strings:
            starts.append(pos)
            pos += len(text) + 1
        per: dict[int, list[Hit]] = {}
        for s, e, kind in hits:
            i = bisect_right(starts, s) - 1
            per.setdefault(i, []).append((s - starts[i], e - starts[i], kind))
        for i, hs in per.items():
            more, kinds = redact(_apply(strings[i], hs))  # further rounds, as in redact()
            found[i] = (more, [k for _, _, k in hs] + kinds)
    for i, key in keyed.items():
        if i not in found:
            got = _keyed(key, strings[i])
            if got is not None:
                found[i] = got
    return found


_AUTH_VALUE = LazyPattern(r"[ \t]*((?:[Bb]earer|BEARER|[Tt]oken)[ \t]+)([A-Za-z0-9._~+/=-]{8,})[ \t]*$|"
                         r"[ \t]*((?:[Bb]asic|BASIC)[ \t]+)([A-Za-z0-9+/]{6,}={0,2})[ \t]*$")


def _keyed(key: str, v: str) -> tuple[str, list[str]] | None:
    """A dict value under a secret-naming key, redacted, or None: the whole value, or the credential after the scheme."""
    if key.endswith(_AUTH_KEYS):
        m = _AUTH_VALUE.match(v)
        if m is None:
            return None
        if m.group(2) is not None:
            return (m.group(1) + placeholder("bearer-token"), ["bearer-token"]) if _bearer_ok(m.group(2)) else None
        return (m.group(3) + placeholder("basic-auth"), ["basic-auth"]) if _basic_ok(m.group(4)) else None
    kind = _assigned_kind(_name_family(key), v, bare=False)
    return None if kind is None else (placeholder(kind), [kind])


def _rebuild(v: Any, found: dict[int, tuple[str, list[str]]], index: int, kinds: list[str]) -> Any:
    """``v`` with the strings in ``found`` replaced, ``index`` being its first string's.

    The walk of ``_collect`` (iterative too); containers are copied only where something changed.
    """
    if isinstance(v, str):
        got = found.get(index)
        if got is None:
            return v
        kinds.extend(got[1])
        return got[0]
    if not isinstance(v, dict | list | tuple):
        return v
    # a frame: [container, its items, (key, new value) pairs so far, changed?, key in the parent]
    stack: list[list[Any]] = [[v, iter(v.items()) if isinstance(v, dict) else zip(repeat(None), v), [], False, None]]
    while True:
        frame = stack[-1]
        for k, x in frame[1]:
            if isinstance(x, str):
                got = found.get(index)
                index += 1
                if got is not None:
                    kinds.extend(got[1])
                    x = got[0]
                    frame[3] = True
                frame[2].append((k, x))
            elif isinstance(x, dict | list | tuple):
                stack.append([x, iter(x.items()) if isinstance(x, dict) else zip(repeat(None), x), [], False, k])
                break
            else:
                frame[2].append((k, x))
        else:
            stack.pop()
            orig, _, pairs, changed, key = frame
            if not changed:
                new = orig
            elif isinstance(orig, dict):
                new = dict(pairs)
            else:
                new = [x for _, x in pairs]
                if isinstance(orig, tuple):
                    new = tuple(new)
            if not stack:
                return new
            stack[-1][2].append((key, new))
            if changed:
                stack[-1][3] = True


def kinds_summary(kinds: Iterable[str]) -> str:
    """``"2 openai-key, 1 url-password"`` (most frequent first)."""
    counts: dict[str, int] = {}
    for k in kinds:
        counts[k] = counts.get(k, 0) + 1
    return ", ".join(f"{n} {k}" for k, n in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])))
