"""Secret redaction at ingest (eventlog/ingest/secrets.py and its use in eventlog/ingest/__init__.py).

Every kind is detected in the context users paste it in; near misses (hashes, ids,
base64 data, placeholders, paths, plain URLs, code that merely names a password) are
left alone; redaction is total, idempotent and never touches secret-free text; ingest
stores only redacted text (log, session files, diary), records the kinds, and keeps
dedup independent of redaction. The real transcripts in ../shared/data/real are
checked too (read in place).
"""

from __future__ import annotations

import base64
import json
import os
import random
import shutil
import string

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import eventlog.cli.ingest_command  # noqa: F401  (registers `evlog ingest`)
from eventlog.app.workspace import Workspace, init_workspace
from eventlog.cli import cli
from eventlog.events import MessageAppended, MessageUpdated, SessionCreated, SessionUpdated
from eventlog.ingest import collect_files, ingest_paths, parse_file
from eventlog.ingest.model import compact_json
from eventlog.ingest.secrets import CATALOGUE, KINDS, find, placeholder, redact, redact_value, redact_values
from tests.conftest import real_data
from tests.secret_corpus import CORPUS, leftovers

ALNUM = string.ascii_letters + string.digits
B64 = ALNUM + "+/"
URLSAFE = ALNUM + "-_"
T0 = "2025-06-01T10:00:00.000Z"


def tok(n: int, alphabet: str = ALNUM, seed: int = 0) -> str:
    """A random-looking string (deterministic), like a real key body."""
    rng = random.Random(f"{seed}:{n}:{alphabet}")
    classes = [c for c in (string.digits, string.ascii_uppercase, string.ascii_lowercase) if set(c) & set(alphabet)]
    while True:  # with a character of each class the alphabet has, as real keys almost always do
        s = "".join(rng.choice(alphabet) for _ in range(n))
        if all(set(c) & set(s) for c in classes):
            return s


def b64_lines(nbytes: int, seed: int) -> str:
    raw = random.Random(seed).randbytes(nbytes)
    text = base64.b64encode(raw).decode()
    return "\n".join(text[i:i + 64] for i in range(0, len(text), 64))


def no_fragment_of(secret: str, text: str, n: int = 6) -> bool:
    """No ``n``-character substring of ``secret`` occurs in ``text``."""
    return not any(secret[i:i + n] in text for i in range(len(secret) - n + 1))


# ----------------------------------------------------------------------------- the secrets used below

OPENAI = "sk-proj-" + tok(48, URLSAFE, 1) + "T3BlbkFJ" + tok(48, URLSAFE, 2)
OPENAI_LEGACY = "sk-" + tok(48, ALNUM, 3)
DEEPSEEK = "sk-" + tok(32, "0123456789abcdef", 4)
ANTHROPIC = "sk-ant-api03-" + tok(93, URLSAFE, 5) + "AA"
AWS_ID = "AKIA" + tok(16, string.ascii_uppercase + "234567", 6)
AWS_SECRET = tok(40, B64, 7)
GITHUB = "ghp_" + tok(36, ALNUM, 8)
GITHUB_APP = "ghs_" + tok(36, ALNUM, 9)
GITHUB_PAT = "github_pat_" + tok(22, ALNUM, 10) + "_" + tok(59, ALNUM, 11)
GITLAB = "glpat-" + tok(20, URLSAFE, 12)
SLACK = "xoxb-" + tok(12, string.digits, 13) + "-" + tok(13, string.digits, 14) + "-" + tok(24, ALNUM, 15)
SLACK_HOOK_PATH = "T0" + tok(8, string.ascii_uppercase + string.digits, 16) + "/B0" + \
    tok(8, string.ascii_uppercase + string.digits, 17) + "/" + tok(24, ALNUM, 18)
GOOGLE = "AIza" + tok(35, URLSAFE, 19)
GOOGLE_OAUTH = "ya29." + tok(120, URLSAFE, 20)
GOOGLE_CLIENT = "GOCSPX-" + tok(28, URLSAFE, 21)
STRIPE = "sk_live_" + tok(99, ALNUM, 22)
STRIPE_WEBHOOK = "whsec_" + tok(32, ALNUM, 23)
HF = "hf_" + tok(34, string.ascii_letters, 24)
NPM = "npm_" + tok(36, ALNUM, 25)
JWT = ("eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9."
       + base64.urlsafe_b64encode(json.dumps({"sub": "u-1029", "exp": 1767225600, "scope": "admin"}).encode()).decode().rstrip("=")
       + "." + tok(43, URLSAFE, 26))
BEARER = tok(40, URLSAFE, 27)
BASIC_PW = "Zq8#pL2v!wM"
PEM_BODY = b64_lines(1190, 28)
PEM = f"-----BEGIN RSA PRIVATE KEY-----\n{PEM_BODY}\n-----END RSA PRIVATE KEY-----"
OPENSSH_BODY = b64_lines(400, 29)
OPENSSH = f"-----BEGIN OPENSSH PRIVATE KEY-----\n{OPENSSH_BODY}\n-----END OPENSSH PRIVATE KEY-----"
DB_PASSWORD = "hunter2"
DJANGO_SECRET = "django-insecure-" + tok(40, ALNUM + "!@#%^&*(-_=+)", 30)
API_KEY_HEX = tok(32, "0123456789abcdef", 31)

