"""Tool arguments read as their published JSON schema says: an integral float where the schema says
``integer`` is that integer (JSON clients send ``1.0`` for ``1``) up to 2**53 (past it a double holds no exact
integer, and its digits were never sent), any other float there is refused as not an integer, and ``null``
where the schema's type does not take it is an optional argument left out (its default: clients that fill every
argument send ``null`` for the ones they do not mean) and is refused anywhere else: a required argument, an
item of an array, a field of an object. A refusal names the argument, or the path inside
it (``cites[0].startLine``), and the rule, never the whole value.

Pure JSON: no pydantic, no SDK; the MCP server runs it before its strict pydantic check.
"""

from __future__ import annotations

import math
from typing import Any, Mapping

from ..errors import InvalidInput, type_rule

#: JSON schema type -> the words of a rule (``must be an integer``).
_TYPE_WORDS = {"string": "a string", "integer": "an integer", "number": "a number", "boolean": "a boolean",
               "array": "an array", "object": "an object"}


#: The largest magnitude up to which every integer is a double exactly (2**53).
_EXACT = 2 ** 53


def read_arguments(arguments: Mapping[str, Any], schema: Mapping[str, Any]) -> dict[str, Any]:
    """``arguments`` (a tool call's, an object) as the tool's input ``schema`` (an object schema with
    ``properties`` and optional ``$defs``) reads them (module doc): a copy, integral floats made integers, an
    optional argument sent as ``null`` that its type does not take left out. Arguments the schema does not name
    are left as they are (the strict check refuses them). Raises :class:`InvalidInput` naming the argument
    path: ``must be an integer (got 1.5)``, ``must be a string, not null``, ``must be an integer (got a number
    out of range)`` (a float that is not finite: JSON ``1e400`` read as infinity). Each argument's schema is
    resolved once (its ``$ref``)."""
    defs = schema.get("$defs") or {}
    properties = schema.get("properties") or {}
    required = set(schema.get("required") or ())
    out: dict[str, Any] = {}
    for name, value in arguments.items():
        prop = properties.get(name)
        if not isinstance(prop, Mapping):
            out[name] = value
            continue
        resolved = _resolved(prop, defs)
        if value is None and name not in required and "null" not in (_types(resolved) or {"null"}):
            continue  # an optional argument sent as null: left out, its default
        out[name] = _read_resolved(value, resolved, defs, str(name))
    return out


def _resolved(schema: Mapping[str, Any], defs: Mapping[str, Any]) -> Mapping[str, Any]:
    """``schema`` with a local ``$ref`` (``#/$defs/Name``) replaced by its definition (its own keys kept)."""
    ref = schema.get("$ref")
    if isinstance(ref, str) and ref.startswith("#/$defs/"):
        target = defs.get(ref.removeprefix("#/$defs/"), {})
        return {**target, **{k: v for k, v in schema.items() if k != "$ref"}}
    return schema


def _types(schema: Mapping[str, Any]) -> set[str] | None:
    """The JSON types ``schema`` takes (through ``anyOf``/``oneOf``), or ``None`` when it does not say."""
    kind = schema.get("type")
    if isinstance(kind, str):
        return {kind}
    if isinstance(kind, list):
        return {k for k in kind if isinstance(k, str)}
    variants = schema.get("anyOf") or schema.get("oneOf")
    if isinstance(variants, list):
        found: set[str] = set()
        for variant in variants:
            inner = _types(variant) if isinstance(variant, Mapping) else None
            if inner is None:
                return None
            found |= inner
        return found
    return None


def _variant(schema: Mapping[str, Any], defs: Mapping[str, Any], kind: str) -> Mapping[str, Any]:
    """The branch of ``schema`` (an ``anyOf``/``oneOf``) that takes the JSON type ``kind``, else ``schema``."""
    variants = schema.get("anyOf") or schema.get("oneOf")
    if isinstance(variants, list):
        for variant in variants:
            if isinstance(variant, Mapping):
                resolved = _resolved(variant, defs)
                if kind in (_types(resolved) or ()):
                    return resolved
    return schema


def _read(value: Any, schema: Mapping[str, Any], defs: Mapping[str, Any], path: str) -> Any:
    """``value`` at ``path`` as ``schema`` reads it (:func:`read_arguments`)."""
    return _read_resolved(value, _resolved(schema, defs), defs, path)


def _read_resolved(value: Any, schema: Mapping[str, Any], defs: Mapping[str, Any], path: str) -> Any:
    """:func:`_read` of a ``schema`` already resolved (:func:`_resolved`)."""
    types = _types(schema)
    if value is None:
        if types is None or "null" in types:
            return None
        words = " or ".join(_TYPE_WORDS.get(t, t) for t in sorted(types))
        raise InvalidInput(path, type_rule(words, None))
    if types is None:
        return value
    if isinstance(value, float) and "integer" in types and "number" not in types:
        if not math.isfinite(value):
            raise InvalidInput(path, "must be an integer (got a number out of range)")
        if value.is_integer() and abs(value) <= _EXACT:
            return int(value)
        if value.is_integer():  # int(value) would show digits never sent (1.2345678901234568e+29 -> ...7056)
            raise InvalidInput(path, f"must be an integer (got {value!r}: a number with a decimal point or an "
                                     "exponent is an exact integer only up to 2**53; send the integer's digits)")
        raise InvalidInput(path, f"must be an integer (got {value!r})")
    if isinstance(value, list) and "array" in types:
        items = _variant(schema, defs, "array").get("items")
        if isinstance(items, Mapping):
            return [_read(item, items, defs, f"{path}[{index}]") for index, item in enumerate(value)]
    if isinstance(value, dict) and "object" in types:
        properties = _variant(schema, defs, "object").get("properties")
        if isinstance(properties, Mapping):
            return {key: _read(item, properties[key], defs, f"{path}.{key}")
                    if isinstance(properties.get(key), Mapping) else item for key, item in value.items()}
    return value
