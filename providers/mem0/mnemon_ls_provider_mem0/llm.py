"""Mem0's LLM when ``infer`` is on (package doc): the client it calls, the check of every answer it gives
before Mem0 reads it, and the error a write through it raises when it fails.

:func:`llm_client` is the ``openai.OpenAI`` client set on Mem0's LLM (``llmEndpoint``, ``llmApiKey``,
``timeoutSeconds``, no retry); :class:`CheckedLLM` wraps Mem0's LLM object so that each extraction answer goes
through :func:`checked_extraction` (credentials redacted, control characters dropped, a malformed answer
refused with :class:`BadExtraction`); :func:`llm_failed` turns Mem0's ``LLMError`` into the
:class:`~mnemon_ls.errors.ProviderUnavailable` a remember raises, naming the endpoint and the field, never
the key. ``openai`` is imported on use (it comes with mem0ai).
"""

from __future__ import annotations

import re
from typing import Any, Mapping

from mnemon_ls.errors import ProviderUnavailable


def llm_client(llm: dict[str, Any], timeout: float) -> Any:
    """The ``openai.OpenAI`` client Mem0's LLM calls when ``infer`` is true, made here instead of by Mem0 so
    that it talks to ``llmEndpoint`` (default OpenAI's API) with ``llmApiKey`` only -- Mem0's own client
    prefers ``OPENROUTER_API_KEY`` or ``OPENAI_BASE_URL`` from the environment when they are set -- waits
    ``timeoutSeconds`` for an answer (Mem0's: 600 s) and does not retry (Mem0's: twice), so a remember
    through an LLM that is down fails within the timeout."""
    from openai import OpenAI

    return OpenAI(api_key=str(llm["api_key"]), base_url=str(llm.get("openai_base_url") or "https://api.openai.com/v1"),
                  timeout=timeout, max_retries=0)


class BadExtraction(ValueError):
    """The LLM's answer is not Mem0's extraction JSON (``{"memory": [{"text": "..."}, ...]}``)."""


def _fact_text(text: str) -> tuple[str, int]:
    """A fact as the LLM wrote it made safe to store and print: credentials redacted
    (:func:`mnemon_ls.redact.redact_text`, ``[redacted:<kind>]``), control characters other than tab and
    newline and format characters (Unicode Cc/Cf: ESC, BEL, U+202E...) dropped. ``(text, redactions)``."""
    import unicodedata

    from mnemon_ls.redact import redact_text

    text, found = redact_text(text)
    kept = "".join(c for c in text if c in "\t\n" or unicodedata.category(c) not in ("Cc", "Cf"))
    return kept.strip(), len(found)


def checked_extraction(answer: Any) -> tuple[str, int]:
    """The LLM's extraction ``answer`` checked and cleaned before Mem0 reads it: a string holding (maybe in a
    ```json fence) ``{"memory": [{"text": str, ...}, ...]}``; each ``text`` through :func:`_fact_text`
    (an entry left empty is dropped). Returns ``(JSON text for Mem0, redactions)``; an empty answer is
    ``{"memory": []}`` (nothing to keep). Raises :class:`BadExtraction` naming what is wrong (Mem0 itself
    crashed on ``{"memory": "a fact"}`` and read broken JSON as "no fact")."""
    import json

    if not isinstance(answer, str):
        raise BadExtraction(f"the answer is {type(answer).__name__}, not text")
    text = answer.strip()
    fenced = re.fullmatch(r"```(?:json)?\s*(.*?)\s*```", text, flags=re.S)
    if fenced:
        text = fenced.group(1)
    if not text:
        return json.dumps({"memory": []}), 0
    try:
        data = json.loads(text)
    except ValueError:
        raise BadExtraction(f"the answer is not JSON: {' '.join(text.split())[:80]!r}") from None
    if not isinstance(data, dict) or not isinstance(data.get("memory"), list):
        raise BadExtraction('the answer has no "memory" list')
    facts, redacted = [], 0
    for index, entry in enumerate(data["memory"]):
        if not isinstance(entry, dict) or not isinstance(entry.get("text"), str):
            raise BadExtraction(f'memory[{index}] is not an object with a "text" string')
        clean, found = _fact_text(entry["text"])
        redacted += found
        if clean:
            facts.append({**entry, "text": clean})
    return json.dumps({"memory": facts}, ensure_ascii=False), redacted


class CheckedLLM:
    """Mem0's LLM object with every answer through :func:`checked_extraction` (``infer`` only: the
    extraction is the one call Mem0's ``add`` makes); ``redacted`` counts the credentials taken out of the
    facts since :meth:`take_redacted`. Every other attribute is the wrapped LLM's."""

    def __init__(self, llm: Any) -> None:
        self._llm = llm
        self.redacted = 0

    def __getattr__(self, name: str) -> Any:
        return getattr(self._llm, name)

    def generate_response(self, *args: Any, **kwargs: Any) -> str:
        """The wrapped call, its answer checked (:class:`BadExtraction` goes to Mem0, which raises it as its
        ``LLMError``)."""
        text, redacted = checked_extraction(self._llm.generate_response(*args, **kwargs))
        self.redacted += redacted
        return text

    def take_redacted(self) -> int:
        """The count since the last call, reset to 0."""
        count, self.redacted = self.redacted, 0
        return count


def llm_failed(exc: BaseException, llm: Mapping[str, Any], *, default_timeout: float) -> ProviderUnavailable:
    """The :class:`ProviderUnavailable` (``engine-failed``, ``location`` ``LLM <endpoint>``, ``field``) of
    Mem0's ``LLMError`` ``exc`` during an ``infer`` write: ``services.llmApiKey`` when the LLM answered
    HTTP 401/403, ``services.llmEndpoint`` otherwise (down, no answer within ``timeoutSeconds``, another
    HTTP status with the server's message); never the key. Nothing was stored (Mem0 stores only what the
    LLM answered). ``llm``: the engine's ``{"endpoint", "model", "key", "timeout"}`` (:attr:`.engine.Mem0Engine.llm`;
    ``default_timeout`` seconds when it names no timeout)."""
    import openai

    cause: BaseException = exc.__cause__ or exc
    endpoint, model = llm.get("endpoint"), llm.get("model")
    field = "services.llmEndpoint"
    if isinstance(cause, (openai.AuthenticationError, openai.PermissionDeniedError)):
        field = "services.llmApiKey"
        said = f"refused the key in llmApiKey (HTTP {cause.status_code})"
    elif isinstance(cause, BadExtraction):
        said = f"answered what is not Mem0's extraction JSON ({cause})"
    elif isinstance(cause, openai.APITimeoutError):
        wait = float(llm.get("timeout") or default_timeout)
        said = f"gave no answer within {wait:g} s (timeoutSeconds)"
    elif isinstance(cause, openai.APIConnectionError):
        inner = cause.__cause__ or cause
        said = "cannot be reached: " + " ".join(f"{type(inner).__name__}: {inner}".split())[:300]
    elif isinstance(cause, openai.APIStatusError):
        text = re.sub(r"^Error code: \d+ - ", "", " ".join(str(cause.message).split()))
        said = f"answered HTTP {cause.status_code}: " + text[:300]
    else:
        said = "failed: " + " ".join(f"{type(cause).__name__}: {cause}".split())[:300]
    key = llm.get("key")
    if key:
        said = said.replace(str(key), "***")
    return ProviderUnavailable(f"provider mem0: the LLM at {endpoint} (model {model}; {field}) {said}; "
                               "nothing was stored", provider="mem0", reason="engine-failed",
                               location=f"LLM {endpoint}", field=field)