#: (case id, text as pasted, the kinds found in order, the secrets that must be gone)
CASES = [
    ("export-openai", f"$ export OPENAI_API_KEY={OPENAI}\n$ python app.py", ["openai-key"], [OPENAI]),
    ("openai-legacy-in-python", f'client = OpenAI(api_key="{OPENAI_LEGACY}")', ["openai-key"], [OPENAI_LEGACY]),
    ("deepseek-sk-hex", f"DEEPSEEK_API_KEY={DEEPSEEK} nanobot run", ["openai-key"], [DEEPSEEK]),
    ("anthropic-env", f"ANTHROPIC_API_KEY={ANTHROPIC}\nANTHROPIC_MODEL=claude-opus-4", ["anthropic-key"], [ANTHROPIC]),
    ("anthropic-x-api-key-header", f"curl https://api.anthropic.com/v1/messages -H 'x-api-key: {ANTHROPIC}'",
     ["anthropic-key"], [ANTHROPIC]),
    ("aws-configure", f"AWS Access Key ID [None]: {AWS_ID}\nAWS Secret Access Key [None]: {AWS_SECRET}\n"
                      "Default region name [None]: eu-west-1", ["aws-access-key", "aws-secret-key"], [AWS_ID, AWS_SECRET]),
    ("aws-credentials-file", f"[default]\naws_access_key_id = {AWS_ID}\naws_secret_access_key = {AWS_SECRET}\n",
     ["aws-access-key", "aws-secret-key"], [AWS_ID, AWS_SECRET]),
    ("aws-secret-alone-in-json", f'{{"AccessKeyId": "ASIA...", "SecretAccessKey": "{AWS_SECRET}"}}',
     ["aws-secret-key"], [AWS_SECRET]),
    ("github-token-env", f"GITHUB_TOKEN={GITHUB} gh pr list", ["github-token"], [GITHUB]),
    ("github-token-in-clone-url", f"git clone https://x-access-token:{GITHUB_APP}@github.com/acme/api.git",
     ["github-token"], [GITHUB_APP]),
    # the secret is what follows the public prefix github_pat_ ("github" is also in the placeholder's kind name)
    ("github-fine-grained", f"token: {GITHUB_PAT}", ["github-token"], [GITHUB_PAT[len("github_pat_"):]]),
    ("gitlab-remote", f"git remote set-url origin https://oauth2:{GITLAB}@gitlab.com/acme/api.git",
     ["gitlab-token"], [GITLAB]),
    ("slack-bot-token", f"SLACK_BOT_TOKEN={SLACK}", ["slack-token"], [SLACK]),
    ("slack-webhook", f"curl -X POST -d '{{\"text\":\"hi\"}}' https://hooks.slack.com/services/{SLACK_HOOK_PATH}",
     ["slack-webhook"], [SLACK_HOOK_PATH]),
    ("google-api-key-in-url", f"GET https://maps.googleapis.com/maps/api/geocode/json?address=Paris&key={GOOGLE}",
     ["google-api-key"], [GOOGLE]),
    ("google-oauth-token", f"access token: {GOOGLE_OAUTH}\nclient secret {GOOGLE_CLIENT}",
     ["google-oauth", "google-oauth"], [GOOGLE_OAUTH, GOOGLE_CLIENT]),
    ("stripe", f"stripe.api_key = '{STRIPE}'\nendpoint_secret = '{STRIPE_WEBHOOK}'", ["stripe-key", "stripe-key"],
     [STRIPE, STRIPE_WEBHOOK]),
    ("huggingface-login", f"huggingface-cli login --token {HF}", ["huggingface-token"], [HF]),
    ("npmrc", f"//registry.npmjs.org/:_authToken={NPM}", ["npm-token"], [NPM]),
    ("jwt-cookie", f"Cookie: session={JWT}; Path=/", ["jwt"], [JWT]),
    ("curl-bearer", f'curl -s https://api.example.com/v2/orders -H "Authorization: Bearer {BEARER}" | jq .',
     ["bearer-token"], [BEARER]),
    ("curl-basic-header", "curl -H 'Authorization: Basic " + base64.b64encode(f"deploy:{BASIC_PW}".encode()).decode()
     + "' https://ci.example.com", ["basic-auth"], [base64.b64encode(f"deploy:{BASIC_PW}".encode()).decode()]),
    ("curl-u", f"curl -u admin:{BASIC_PW} https://registry.example.com/v2/_catalog", ["basic-auth"], [BASIC_PW]),
    ("pem-rsa", f"Here is the key:\n{PEM}\nthanks", ["private-key"], [PEM_BODY.splitlines()[3]]),
    ("pem-openssh-cat", f"$ cat ~/.ssh/id_ed25519\n{OPENSSH}\n$ ", ["private-key"], [OPENSSH_BODY.splitlines()[1]]),
    ("pem-cut-off", "-----BEGIN PRIVATE KEY-----\n" + "\n".join(PEM_BODY.splitlines()[:6]) + "\n... (truncated)",
     ["private-key"], [PEM_BODY.splitlines()[4]]),
    ("mysql-dsn", "DATABASE_URL=mysql://root:hunter2@db:3306/x", ["url-password"], [DB_PASSWORD]),
    ("postgres-dsn-with-at", "psql postgresql://app:p@ss-W0rd@10.0.0.5:5432/app", ["url-password"], ["p@ss-W0rd"]),
    ("redis-password-only", "REDIS_URL=redis://:Xk29fLq0pz@cache:6379/0", ["url-password"], ["Xk29fLq0pz"]),
    ("env-db-password", "DB_HOST=db\nDB_PASSWORD=hunter2!\nDB_USER=app", ["password-assignment"], ["hunter2!"]),
    ("yaml-password", "database:\n  user: app\n  password: S3cure!pass\n", ["password-assignment"], ["S3cure!pass"]),
    ("python-kwarg", 'conn = psycopg.connect(host="db", password="Tr0ub4dor&3")', ["password-assignment"], ["Tr0ub4dor&3"]),
    ("json-api-key", f'{{"name": "prod", "api_key": "{API_KEY_HEX}"}}', ["password-assignment"], [API_KEY_HEX]),
    ("cli-flag", "mysqldump --user=root --password=Qw3rty!9 shop > shop.sql", ["password-assignment"], ["Qw3rty!9"]),
    ("django-secret-key", f"SECRET_KEY = '{DJANGO_SECRET}'", ["password-assignment"], [DJANGO_SECRET]),
    ("pgpassword", "PGPASSWORD=hunter22 psql -h db -U app", ["password-assignment"], ["hunter22"]),
    ("mysql-p", "mysql -uroot -pS3cr3t!x shop", ["cli-password"], ["S3cr3t!x"]),
    ("curl-v-set-cookie", "< Set-Cookie: sid=Q2x9vLm3Kp7rT1zY; Path=/; HttpOnly", ["cookie"], ["Q2x9vLm3Kp7rT1zY"]),
    ("key-in-prose", "the deploy key is 9fK2mQ7xLp3vR8tZ1wY4nB6c, keep it", ["high-entropy-token"],
     ["9fK2mQ7xLp3vR8tZ1wY4nB6c"]),
]


