"""A corpus of secrets in the shapes agents' transcripts hold, for the redaction tests (INVARIANTS I24).

Each ``Case`` is a line of text as it would appear in a prompt, a shell call, ``curl -v``
output, a config file or a note, with one secret in it; ``needles`` are the byte strings
a forensic search looks for (the secret, and its distinctive pieces: a tokenizer, a
line wrap or an invisible character may have cut it). The secrets are made from a
seeded generator: realistic shapes, never real credentials, never placeholders.
"""

from __future__ import annotations

import base64
import json
import random
from dataclasses import dataclass

_rng = random.Random(1924)
_ALNUM = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
_HEXDIGITS = "0123456789abcdef"


def _r(n: int, alphabet: str = _ALNUM) -> str:
    while True:
        s = "".join(_rng.choice(alphabet) for _ in range(n))
        if alphabet != _ALNUM or (any(c.isupper() for c in s) and any(c.islower() for c in s)
                                  and any(c.isdigit() for c in s)):
            return s


def _pw() -> str:
    """A 10-character password with upper, lower, digits and a symbol."""
    return _r(4) + _rng.choice("!#%+") + _r(5)


@dataclass(frozen=True)
class Case:
    """One secret in its context."""

    name: str
    text: str
    secret: str
    pieces: tuple[str, ...] = ()  # what must be gone besides the secret (the parts of a split token)

    @property
    def needles(self) -> list[bytes]:
        """Lower-cased byte strings none of which may remain anywhere (compare with lower-cased data)."""
        out = {self.secret.lower().encode()}
        for p in self.pieces:
            out.add(p.lower().encode())
        if len(self.secret) >= 20:  # a tokenizer may keep only a piece: the last 12, a middle 12
            s = self.secret.lower()
            out.add(s[-12:].encode())
            out.add(s[len(s) // 2 - 6:len(s) // 2 + 6].encode())
        return sorted(out)


def _split(token: str, sep: str) -> tuple[str, tuple[str, ...]]:
    half = len(token) // 2
    return token[:half] + sep + token[half:], (token[:half], token[half:])


def _jwt() -> str:
    def seg(obj: dict) -> str:
        return base64.urlsafe_b64encode(json.dumps(obj).encode()).rstrip(b"=").decode()
    return f"{seg({'alg': 'HS256', 'typ': 'JWT'})}.{seg({'sub': _r(8), 'iat': 1764000000})}.{_r(43)}"


def _pem() -> tuple[str, str]:
    body = "\n".join(_r(64, _ALNUM + "+/") for _ in range(8))
    return f"-----BEGIN RSA PRIVATE KEY-----\n{body}\n-----END RSA PRIVATE KEY-----", body.split("\n")[3]


def _cases() -> list[Case]:
    c: list[Case] = []

    def add(name: str, template: str, secret: str, pieces: tuple[str, ...] = ()) -> None:
        c.append(Case(name, template.format(s=secret), secret, pieces))

    # tokens with a known prefix
    add("openai-key", "OPENAI_API_KEY={s}", "sk-proj-" + _r(48))
    add("anthropic-key", "export ANTHROPIC_API_KEY={s}", "sk-ant-api03-" + _r(90))
    add("aws-access-key", "aws_access_key_id = {s}", "AKIA" + _r(16, "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567"))
    add("aws-secret-key", "aws_secret_access_key = {s}", _r(40))
    add("github-token in a note", "the CI token is {s}", "ghp_" + _r(36))
    add("github-pat", "GH_PAT: {s}", "github_pat_" + _r(22) + "_" + _r(59))
    add("gitlab-token", "git push https://oauth2:{s}@gitlab.com/acme/app.git", "glpat-" + _r(20))
    add("slack-token", "SLACK_BOT={s}", f"xoxb-{_r(11, '0123456789')}-{_r(12, '0123456789')}-{_r(24)}")
    add("slack-webhook", "curl -X POST https://hooks.slack.com/services/{s} -d '{{}}'",
        f"T{_r(8, 'ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789')}/B{_r(10, 'ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789')}/{_r(24)}")
    add("google-api-key", "maps key {s} in index.html", "AIza" + _r(35))
    add("google-oauth", "access_token ya29 token: {s}", "ya29." + _r(60))
    add("stripe-key", "stripe.api_key = '{s}'", "sk_live_" + _r(24))
    add("huggingface-token", "huggingface-cli login --token {s}", "hf_" + _r(34))
    add("npm-token", "//registry.npmjs.org/:_authToken={s}", "npm_" + _r(36))
    add("jwt", "Authorization header was {s} (expired?)", _jwt())
    pem, pem_line = _pem()
    add("private-key", "cat id_rsa\n{s}\n", pem, (pem_line,))
    # credentials found by their context
    add("bearer-token", "curl -H 'Authorization: Bearer {s}' https://api.corp.io/v1/me", _r(40))
    add("basic-auth", "> Authorization: Basic {s}", base64.b64encode(f"deploy:{_pw()}".encode()).decode())
    add("curl -u", "curl -u admin:{s} https://ci.corp.io/api/json", _pw())
    add("url-password", "DATABASE_URL=postgres://app:{s}@db:5432/app", _pw())
    add("password-assignment", 'DB_PASSWORD="{s}"', _pw())
    add("json client_secret", '{{"client_id": "web", "client_secret": "{s}"}}', _r(32))
    add("PGPASSWORD", "PGPASSWORD={s} psql -h db -U app", _pw())
    # passwords given as command arguments
    add("mysql -p", "mysql -uroot -p{s} -h db shop", _pw())
    add("mysqldump -p", "docker exec db mysqldump -u admin -p{s} shop > dump.sql", _pw())
    add("--password with a space", "./manage.py createsuperuser --username ops --password {s}", _pw())
    add("sshpass -p", "sshpass -p {s} ssh root@10.0.0.5 uptime", _pw())
    add("sshpass -p attached", "sshpass -p'{s}' scp a.tgz deploy@host:", _pw())
    add("redis-cli -a", "redis-cli -h cache.internal -a {s} ping", _pw())
    add("az login -p", "az login -u ops@corp.com -p {s}", _pw())
    add("docker login -p", "docker login -u bot -p {s} registry.corp.io", _pw())
    add("openssl pass:", "openssl pkcs12 -export -in c.pem -inkey k.pem -passout pass:{s} -out c.p12", _pw())
    add("openssl -passin", "openssl rsa -in key.pem -passin 'pass:{s}' -out plain.pem", _pw())
    add("htpasswd -b", "htpasswd -b /etc/nginx/.htpasswd admin {s}", _pw())
    add("htpasswd -nbB", "htpasswd -nbB alice {s} >> users", _pw())
    add("sqlcmd -P", "sqlcmd -S db.corp -U sa -P {s} -Q 'select 1'", _pw())
    add("ldapsearch -w", "ldapsearch -x -D cn=admin,dc=corp -w {s} -b dc=corp", _pw())
    add("smbclient -U user%pass", "smbclient //files/share -U alice%{s}", _pw())
    add("mongosh --password", "mongosh --username admin --password {s} mongodb://db:27017", _pw())
    # cookies
    add("Cookie header", "> Cookie: theme=dark; sessionid={s}; lang=en", _r(32))
    add("Set-Cookie header", "< Set-Cookie: session={s}; Path=/; HttpOnly; Secure", _r(40))
    add("curl -b", "curl -b 'auth_session={s}' https://app.corp.io/api/me", _r(32))
    add("curl --cookie", 'curl --cookie "sid={s}; theme=dark" https://app.corp.io/', _r(28))
    # tokens split by what a terminal or an editor puts in them
    tok = "ghp_" + _r(36)
    text, pieces = _split(tok, "\u200b")
    c.append(Case("zero-width space", f"token: {text}", tok, pieces))
    tok = "sk-proj-" + _r(48)
    text, pieces = _split(tok, "\u00ad")
    c.append(Case("soft hyphen", f"use {text} for the batch job", tok, pieces))
    tok = "xoxp-" + _r(12, "0123456789") + "-" + _r(12, "0123456789") + "-" + _r(32)
    line = "* Connected; sending slack message with header X-Slack-Token: " + tok
    wrapped = "\n".join(line[i:i + 80] for i in range(0, len(line), 80))
    cut = wrapped.split("\n")
    c.append(Case("terminal line wrap", wrapped, tok, tuple(p for p in (cut[0][-12:], cut[1][:12]) if p)))
    tok = "glpat-" + _r(24)
    line = "remote: HTTP Basic: Access denied for user deploy, token=" + tok + " expired"
    wrapped = "\n".join(line[i:i + 64] for i in range(0, len(line), 64))
    c.append(Case("line wrap of a token=value", wrapped, tok, (wrapped.split("\n")[1][:8],)))
    # secrets found by entropy next to a word that names them
    add("high-entropy api key", "Use this key for the staging API: {s}", _r(40))
    add("high-entropy token", "their webhook signing token {s} rotates monthly", _r(32))
    add("high-entropy secret (hex)", "secret is {s}", _r(40, _HEXDIGITS))
    add("password in prose", "and the prod password is {s}", _pw())
    return c


CORPUS: list[Case] = _cases()

#: the issue's own example: one note with a token and a password in prose
REMEMBER_NOTE = f"the CI token is {CORPUS[4].secret} and the prod password is {CORPUS[-1].secret}"


def leftovers(data: bytes, cases: list[Case] | None = None) -> list[tuple[str, bytes]]:
    """(case name, needle) for every needle of every case found in ``data`` (compared lower-cased)."""
    low = data.lower()
    return [(case.name, n) for case in (cases or CORPUS) for n in case.needles if n in low]
