"""A JSON-over-HTTP client for the provider packages whose engine is a server (Hindsight, OpenViking).

Standard library only (``urllib``): one request per call, JSON in and out. What every such provider needs and
must not get wrong is here once:

- ``timeout`` (seconds) bounds the connect and each wait on the answer (not the whole request);
- redirects are not followed (the key would go wherever the server points): an HTTP 3xx is an error naming
  the ``Location``;
- an answer is read up to :data:`MAX_ANSWER_BYTES`; a bigger one, one broken off (fewer bytes than its
  ``Content-Length``), or one that is not JSON is an error, never a crash or a silent truncation;
- the key is sent in one header and masked (``***``) in every message (a key shorter than
  :data:`MIN_MASKED_KEY` characters is not masked: marking its every occurrence would show it).

Errors: :class:`~mnemon_ls.errors.ProviderUnavailable` with reason ``engine-failed`` and ``location`` the
endpoint (HTTP 401/403 name ``field`` ``services.apiKey``); :class:`~mnemon_ls.errors.InvalidInput` from
:func:`endpoint_of` and :func:`key_of` naming the service field.
"""

from __future__ import annotations

import http.client
import json
import socket
import urllib.error
import urllib.parse
import urllib.request
from typing import Any, Mapping

from mnemon_ls.errors import InvalidInput, ProviderUnavailable

#: The largest answer read from a server (bytes): a bigger one is refused, not held in memory.
MAX_ANSWER_BYTES = 64 * 1024 * 1024
#: A key shorter than this (characters) is not masked in messages.
MIN_MASKED_KEY = 8


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    """Redirects are not followed (module doc)."""

    def redirect_request(self, *args: Any, **kwargs: Any) -> None:
        return None


_OPENER = urllib.request.build_opener(_NoRedirect)


def as_dict(answer: Any) -> dict[str, Any]:
    """``answer`` when the server answered a JSON object, else ``{}`` (a list or a string where an object
    belongs reads as empty, never a crash)."""
    return answer if isinstance(answer, dict) else {}


def endpoint_of(service: Mapping[str, Any], example: str) -> str:
    """The ``endpoint`` service field without trailing ``/``. Raises :class:`InvalidInput` naming
    ``services.endpoint`` when it is missing (``example`` shows a valid one) or carries a query string. (Scheme,
    host and credentials are checked when the field is set: ``FieldRule("url")``.)"""
    endpoint = str(service.get("endpoint") or "").strip().rstrip("/")
    if not endpoint:
        raise InvalidInput("services.endpoint", f"is required: the server's base URL, e.g. {example}")
    if "?" in endpoint:
        raise InvalidInput("services.endpoint", f"must be the server's base URL without a query string ({example})")
    return endpoint


def key_of(service: Mapping[str, Any]) -> str | None:
    """The ``apiKey`` service field, or ``None``. Raises :class:`InvalidInput` naming ``services.apiKey`` when
    it is not printable ASCII without spaces (an HTTP header carries it)."""
    key = service.get("apiKey") or None
    if key is not None and not all(33 <= ord(c) <= 126 for c in str(key)):
        raise InvalidInput("services.apiKey", "must be printable ASCII without spaces (an HTTP header carries it)")
    return None if key is None else str(key)


def _detail(body: Any) -> str:
    """The error text of a JSON error answer: FastAPI's ``detail``, ``error.message`` or ``message``."""
    if not isinstance(body, dict):
        return ""
    error = body.get("error")
    for value in (body.get("detail"), error.get("message") if isinstance(error, dict) else error, body.get("message")):
        if isinstance(value, str) and value.strip():
            return value
        if value:
            return json.dumps(value, ensure_ascii=False)
    return ""


