"""Item ids for what an engine named itself (a Hindsight document id, an OpenViking file path).

A mnemon-ls item id (:func:`mnemon_ls.spaces.model.validate_item_id`) has no ``/``, ``..``, whitespace or NUL and
at most 200 characters; an engine's own names often have them (``notes/alice.md``,
``preferences/default/package manager.md``). :func:`carry` makes an item id of any such name, reversibly where
it fits; :func:`carried` reads it back.
"""

from __future__ import annotations

import base64
import hashlib

#: The prefix of an item id that carries a name in unpadded base64url (:func:`carry`).
ENCODED = "b64~"
#: The prefix of an item id that names a name too long to carry: by its SHA-256 (:func:`carry`).
HASHED = "h~"
#: The longest item id (characters; mnemon_ls.spaces.model.MAX_ITEM_ID_CHARS).
_MAX = 200


def _plain(text: str) -> bool:
    return (text.strip() == text and 0 < len(text) <= _MAX and "/" not in text and ".." not in text
            and "\x00" not in text and not any(c.isspace() for c in text) and not text.startswith((ENCODED, HASHED)))


def carry(name: str) -> str:
    """The item id of an engine's ``name``: ``name`` itself when it is a valid item id; else :data:`ENCODED` +
    its UTF-8 bytes in unpadded base64url when that fits (``notes/alice.md`` -> ``b64~bm90ZXMvYWxpY2UubWQ``); else
    :data:`HASHED` + the first 40 hex digits of its SHA-256 (the provider looks it up: :func:`carried` cannot
    reverse it). A name that begins with either prefix is encoded too, so :func:`carried` never misreads one."""
    if _plain(name):
        return name
    encoded = ENCODED + base64.urlsafe_b64encode(name.encode("utf-8")).decode("ascii").rstrip("=")
    return encoded if _plain(encoded[len(ENCODED):]) and len(encoded) <= _MAX else \
        HASHED + hashlib.sha256(name.encode("utf-8")).hexdigest()[:40]


def carried(item: str) -> str | None:
    """The engine's name of item id ``item`` (:func:`carry` reversed); ``None`` for an encoded id that does not
    decode or that is not how :func:`carry` spells its name (padded, another alphabet); a :data:`HASHED` id is
    returned as it is (the provider looks it up)."""
    if not item.startswith(ENCODED):
        return item
    body = item[len(ENCODED):]
    try:
        name = base64.b64decode(body + "=" * (-len(body) % 4), altchars=b"-_", validate=True).decode("utf-8")
    except (ValueError, UnicodeDecodeError):
        return None
    return name if name and carry(name) == item else None