@pytest.mark.parametrize(("text", "kinds", "secrets"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_each_kind_is_redacted_in_the_context_it_is_pasted_in(text, kinds, secrets):
    out, found = redact(text)
    assert found == kinds
    for secret in secrets:
        assert secret not in out
        assert no_fragment_of(secret, out), out
    assert sum(out.count(placeholder(k)) for k in set(kinds)) == len(kinds)


def test_every_kind_of_the_catalogue_is_exercised():
    assert {k for c in CASES for k in c[2]} == set(KINDS)
    assert len(KINDS) == len(set(KINDS)) == len(CATALOGUE)


def test_placeholders_keep_the_context_and_nothing_of_the_secret():
    assert redact("mysql://root:hunter2@db:3306/x")[0] == "mysql://root:[REDACTED:url-password]@db:3306/x"
    assert redact(f'-H "Authorization: Bearer {BEARER}"')[0] == '-H "Authorization: Bearer [REDACTED:bearer-token]"'
    assert redact('password = "Tr0ub4dor&3"')[0] == 'password = "[REDACTED:password-assignment]"'
    assert redact(f"key={GOOGLE}&x=1")[0] == "key=[REDACTED:google-api-key]&x=1"
    assert redact(f"{PEM}\n")[0] == "[REDACTED:private-key]\n"


def test_a_token_shape_wins_over_the_assignment_or_header_around_it():
    assert redact(f"OPENAI_API_KEY={OPENAI}")[1] == ["openai-key"]
    assert redact(f"Authorization: Bearer {JWT}")[1] == ["jwt"]
    assert redact(f"https://user:{GITHUB}@github.com/a/b")[1] == ["github-token"]


def test_secrets_in_json_tool_arguments_and_nested_values():
    args = compact_json({"command": f'curl -H "Authorization: Bearer {BEARER}" https://x/api', "description": "call api"})
    call = {"id": "toolu_01", "type": "function", "function": {"name": "Bash", "arguments": args}}
    extra = {"toolUseResult": {"stdout": f"OPENAI_API_KEY={OPENAI}\n", "stderr": ""}, "uuid": "a-b", "n": 3,
             "env": {"DB_PASSWORD": "hunter2!", "Authorization": f"Bearer {BEARER}", "HOME": "/root"}}
    (new_call, new_extra), kinds = redact_value([call, extra])
    assert kinds == ["bearer-token", "openai-key", "password-assignment", "bearer-token"]
    dumped = json.dumps([new_call, new_extra])
    for secret in (BEARER, OPENAI, "hunter2!"):
        assert secret not in dumped
    assert json.loads(new_call["function"]["arguments"])["description"] == "call api"  # still valid JSON
    assert new_extra["env"] == {"DB_PASSWORD": "[REDACTED:password-assignment]",
                                "Authorization": "Bearer [REDACTED:bearer-token]", "HOME": "/root"}
    assert new_extra["uuid"] == "a-b" and new_extra["n"] == 3
    assert call["function"]["arguments"] == args  # the input is not changed in place


def test_values_without_secrets_come_back_as_the_same_objects():
    value = {"a": ["x", {"b": "y"}], "c": 1}
    out, kinds = redact_value(value)
    assert out is value and kinds == []
    text = "nothing to see"
    assert redact(text)[0] is text


# ----------------------------------------------------------------------------- near misses

PNG_B64 = base64.b64encode(b"\x89PNG\r\n\x1a\n" + random.Random(40).randbytes(150_000)).decode()
NEAR_MISSES = {
    "git-sha": "commit 9fceb02d0ae598e95dc970b74767f19372d61af8\nMerge: 1a2b3c4 5d6e7f8\n"
               "git checkout 0c7b1f7e3c0f9b6a6d1c2f4e5a6b7c8d9e0f1a2b",
    "uuids": '{"sessionId": "4d5611e5-241a-462a-8d15-5122611a9569", "uuid": "e95c1e9a-5084-4e69-bf3d-42c8d45f3985"}',
    "api-ids": "msg_01Qsxoxp6HspMve6iY4M8L2v toolu_01VpPeBD2ziigLLpybShAGoU req_011CY4p6wvSLjiJyWSJ2VXzB",
    "base64-image": f'{{"type": "image", "source": {{"type": "base64", "media_type": "image/png", "data": "{PNG_B64}"}}}}',
    "data-url": f"<img src=\"data:image/png;base64,{PNG_B64[:4000]}\">",
    "sk-in-prose": "We use sk-learn (scikit-learn) for the baseline; see task-id and disk-usage-monitoring-service-v2.",
    "placeholders": "export OPENAI_API_KEY=sk-...\nOPENAI_API_KEY=YOUR_API_KEY\napi_key = \"<your-key>\"\n"
                    "ANTHROPIC_API_KEY=sk-ant-xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx\nGITHUB_TOKEN=ghp_xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx\n"
                    "password=${DB_PASSWORD}\npassword: '****'\npassword=None\ntoken: $GITHUB_TOKEN\n"
                    "SLACK_BOT_TOKEN=xoxb-your-bot-token\nsecret: changeme\n\"password\": \"password\"\n"
                    "aws_access_key_id = AKIAIOSFODNN7EXAMPLE\naws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY\n",
    "templates": 'headers = {"Authorization": f"Bearer {token}"}\n-H "Authorization: Bearer $TOKEN"\n'
                 "Set the Authorization header to `Bearer <token>`.\ncurl -u \"$USER:$PASS\" https://x\n"
                 "postgresql://user:password@localhost/db\nredis://:${REDIS_PASSWORD}@cache:6379",
    "code-naming-secrets": "api_key: anthropic_api_key()\npassword: str\ntoken = os.environ['TOKEN']\n"
                           "self.password = password\nmax_tokens=4096\ntotal_tokens: 76365\n"
                           "params: { _csrf_token: csrfToken },\nprimary_key=True\nfor key, value in items:\n"
                           "next_page_token: \"abc123def456ghi789jkl\"\nbypass=abc123\nmonkey=banana123\n"
                           "private_key: PKCS7PrivateKeyTypes,\ndef login(user, password=None):\n"
                           "if password == \"\":\n\"password_min_length\": 12,",
    "paths": "ssh -i ~/.ssh/id_rsa deploy@host\nprivate_key_path = \"/etc/ssl/private/key.pem\"\n"
             "secret: /run/secrets/db_password\ncat /home/user/.aws/credentials\nC:\\Users\\me\\.ssh\\id_ed25519",
    "urls-without-passwords": "https://user@example.com/path\ngit@github.com:acme/api.git\nhttp://localhost:8080/api?x=1\n"
                              "ssh://git@host:22/repo.git\nhttps://[::1]:8443/health\nmailto:someone@example.com",
    "pem-public-and-placeholder": "-----BEGIN PUBLIC KEY-----\n" + b64_lines(300, 41) + "\n-----END PUBLIC KEY-----\n"
                                  "-----BEGIN PRIVATE KEY-----\n...\n-----END PRIVATE KEY-----\n"
                                  "if line.startswith('-----BEGIN RSA PRIVATE KEY-----'): kind = 'rsa'",
    "jwt-like-but-not": "eyJfoo.eyJbar.baz and version 1.2.3",
}


@pytest.mark.parametrize("text", list(NEAR_MISSES.values()), ids=list(NEAR_MISSES))
def test_near_misses_are_not_redacted(text):
    assert find(text) == []
    assert redact(text) == (text, [])


# ----------------------------------------------------------------------------- properties

FRAGMENTS = [
    "sk-", "sk-ant-api03-", "sk-proj-", "AKIA", "AIza", "ghp_", "github_pat_", "glpat-", "xoxb-", "hf_", "npm_", "ya29.",
    "GOCSPX-", "sk_live_", "whsec_", "eyJ", ".eyJ", "-----BEGIN RSA PRIVATE KEY-----", "-----END RSA PRIVATE KEY-----",
    "://", "@", ":", "=", "password", "PASSWORD", "passwd", "pwd", "secret", "token", "Token", "api_key", "apiKey", "KEY",
    "Authorization: Bearer ", "Authorization: Basic ", "curl -u ", "\n", " ", '"', "'", "\\n", '\\"', "[REDACTED:jwt]",
    "[REDACTED:", "]", "\x00", "hunter2!", "$VAR", "<", ">", "xxxx", "mysql://root:",
    tok(20), tok(36), tok(40, B64), tok(48), "0123456789abcdef" * 2, AWS_ID, OPENAI, JWT, GITHUB,
    # the command, cookie, prose and split shapes
    "mysql -p", " -p", " -a ", "sshpass -p ", "redis-cli -a ", "pass:", "htpasswd -b ", "htpasswd -nb ", " login -p ",
    "smbclient -U a%", "--password ", "--client-secret ", "Cookie: ", "Set-Cookie: ", "curl -b '", "; ", "sid=",
    "password is ", "key ", "api key: ", "token ", "primary key ", "\u200b", "\u00ad", "\r\n", "x" * 40, tok(30) + "\n",
]
texts = st.one_of(
    st.text(),
    st.lists(st.one_of(st.sampled_from(FRAGMENTS), st.text(max_size=6), st.text(alphabet=ALNUM + "_-+/=", max_size=50)),
             max_size=14).map("".join),
)


@settings(max_examples=400, deadline=None)
@given(texts)
def test_redact_never_raises_is_idempotent_and_leaves_secret_free_text_alone(text):
    out, kinds = redact(text)
    assert redact(out) == (out, [])
    if not kinds:
        assert out is text
    else:
        assert sum(out.count(placeholder(k)) for k in set(kinds)) - sum(text.count(placeholder(k)) for k in set(kinds)) \
            == len(kinds)
        assert all(k in KINDS for k in kinds)


@settings(max_examples=200, deadline=None)
@given(st.lists(texts, max_size=6))
def test_redacting_many_strings_at_once_equals_redacting_each(items):
    together = redact_values(items)
    assert [v for v, _ in together] == [redact(s)[0] for s in items]
    assert [k for _, k in together] == [redact(s)[1] for s in items]
    joined, kinds = redact_value(items)
    assert joined == [redact(s)[0] for s in items] and kinds == [k for s in items for k in redact(s)[1]]


@settings(max_examples=100, deadline=None)
@given(st.recursive(st.none() | st.booleans() | st.integers() | texts,
                    lambda kids: st.lists(kids, max_size=4) | st.dictionaries(st.sampled_from(
                        ["password", "api_key", "Authorization", "name", "content", "token", "x"]), kids, max_size=4),
                    max_leaves=12))
def test_redact_value_is_idempotent_on_nested_json(value):
    out, kinds = redact_value(value)
    again, more = redact_value(out)
    assert more == [] and again == out
    if not kinds:
        assert out is value


# ----------------------------------------------------------------------------- ingest


def cc_line(kind, uuid, parent, message, *, sid="s-1", ts=T0, **kw):
    return {"parentUuid": parent, "isSidechain": False, "type": kind, "message": message, "uuid": uuid, "timestamp": ts,
            "sessionId": sid, "cwd": "/home/u/proj", "version": "2.1.0", **kw}


def write_jsonl(path, records) -> str:
    os.makedirs(os.path.dirname(str(path)), exist_ok=True)
    with open(path, "w", encoding="utf-8") as f:
        for r in records:
            f.write(json.dumps(r, ensure_ascii=False) + "\n")
    return str(path)


def leaky_claude_session(path) -> str:
    """A Claude Code session where the user pastes keys and the agent reads a .env file."""
    curl = f'curl -s https://api.example.com/v2/orders -H "Authorization: Bearer {BEARER}"'
    return write_jsonl(path, [
        {"type": "summary", "summary": f"Debug orders API (DATABASE_URL=mysql://root:{DB_PASSWORD}@db:3306/x)", "leafUuid": "u4"},
        cc_line("user", "u1", None, {"role": "user", "content": f"my key is {OPENAI}, call the orders API with it"}),
        cc_line("assistant", "a1", "u1", {"id": "msg_1", "model": "claude-test", "role": "assistant", "content": [
            {"type": "thinking", "thinking": f"The user gave {OPENAI}; I should not echo it.", "signature": "x"},
            {"type": "text", "text": "Let me check the environment first."},
            {"type": "tool_use", "id": "toolu_1", "name": "Bash", "input": {"command": "cat .env"}}]}),
        cc_line("user", "u2", "a1", {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_1", "content":
                f"DATABASE_URL=mysql://root:{DB_PASSWORD}@db:3306/x\nAWS_ACCESS_KEY_ID={AWS_ID}\n"
                f"AWS_SECRET_ACCESS_KEY={AWS_SECRET}\n{PEM}\n"}]},
                toolUseResult={"stdout": f"AWS_SECRET_ACCESS_KEY={AWS_SECRET}", "stderr": ""}),
        cc_line("assistant", "a2", "u2", {"id": "msg_2", "model": "claude-test", "role": "assistant", "content": [
            {"type": "tool_use", "id": "toolu_2", "name": "Bash", "input": {"command": curl}}]}),
        cc_line("user", "u3", "a2", {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_2",
                                                                  "content": '{"orders": []}'}]}),
        cc_line("assistant", "u4", "u3", {"id": "msg_3", "model": "claude-test", "role": "assistant", "content": [
            {"type": "text", "text": "No orders yet. Rotate the key you pasted."}]}),
    ])


