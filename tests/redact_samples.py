"""Credential samples for the redaction tests: made-up values in each vendor's published format.

Each value is generated from a fixed seed (never a real key). ``SAMPLES`` is a list of
``(kind, text, secret)``: ``text`` holds ``secret`` the way a person would paste it; after redaction
no byte of ``secret`` (and, for split values, of either part) may remain. ``PROSE`` must come back
unchanged.
"""

from __future__ import annotations

import base64
import random
import string

_rng = random.Random(8)
_ALNUM = string.ascii_letters + string.digits


def _r(n: int, alphabet: str = _ALNUM) -> str:
    return "".join(_rng.choice(alphabet) for _ in range(n))


def _upper(n: int) -> str:
    return _r(n, string.ascii_uppercase + string.digits)


def _b64url(n: int) -> str:
    return _r(n, _ALNUM + "-_")


AWS_ID = "AKIA" + _upper(16)
AWS_SESSION_ID = "ASIA" + _upper(16)
AWS_SECRET = _r(40, _ALNUM + "/+")
GITHUB = {p: f"{p}_{_r(36)}" for p in ("ghp", "gho", "ghs", "ghu", "ghr")}
GITHUB_PAT = "github_pat_" + _r(22) + "_" + _r(59)
GITLAB = "glpat-" + _b64url(20)
SLACK_BOT = f"xoxb-{_rng.randint(10**10, 10**11)}-{_rng.randint(10**10, 10**11)}-{_r(24)}"
SLACK_USER = f"xoxp-{_rng.randint(10**10, 10**11)}-{_rng.randint(10**10, 10**11)}-{_r(32)}"
SLACK_HOOK = f"https://hooks.slack.com/services/T{_upper(8)}/B{_upper(10)}/{_r(24)}"
OPENAI = "sk-" + _r(20) + "T3BlbkFJ" + _r(20)
OPENAI_PROJ = "sk-proj-" + _b64url(74) + "T3BlbkFJ" + _b64url(74)
ANTHROPIC = "sk-ant-api03-" + _b64url(93) + "AA"
GOOGLE = "AIza" + _b64url(35)
STRIPE = "sk_live_" + _r(24)
STRIPE_RK = "rk_live_" + _r(24)
_JWT_HEAD = base64.urlsafe_b64encode(b'{"alg":"HS256","typ":"JWT"}').rstrip(b"=").decode()
_JWT_BODY = base64.urlsafe_b64encode(b'{"sub":"1234567890","name":"Ada","iat":1516239022}').rstrip(b"=").decode()
JWT = f"{_JWT_HEAD}.{_JWT_BODY}.{_b64url(43)}"
PEM_BODY_LINES = [_r(64, _ALNUM + "+/") for _ in range(6)] + [_r(20, _ALNUM + "+/") + "=="]
PEM = "-----BEGIN RSA PRIVATE KEY-----\n" + "\n".join(PEM_BODY_LINES) + "\n-----END RSA PRIVATE KEY-----"
PEM_B64 = base64.b64encode(PEM.encode()).decode()
PEM_B64_WRAPPED = "\n".join(PEM_B64[i:i + 76] for i in range(0, len(PEM_B64), 76))
PASSWORD = "Tr0ub4dor&3x" + _r(4)
SECRET = _r(18)
TOKEN = _r(28)
URL_TOKEN = _r(30)
HIGH_ENTROPY = _r(44, _ALNUM + "+/")
SPLIT_GITHUB = "ghp_" + _r(36)

