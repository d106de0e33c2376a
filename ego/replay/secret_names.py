"""Which names hold secrets: headers a recording drops, and fields whose values it redacts.

Two rules, both case-insensitive:

- :func:`is_secret_header`: a header dropped whole from a recording (see
  :mod:`ego.replay.secrets`).
- :func:`is_secret_name`: a query parameter, form field, multipart field or JSON key whose
  *value* is replaced by :data:`REDACTED` (the name stays, so replay still matches).

The name rule splits a name into words at anything that is not a letter or digit and at
camelCase humps (``accessToken`` -> access, token; ``X-Session`` -> x, session;
``user[password]`` -> user, password). A name is secret when

1. its words run together contain one of :data:`SECRET_FRAGMENTS` (``access_token``,
   ``csrfmiddlewaretoken``, ``sessionId``, ``apiKey``, ``X-Amz-Signature``); or
2. one of its words is one of :data:`SECRET_WORDS` (``auth``, ``x-auth``, ``pwd``, ``sid``,
   ``pin``, ``otp``, ``cvv``, ``ssn``: ``card_cvv``, ``userPIN``, ``cvv2``); or
3. in a request (URL, request body) only: one of its words is one of :data:`REQUEST_WORDS`
   (``key``, ``keyId``, ``code``, ``verification_code``), unless that word is ``code`` right
   after one of :data:`HARMLESS_CODES` (``country_code``, ``langCode``, ``status_code``).

Whole words keep harmless names out: ``keyboard``, ``keyword``, ``monkey``, ``author``,
``passenger``, ``encode`` and ``zipcode`` (one word) are not secret. Response bodies leave
``key`` and ``code`` alone because there they are mostly not secrets (``{"code": 0}`` status
fields, list item keys) and a page's own logic reads them.
"""

from __future__ import annotations

import re
from typing import Final

__all__ = [
    "HARMLESS_CODES",
    "REDACTED",
    "REQUEST_WORDS",
    "SECRET_FRAGMENTS",
    "SECRET_WORDS",
    "is_secret_header",
    "is_secret_name",
    "name_words",
]

#: What a redacted value becomes, everywhere (URL, form, multipart, JSON string).
REDACTED: Final = "REDACTED"

#: Matched anywhere in a name's words run together.
SECRET_FRAGMENTS: Final = (
    "token",
    "secret",
    "password",
    "passwd",
    "passphrase",
    "passcode",
    "session",
    "csrf",
    "xsrf",
    "credential",
    "apikey",
    "accesskey",
    "privatekey",
    "authorization",
    "cookie",
    "signature",
    "socialsecurity",
)
#: Matched as a whole word of a name, in requests and responses.
SECRET_WORDS: Final = frozenset(
    {
        "auth",
        "pwd",
        "pass",
        "sid",
        "otp",
        "totp",
        "hotp",
        "sig",
        "jwt",
        "pin",
        "cvv",
        "cvc",
        "cvn",
        "csc",
        "ssn",
    }
)
#: Matched as a whole word of a name in requests only (URLs and request bodies).
REQUEST_WORDS: Final = frozenset({"key", "code"})
#: Words before ``code`` that make it a harmless code (``country_code``).
HARMLESS_CODES: Final = frozenset(
    {
        "country",
        "zip",
        "postal",
        "post",
        "currency",
        "lang",
        "language",
        "locale",
        "region",
        "status",
        "error",
        "http",
        "area",
    }
)

_WORD: Final = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|[0-9]+")

_ALWAYS_HEADERS: Final = frozenset(
    {"cookie", "set-cookie", "set-cookie2", "authorization", "proxy-authorization"}
)
_HEADER_FRAGMENTS: Final = re.compile(
    r"token|secret|csrf|xsrf|api[-_]?key|password|passwd|session|cookie|credential|authorization",
    re.IGNORECASE,
)
_HEADER_WORDS: Final = frozenset({"auth", "jwt", "otp", "totp", "pin", "cvv", "cvc", "ssn"})


def name_words(name: str) -> list[str]:
    """The lower-case words of ``name``: split at non-alphanumerics and camelCase humps.

    Examples:
        ``"X-APIKey_id"`` gives ``["x", "api", "key", "id"]``.
    """
    return [word.lower() for word in _WORD.findall(name)]


def is_secret_name(name: str, *, request: bool = True) -> bool:
    """True when the value of a field called ``name`` must be redacted (see the module rule).

    Args:
        name: a query parameter, form field or JSON key.
        request: True for URLs and request bodies, False for response bodies (where ``key``
            and ``code`` are not secret).
    """
    words = name_words(name)
    joined = "".join(words)
    if any(fragment in joined for fragment in SECRET_FRAGMENTS):
        return True
    for index, word in enumerate(words):
        if word in SECRET_WORDS:
            return True
        if request and word in REQUEST_WORDS:
            if word == "code" and index > 0 and words[index - 1] in HARMLESS_CODES:
                continue
            return True
    return False


def is_secret_header(name: str) -> bool:
    """True when a header called ``name`` must not be written to a recording.

    ``Cookie``, ``Set-Cookie``, ``Authorization`` and ``Proxy-Authorization``; any header
    containing ``token``, ``secret``, ``csrf``, ``xsrf``, ``api-key``, ``password``,
    ``session``, ``cookie``, ``credential`` or ``authorization``, or with ``auth``, ``jwt``,
    ``otp``, ``totp``, ``pin``, ``cvv``, ``cvc`` or ``ssn`` as a dash-separated word; but never
    a CORS header (``access-control-*``).
    """
    lower = name.lower().lstrip(":")
    if lower in _ALWAYS_HEADERS:
        return True
    if lower.startswith("access-control-"):
        return False
    if _HEADER_FRAGMENTS.search(lower):
        return True
    return any(word in _HEADER_WORDS for word in re.split(r"[-_]", lower))