def leaky_catbuddy_session(path) -> str:
    return write_jsonl(path, [
        {"key": "desk:7", "title": f"deploy with {GITHUB}", "created_at": T0, "updated_at": T0,
         "metadata": {"repo": f"https://ci:{GITHUB_APP}@github.com/acme/api.git", "channel": "desk"}},
        {"id": "m1", "role": "user", "content": f"token is {SLACK}", "timestamp": T0,
         "attachments": [{"name": "creds.json", "text": json.dumps({"password": "hunter2!", "user": "app"})}]},
        {"id": "m2", "role": "assistant", "content": "Got it.", "timestamp": T0},
    ])


ALL_SECRETS = [OPENAI, BEARER, DB_PASSWORD, AWS_ID, AWS_SECRET, GITHUB, GITHUB_APP, SLACK, "hunter2!",
               *PEM_BODY.splitlines()]


def all_files_bytes(home) -> dict[str, bytes]:
    out = {}
    for root, _, names in os.walk(home):
        for name in names:
            with open(os.path.join(root, name), "rb") as f:
                out[os.path.relpath(os.path.join(root, name), home)] = f.read()
    return out


def read_events(home):
    ws = Workspace.open(home)
    try:
        return list(ws.log.read())
    finally:
        ws.close()


def test_cli_ingest_stores_no_secret_anywhere_and_records_what_it_redacted(cli_runner, workspace, tmp_path):
    claude = leaky_claude_session(tmp_path / "in" / "s-1.jsonl")
    catbuddy = leaky_catbuddy_session(tmp_path / "in" / "desk.jsonl")
    res = cli_runner.invoke(cli, ["ingest", claude, catbuddy])
    assert res.exit_code == 0, res.stderr
    assert "12 secret(s) redacted (" in res.stderr.splitlines()[-1]
    assert ", 8 secret(s) redacted" in res.stderr.splitlines()[0]  # the Claude file's line
    res = cli_runner.invoke(cli, ["run", "snapshot"])  # the diary
    assert res.exit_code == 0, res.stderr

    files = all_files_bytes(workspace)
    assert any(p.startswith("log") for p in files) and any(p.startswith("sessions") for p in files)
    assert any(p.startswith("diary") and p.endswith(".md") for p in files)
    for path, data in files.items():
        for secret in ALL_SECRETS:
            assert secret.encode() not in data, (path, secret[:12])
    diary = b"".join(d for p, d in files.items() if p.startswith("diary"))
    assert b"[REDACTED:openai-key]" in diary

    events = read_events(workspace)
    msgs = {e.message_id: e for e in events if isinstance(e, MessageAppended)}
    assert msgs["u1"].redacted == ["openai-key"] and "[REDACTED:openai-key]" in msgs["u1"].content
    assert msgs["a1"].redacted == ["openai-key"] and "[REDACTED:openai-key]" in msgs["a1"].extra["thinking"]
    assert msgs["u2"].redacted == ["url-password", "aws-access-key", "aws-secret-key", "private-key"]
    assert msgs["a2"].redacted == ["bearer-token"]
    assert json.loads(msgs["a2"].tool_calls[0]["function"]["arguments"])["command"].endswith("Bearer [REDACTED:bearer-token]\"")
    assert msgs["m1"].redacted == ["slack-token", "password-assignment"]
    assert msgs["u4"].redacted == [] and msgs["m2"].redacted == []
    created = {e.session_key: e for e in events if isinstance(e, SessionCreated)}
    assert created["desk:7"].title == "deploy with [REDACTED:github-token]"
    assert created["desk:7"].metadata["repo"] == "https://ci:[REDACTED:github-token]@github.com/acme/api.git"
    (title,) = [e for e in events if isinstance(e, SessionUpdated)]
    assert title.title == "Debug orders API (DATABASE_URL=mysql://root:[REDACTED:url-password]@db:3306/x)"