SAMPLES: list[tuple[str, str, str]] = [
    ("aws-access-key-id", f"The deploy user is {AWS_ID} in us-east-1.", AWS_ID),
    ("aws-access-key-id", f"temporary creds {AWS_SESSION_ID}", AWS_SESSION_ID),
    ("aws-secret-access-key", f"aws_secret_access_key = {AWS_SECRET}", AWS_SECRET),
    *[("github-token", f"push with {value} please", value) for value in GITHUB.values()],
    ("github-token", f"export GH_TOKEN={GITHUB_PAT}", GITHUB_PAT),
    ("gitlab-token", f"the CI uses {GITLAB} for the registry", GITLAB),
    ("slack-token", f"bot token {SLACK_BOT}", SLACK_BOT),
    ("slack-token", f"user token: {SLACK_USER}", SLACK_USER),
    ("slack-webhook", f"alerts go to {SLACK_HOOK}", SLACK_HOOK),
    ("openai-api-key", f"OPENAI_API_KEY={OPENAI}", OPENAI),
    ("openai-api-key", f"project key {OPENAI_PROJ} works", OPENAI_PROJ),
    ("anthropic-api-key", f"ANTHROPIC_API_KEY={ANTHROPIC}", ANTHROPIC),
    ("google-api-key", f"maps key {GOOGLE}", GOOGLE),
    ("stripe-key", f"stripe: {STRIPE}", STRIPE),
    ("stripe-key", f"restricted {STRIPE_RK}", STRIPE_RK),
    ("jwt", f"Authorization header had a session {JWT} in it", JWT),
    ("private-key", f"deploy key:\n{PEM}\nkeep it safe", PEM_BODY_LINES[2]),
    ("private-key", f"k8s secret data: {PEM_B64_WRAPPED}", PEM_B64[40:80]),
    ("password", f"db password={PASSWORD}", PASSWORD),
    ("password", f'{{"password": "{PASSWORD}x"}}', PASSWORD + "x"),
    ("secret", f"client_secret: {SECRET}9", SECRET + "9"),
    ("token", f"token: {TOKEN}", TOKEN),
    ("url-credential", f"clone https://deploy:{URL_TOKEN}@git.example.com/repo.git", URL_TOKEN),
    ("high-entropy-secret", f"signing_key={HIGH_ENTROPY}", HIGH_ENTROPY),
    ("github-token", f"token split by the terminal: {SPLIT_GITHUB[:22]}\n{SPLIT_GITHUB[22:]} end",
     SPLIT_GITHUB[:22]),
]

#: Kinds whose value identifies itself without a key name (a bare value in a tag or a title).
SELF_EVIDENT = frozenset({"aws-access-key-id", "github-token", "gitlab-token", "slack-token", "slack-webhook",
                          "openai-api-key", "anthropic-api-key", "google-api-key", "stripe-key", "jwt"})


def bare(kind: str, secret: str) -> bool:
    """True when ``secret`` alone (no surrounding text) is still a detectable value."""
    return kind in SELF_EVIDENT and secret != SPLIT_GITHUB[:22]


#: Texts about secrets holding no value: redaction must return them unchanged.
PROSE = [
    "No API key is needed",
    "set the token in your env",
    "The password must be at least 12 characters; rotate it every 90 days.",
    "Use a secret manager; never paste a private key here.",
    "max_tokens=4096 and the tokenizer: regex-v2",
    "token_limit: 20000, password_min_length=12",
    "Run tests with pytest -n 2; sk-learn-compatible-estimator is fine",
    "Password: see the team vault. Token: ask the on-call.",
    'export GITHUB_TOKEN=$GITHUB_TOKEN and api_key = os.environ["API_KEY"]',
    "The key: value pairs are sorted; primary key: id",
    "token = get_token(); secret = settings.secret_value",
    "Clone https://github.com/org/repo.git and read https://docs.example.com/a:b@c",
    "PWD=/home/user/project is where make runs",
    "ghp_ is the prefix GitHub uses for personal tokens",
    "AKIA keys are access key ids; ASIA ones are temporary",
    "An SSH key begins with -----BEGIN OPENSSH PUBLIC KEY----- lines? No: public keys are fine",
    "We chose SQLite FTS5 for the side index",
    "password=<your password> and token: <token>",
    "secret: [redacted:secret] stays",
    "[redacted:github-token]",
]

#: Every secret value (and both parts of split ones), for grepping a root.
ALL_VALUES = sorted({s for _, _, s in SAMPLES} | {SPLIT_GITHUB[:22], SPLIT_GITHUB[22:], *PEM_BODY_LINES[:-1]},
                    key=len)
