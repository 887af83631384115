"""The strict shape of ``state/memory-providers.json`` version 4 (shared/reference/dsh-mnemon.md 6.1), as
pydantic models: a file that parses as JSON but holds a value of the wrong type (``"enabled": {"holographic":
"yes"}``, ``"active": 1``, a service field that is a list) fails validation and is handled as a damaged
file (:mod:`.registry`: quarantined, salvaged, noticed), never interpreted. Strict: no coercion (``"yes"``
is not ``true``, ``1`` is not ``true``, ``"5"`` is not a number). Unknown keys are ignored, as the
reference's loader does. Imported lazily (the server's start path loads no pydantic).

:func:`check_document` validates a whole (migrated) document; :func:`check_service` and :func:`check_body`
one ``services`` entry and one ``bodies`` entry (the salvage of a damaged file keeps only entries that pass).
Errors are :class:`ShapeError` whose ``reason`` names the JSON path and the rule
(``enabled.holographic: must be true or false``).
"""

from __future__ import annotations

from typing import Any, Literal, Optional, Union

from pydantic import (BaseModel, ConfigDict, Field, StrictBool, StrictFloat, StrictInt, StrictStr, TypeAdapter,
                      ValidationError)

#: A stored field value: a string, a number or a boolean (reference 6.1; never null, a list or an object).
FieldValue = Union[StrictBool, StrictInt, StrictFloat, StrictStr]


class ShapeError(ValueError):
    """The document breaks the model; ``reason`` is ``<json path>: <rule>`` of the first error."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class _Strict(BaseModel):
    model_config = ConfigDict(strict=True, extra="ignore")


class ProviderBody(_Strict):
    """One entry of ``bodies`` (reference 6.1; the optional keys may be absent, never of another type)."""

    id: StrictStr
    name: StrictStr
    description: StrictStr
    active: StrictBool
    providerId: StrictStr
    externalId: Optional[StrictStr] = None
    metadataSource: Optional[Literal["provider", "manual", "ai"]] = None
    placement: Optional[dict[str, Any]] = None
    connection: dict[StrictStr, FieldValue] = Field(default_factory=dict)
    createdAt: Optional[StrictStr] = None
    updatedAt: Optional[StrictStr] = None


class ProvidersDocument(_Strict):
    """The whole file, version 4 (``disabledSpaces`` is our extension, read leniently elsewhere)."""

    version: Literal[4]
    services: dict[StrictStr, dict[StrictStr, FieldValue]]
    enabled: dict[StrictStr, StrictBool]
    bodies: list[ProviderBody]
    disabledSpaces: Optional[list[Any]] = None


_RULES = {"bool_type": "must be true or false", "string_type": "must be a string", "dict_type": "must be an object",
          "list_type": "must be an array", "missing": "is required",
          "literal_error": "must be one of the listed values"}


def _reason(error: ValidationError) -> str:
    first = error.errors(include_url=False)[0]
    # union members append their type name to the location (``services.x.y.str``): cut them off
    loc = [p for p in first["loc"] if str(p) not in ("bool", "int", "float", "str")]
    path = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in loc).lstrip(".") or "(document)"
    if first["type"] in ("bool_type", "int_type", "float_type", "string_type") and len(first["loc"]) > len(loc):
        rule = "must be a string, number or boolean"
    else:
        rule = _RULES.get(first["type"], first["msg"])
    if first["type"] == "literal_error":
        rule = first["msg"].replace("Input should be", "must be")
    return f"{path}: {rule}"


def check_document(doc: Any) -> ProvidersDocument:
    """The validated document, or :class:`ShapeError`."""
    try:
        return ProvidersDocument.model_validate(doc)
    except ValidationError as exc:
        raise ShapeError(_reason(exc)) from None


def check_service(fields: Any) -> bool:
    """Whether one ``services`` entry has the model's shape."""
    return _passes(_SERVICE, fields)


def check_body(raw: Any) -> bool:
    """Whether one ``bodies`` entry has the model's shape."""
    return _passes(_BODY, raw)


def _passes(adapter: TypeAdapter, value: Any) -> bool:
    try:
        adapter.validate_python(value)
    except ValidationError:
        return False
    return True


_SERVICE = TypeAdapter(dict[StrictStr, FieldValue], config=ConfigDict(strict=True))
_BODY = TypeAdapter(ProviderBody)