def test_ingest_reports_redactions_by_kind_per_file_and_in_json(cli_runner, workspace, tmp_path):
    path = leaky_catbuddy_session(tmp_path / "desk.jsonl")
    res = cli_runner.invoke(cli, ["ingest", "--json", path])
    assert res.exit_code == 0, res.stderr
    row = json.loads(res.stdout)
    assert row["redacted"] == {"github-token": 2, "slack-token": 1, "password-assignment": 1}
    again = cli_runner.invoke(cli, ["ingest", "--json", path])
    assert json.loads(again.stdout)["redacted"] == {}  # nothing new was appended, nothing redacted


def test_there_is_no_keep_secrets_opt_out_and_dedup_keys_come_from_the_source(cli_runner, workspace, tmp_path):
    claude = leaky_claude_session(tmp_path / "s-1.jsonl")
    res = cli_runner.invoke(cli, ["ingest", "--keep-secrets", claude])
    assert res.exit_code == 2 and "--keep-secrets" in res.stderr  # no such option: no path may skip the door
    assert read_events(workspace) == []
    res = cli_runner.invoke(cli, ["ingest", claude])
    assert res.exit_code == 0, res.stderr
    events = read_events(workspace)
    log_bytes = b"".join(d for p, d in all_files_bytes(workspace).items() if p.startswith("log"))
    assert OPENAI.encode() not in log_bytes and BEARER.encode() not in log_bytes
    # dedup keys name the source (session key, message id), never the (redacted or not) text
    assert all(e.dedup.startswith("ingest:") and "REDACTED" not in e.dedup for e in events)
    with pytest.raises(TypeError):
        ingest_paths(None, [claude], keep_secrets=True)  # type: ignore[call-arg]


