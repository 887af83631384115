"""Published limits: the bounds a params field's own validator enforces (a Source's ``validate_*`` function,
which counts after trimming, in JavaScript characters or UTF-8 bytes, and words its own error), stated in the
field's JSON schema so a model reads them before it calls, without a second check.

:func:`limits` gives a field's ``json_schema_extra``: the keywords go on the field's typed schema (an optional
field's non-null ``anyOf`` branch), ``items`` keywords on its array items. The numbers are the validator's own
constants, imported where the field is declared; a limit JSON schema cannot state (UTF-8 bytes) goes in the
field's description instead.
"""

from __future__ import annotations

from typing import Any, Callable


def limits(items: dict[str, Any] | None = None, **keywords: Any) -> Callable[[dict[str, Any]], None]:
    """A pydantic ``json_schema_extra`` that adds ``keywords`` (``maxLength=160``, ``maxItems=32``,
    ``pattern=...``) to a field's typed schema and ``items`` to its array items' schema."""

    def publish(schema: dict[str, Any]) -> None:
        variants = [v for v in schema.get("anyOf", ()) if v != {"type": "null"}]
        typed = variants[0] if len(variants) == 1 else schema
        typed.update(keywords)
        if items:
            typed["items"] = {**typed.get("items", {}), **items}

    return publish


def integer_range(low: int, high: int, *, optional: bool = False) -> dict[str, Any]:
    """A ``json_schema_extra`` stating the range ``low..high`` of an integer field whose service checks it
    (its error carries the value): ``{"type": "integer", "minimum": low, "maximum": high}``, inside
    ``anyOf`` with ``null`` when ``optional``. The command line reads it too (``--limit: must be an integer in
    1..50 (got 'x')`` for a value that is not digits, :func:`mnemon_ls.cli.parser.integer_type`)."""
    typed = {"type": "integer", "minimum": low, "maximum": high}
    return {"anyOf": [typed, {"type": "null"}]} if optional else typed