class JsonClient:
    """Requests to one server (module doc): ``provider`` (the provider id its errors name), ``endpoint`` (base
    URL, no trailing ``/``), ``key`` (sent as ``key_header: key_prefix + key``, or ``None``), ``timeout``
    (seconds), ``label`` (how messages name the server, e.g. ``the server``)."""

    def __init__(self, provider: str, endpoint: str, key: str | None, timeout: float, *,
                 key_header: str = "Authorization", key_prefix: str = "Bearer ",
                 headers: Mapping[str, str] | None = None) -> None:
        self.provider = provider
        self.endpoint = endpoint
        self.key = key
        self.timeout = timeout
        self.headers = {"Accept": "application/json", **(headers or {})}
        if key:
            self.headers[key_header] = key_prefix + key

    def request(self, method: str, path: str, body: Any = None, *, query: Mapping[str, Any] | None = None,
                missing: bool = False) -> Any:
        """The JSON answer (``None`` for an empty one) of ``method path`` (``query`` as URL parameters, ``body``
        as JSON). ``missing``: an HTTP 404 answers ``None`` instead of raising. Raises
        :class:`ProviderUnavailable` (module doc)."""
        url = self.endpoint + path + ("?" + urllib.parse.urlencode(query) if query else "")
        data = None if body is None else json.dumps(body, ensure_ascii=False).encode("utf-8")
        headers = dict(self.headers)
        if data is not None:
            headers["Content-Type"] = "application/json"
        request = urllib.request.Request(url, data=data, method=method, headers=headers)
        bare = path.split("?")[0]
        try:
            with _OPENER.open(request, timeout=self.timeout) as response:  # http(s) only: FieldRule url
                raw = response.read(MAX_ANSWER_BYTES + 1)
                if len(raw) <= MAX_ANSWER_BYTES and getattr(response, "length", None):  # fewer than it promised
                    raise http.client.IncompleteRead(raw, response.length)
        except urllib.error.HTTPError as exc:
            if exc.code == 404 and missing:
                return None
            raise self._refused(method, bare, exc) from None
        except http.client.HTTPException as exc:  # a connection cut mid-answer (IncompleteRead), a bad status line
            raise self.down(f"broke off its answer to {method} {bare}: {type(exc).__name__}") from None
        except (TimeoutError, socket.timeout):
            raise self.down(f"gave no answer within {self.timeout:g} s (timeoutSeconds)") from None
        except urllib.error.URLError as exc:
            reason = exc.reason
            if isinstance(reason, (TimeoutError, socket.timeout)):
                raise self.down(f"gave no answer within {self.timeout:g} s (timeoutSeconds)") from None
            raise self.down("cannot be reached: " + " ".join(f"{type(reason).__name__}: {reason}".split())[:300]) \
                from None
        except OSError as exc:
            raise self.down("failed: " + " ".join(f"{type(exc).__name__}: {exc}".split())[:300]) from None
        if len(raw) > MAX_ANSWER_BYTES:
            raise self.down(f"answered {method} {bare} with more than {MAX_ANSWER_BYTES} bytes")
        try:
            return json.loads(raw) if raw else None
        except ValueError:
            raise self.down(f"answered {method} {bare} with what is not JSON") from None

    def down(self, said: str, **extra: Any) -> ProviderUnavailable:
        """The :class:`ProviderUnavailable` of ``provider X: the server at ENDPOINT <said>`` (key masked)."""
        return ProviderUnavailable(f"provider {self.provider}: the server at {self.endpoint} {self.scrub(said)}",
                                   provider=self.provider, reason="engine-failed", location=self.endpoint, **extra)

    def _refused(self, method: str, path: str, exc: urllib.error.HTTPError) -> ProviderUnavailable:
        try:
            detail = _detail(json.loads(exc.read() or b"{}"))
        except (ValueError, OSError):
            detail = ""
        text = " ".join(str(detail or exc.reason or "").split())[:300]
        if 300 <= exc.code < 400:
            text = f"a redirect to {exc.headers.get('Location', '?')}, which is not followed (set endpoint to it)"
        if exc.code in (401, 403):
            return self.down(f"refused the key in apiKey (HTTP {exc.code}{': ' + text if text else ''})",
                             field="services.apiKey")
        return self.down(f"answered HTTP {exc.code} to {method} {path}{': ' + text if text else ''}")

    def scrub(self, text: str) -> str:
        """``text`` with the key masked (module doc)."""
        return text.replace(self.key, "***") if self.key and len(self.key) >= MIN_MASKED_KEY else text