def test_ingesting_redacted_data_again_appends_nothing(home_ws, tmp_path):
    claude = leaky_claude_session(tmp_path / "s-1.jsonl")
    first = run_ingest(home_ws, claude)
    # user prompt and thinking (openai-key), .env in a tool result (url-password, aws x2, private-key), the curl
    # call (bearer-token), the summary title (url-password); toolUseResult is not kept by the Claude parser
    assert first.secrets == 8 and first.redacted == {"aws-access-key": 1, "aws-secret-key": 1, "bearer-token": 1,
                                                      "openai-key": 2, "private-key": 1, "url-password": 2}
    n = len(read_events(home_ws))
    again = run_ingest(home_ws, claude)  # the same transcript
    assert (again.events, again.secrets, again.duplicates) == (0, 0, first.messages)
    sessions = [os.path.join(home_ws, "sessions", f) for f in os.listdir(os.path.join(home_ws, "sessions"))]
    handed_back = []  # evlog's own (redacted) session files, as a harness would hand them back (copies: the
    for i, path in enumerate(sessions):  # workspace's own files are refused, issue 19)
        handed_back.append(str(tmp_path / f"back-{i}.jsonl"))
        shutil.copy(path, handed_back[-1])
    projected = run_ingest(home_ws, *handed_back)
    assert projected.ok and (projected.events, projected.secrets) == (0, 0)
    assert len(read_events(home_ws)) == n
    for path in sessions:
        with open(path, encoding="utf-8") as f:
            text = f.read()
        assert "[REDACTED:" in text and redact(text) == (text, [])


def test_a_grown_response_is_updated_with_its_secrets_redacted(home_ws, tmp_path):
    lines = [cc_line("user", "u1", None, {"role": "user", "content": "show the token"}),
             cc_line("assistant", "a1", "u1", {"id": "msg_1", "model": "m", "role": "assistant",
                                               "content": [{"type": "text", "text": "Here:"}]})]
    path = write_jsonl(tmp_path / "s-1.jsonl", lines)
    run_ingest(home_ws, path)
    lines.append(cc_line("assistant", "a1b", "a1", {"id": "msg_1", "model": "m", "role": "assistant",
                                                    "content": [{"type": "text", "text": f"GITHUB_TOKEN={GITHUB}"}]}))
    path = write_jsonl(tmp_path / "s-1.jsonl", lines)
    report = run_ingest(home_ws, path)
    (upd,) = [e for e in read_events(home_ws) if isinstance(e, MessageUpdated)]
    assert upd.redacted == ["github-token"] and GITHUB not in upd.content and report.redacted == {"github-token": 1}


def test_values_nested_as_deep_as_the_parser_accepts_are_redacted(home_ws, tmp_path):
    deep = [OPENAI, {"password": "hunter2!"}]
    for _ in range(900):
        deep = [deep]
    path = write_jsonl(tmp_path / "deep.jsonl", [{"key": "desk:9", "title": "t", "created_at": T0},
                                                 {"id": "m1", "role": "user", "content": "see attachment", "deep": deep}])
    report = run_ingest(home_ws, path)
    assert report.ok and report.redacted == {"openai-key": 1, "password-assignment": 1}
    (m1,) = [e for e in read_events(home_ws) if isinstance(e, MessageAppended)]
    inner = m1.extra["deep"]
    for _ in range(900):
        (inner,) = inner
    assert inner == ["[REDACTED:openai-key]", {"password": "[REDACTED:password-assignment]"}]


@pytest.fixture
def home_ws(tmp_path):
    h = str(tmp_path / "ws")
    init_workspace(h)
    return h


def run_ingest(home, *paths, **kw):
    ws = Workspace.open(home, writable=True)
    try:
        return ingest_paths(ws.log, [str(p) for p in paths], **kw)
    finally:
        ws.close()


# ----------------------------------------------------------------------------- real transcripts (read in place)

REAL_TRANSCRIPTS = [("claude-spotter",), ("claude-code-viewer",), ("claude-kfischer-branching", "-Users-user-project"),
                    ("nanobot-sessions",), ("agent-history-real-sessions",)]


def test_the_real_transcripts_hold_no_secret_and_redaction_changes_none_of_them(tmp_path):
    """False positives on real data: none.

    Measured on the 45 real transcript files (1060 messages, 1.4 MB of text that ingest
    keeps): no shape matches. What comes closest and is rightly left alone: Claude
    ``msg_``/``toolu_``/``req_`` ids (one contains ``xoxp``), an Elixir
    ``api_key: anthropic_api_key()`` call and ``System.get_env("ANTHROPIC_API_KEY")``,
    ``_csrf_token: csrfToken``, ``max_tokens: 200``/``total_tokens: 76365``,
    ``x-api-key header is required`` in an error message, 119 URLs (none with a
    password), ``task-id`` (``sk-`` inside a word), git SHAs and uuids. The upstream
    authors had sanitised them (see ../shared/data/real/README.md); there are no true
    secrets to find either, so the pinned count is 0 found, 0 missed.
    """
    paths = [real_data(*p) for p in REAL_TRANSCRIPTS]
    home = str(tmp_path / "ws")
    init_workspace(home)
    report = run_ingest(home, *paths)
    assert report.ok and len(report.files) == 45 and report.messages == 1060
    assert report.redacted == {}  # pinned: see the docstring
    assert not any(getattr(e, "redacted", []) for e in read_events(home))  # nor did the log's door
    # the same check straight on every string ingest keeps, without the log in between
    values = [[m.content, m.tool_calls, m.extra, s.title, s.metadata] for f in collect_files(paths)
              for s in parse_file(f).sessions for m in s.messages]
    assert [k for _, k in redact_values(values) if k] == []


def test_locomo_conversations_hold_only_three_real_tokens():
    """LoCoMo (CC BY-NC, evaluation only, read in place): ~5.9k turns of everyday chat.

    Not a transcript format (not ingested), but the largest body of real chat text we
    have. Three matches, all correct: ``img_url`` values of shared images are DeviantArt
    CDN links ending in ``?token=eyJ0eXAiOiJKV1Qi...``, real HS256-signed JWTs that
    grant access to the image. Nothing else in the chat text matches.
    """
    with open(real_data("locomo", "locomo10.json"), encoding="utf-8") as f:
        data = json.load(f)
    _, kinds = redact_value(data)
    assert kinds == ["jwt", "jwt", "jwt"]


def test_secrets_planted_in_a_real_transcript_are_the_only_redactions(tmp_path):
    """A real Claude Code file (copied to tmp, never into the repo) with two secrets pasted into it."""
    src = real_data("claude-spotter", "tool_heavy.jsonl")
    with open(src, encoding="utf-8") as f:
        lines = [json.loads(line) for line in f]
    first_user = next(r for r in lines if r.get("type") == "user" and isinstance(r["message"]["content"], str))
    first_user["message"]["content"] += f"\n\nexport ANTHROPIC_API_KEY={ANTHROPIC}"
    result = next(r for r in lines if r.get("type") == "user" and isinstance(r["message"]["content"], list)
                  and r["message"]["content"][0].get("type") == "tool_result")
    block = result["message"]["content"][0]
    block["content"] = (block["content"] if isinstance(block["content"], str) else "") + \
        "\nDATABASE_URL=postgres://app:Xk29fLq0pz@db/app"
    path = write_jsonl(tmp_path / "tool_heavy.jsonl", lines)
    home = str(tmp_path / "ws")
    init_workspace(home)
    report = run_ingest(home, path)
    assert report.redacted == {"anthropic-key": 1, "url-password": 1}
    events = read_events(home)
    assert sum(len(e.redacted) for e in events if isinstance(e, MessageAppended)) == 2
    assert not any(ANTHROPIC in e.content or "Xk29fLq0pz" in e.content for e in events if isinstance(e, MessageAppended))


# ----------------------------------------------------------------------------- the corpus of shapes (I24)


@pytest.mark.parametrize("case", CORPUS, ids=[c.name for c in CORPUS])
def test_every_shape_of_the_corpus_is_redacted_and_nothing_of_it_is_left(case):
    text, kinds = redact(case.text)
    assert kinds, f"nothing found in {case.text!r}"
    assert leftovers(text.encode(), [case]) == []
    assert redact(text) == (text, [])  # idempotent


def test_the_corpus_has_more_than_forty_shapes():
    assert len(CORPUS) >= 40 and len({c.name for c in CORPUS}) == len(CORPUS)


@pytest.mark.parametrize("text", [
    "mkdir -p build && cp -a src build/",
    "ssh -p 2222 deploy@host",
    "mysql -p shop < dump.sql",  # -p alone prompts for the password; shop is the database
    "redis-cli -a $REDIS_PASSWORD ping",
    "openssl enc -aes-256-cbc -pass env:KEY -in a -out b",
    "openssl req -passout file:pw.txt",
    "htpasswd -c /etc/nginx/.htpasswd admin",
    "Cookie: theme=dark; lang=en",
    "Set-Cookie: seen=1; Path=/",
    "curl -b cookies.txt https://example.org/",
    "the password is stored in the vault",
    "the key is to keep it simple",
    "max tokens 4096 per request",
    "primary key d2f1c6f0c1a74e0a9b8b1f7c9d6e5a4b3c2d1e0f?",
    "commit 3f2a9c1d7e6b5a4f3e2d1c0b9a8f7e6d5c4b3a2f fixes the token refresh",
    "docker login -u bot --password-stdin registry.corp.io",
    "sshpass -f ~/.pw ssh host",
    "2. **Use a password manager**: Consider using one",  # LongMemEval prose: the old prose rule took "manager**"
    "**Password Protection:**",
    "let's talk about password security! Managing passwords",
    "a long line of prose that wraps in the terminal at eighty columns and goes on\nand on",
], ids=lambda t: t[:40])
def test_look_alikes_of_the_new_shapes_are_left_alone(text):
    assert redact(text) == (text, [])


@pytest.mark.parametrize("items", [["", "--Password 000012"], ["primary", "key 3f9aK2mQ7xLp3vR8tZ1wY4nB6c"]])
def test_a_batch_scan_finds_what_each_string_alone_finds(items):
    """Found by fuzzing: the NUL that joins a batch's strings is a string boundary for flags and prose."""
    assert [v for v, _ in redact_values(items)] == [redact(s)[0] for s in items]


def test_the_dry_run_lists_what_ingest_would_redact_without_printing_a_secret(tmp_path, capsys):
    from eventlog.ingest.secrets import _main

    path = leaky_claude_session(tmp_path / "s-1.jsonl")
    assert _main(["--show", path]) == 0
    out = capsys.readouterr().out
    assert "openai-key" in out and "bearer-token" in out and "MB/s" in out
    assert OPENAI not in out and BEARER not in out
