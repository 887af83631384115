"""The ``mnemon/*`` protocol: notification names, the code actions' kind, and JSON-RPC error mapping.

The request methods are the operation layer's (:class:`~mnemon_ls.ops.base.LspMethod`, bound by
:mod:`.operations` after ``initialize``). Their params arrive as plain dicts (:class:`MnemonProtocol` maps every
bound method to a raw-dict message type; pygls would otherwise build namedtuples,
``shared/reference/lsp-anchors.md`` 1.6b) and are validated by the operations' params models. The
``workspace/executeCommand`` commands are the operation layer's too (ids:
:mod:`mnemon_ls.ops.command_ids`; argument models: :mod:`mnemon_ls.ops.command_args`; bound by
:mod:`.commands`). Importing this module, and answering ``initialize``, never loads pydantic. Field names are
camelCase on the wire.

Errors are JSON-RPC errors whose ``data.code`` is stable (:data:`ERROR_CODES`); ``data`` also carries the
error's details (``field`` and ``rule`` for ``invalid-input``; ``target``, ``used``, ``projected``, ``limit``
for ``runtime-capacity``; ...). No traceback is ever sent: :meth:`MnemonProtocol._send_response` gives
every error response leaving the server a stable ``data.code`` (also pygls' own: method not found,
invalid params, internal errors) and drops pygls' ``data.traceback``.
"""

from __future__ import annotations

from typing import Any

import attrs
from lsprotocol import types
from lsprotocol.types import ResponseError
from pygls.exceptions import JsonRpcException, JsonRpcInvalidParams, JsonRpcMethodNotFound
from pygls.protocol import LanguageServerProtocol
from pygls.protocol.language_server import lsp_method

from ..errors import echo_repr, echo_value

from ..ops.client import PROTOCOL_VERSION as _PROTOCOL_VERSION
from ..ops.errors import ERROR_CODES, PROTOCOL_ERROR_CODES, as_error, rpc_code

#: Version of the ``mnemon/*`` surface; editor plugins compare it with ``mnemon/status``.
PROTOCOL_VERSION = _PROTOCOL_VERSION

# Server -> client notifications.
BRANCH_CHANGED = "mnemon/branchChanged"
PROJECTION_REPAIRED = "mnemon/projectionRepaired"
RECORD_PROPOSED = "mnemon/recordProposed"
RECORDS_AUTO_WRITTEN = "mnemon/records/autoWritten"
REVIEW_SUGGESTED = "mnemon/reviewSuggested"

#: The kind of the code actions (:mod:`.actions`); their commands' ids are :mod:`mnemon_ls.ops.command_ids`.
CODE_ACTION_KIND = "refactor.mnemon"

#: The stable ``data.code`` of an error response that came without one, by JSON-RPC numeric code.
STABLE_CODES: dict[int, str] = {number: code for code, number in {**ERROR_CODES, **PROTOCOL_ERROR_CODES}.items()}


@attrs.define
class RawRequest:
    """A ``mnemon/*`` request whose params stay a plain JSON value (dict, list or None)."""

    id: int | str
    method: str
    params: Any = None
    jsonrpc: str = "2.0"


class MnemonProtocol(LanguageServerProtocol):
    """LanguageServerProtocol that hands ``mnemon/*`` request params to handlers as plain dicts."""

    #: The ``mnemon/*`` methods of the operation layer (and ``mnemon/tool``), added as :mod:`.operations`
    #: binds them (after ``initialize``).
    bound_requests: set[str] = set()

    def get_message_type(self, method: str) -> type | None:  # noqa: D102 - pygls hook
        """:class:`RawRequest` for the ``mnemon/*`` requests we receive, pygls' own types otherwise."""
        # Only the requests we receive: our own outgoing notifications need pygls' notification type.
        if method in self.bound_requests:
            return RawRequest
        return super().get_message_type(method)

    def _get_handler(self, feature_name: str) -> Any:
        """pygls' handler lookup, whose ``Method Not Found`` error names an unknown method clipped
        (:func:`~mnemon_ls.errors.echo_value`: a 100 KB method name is not sent back whole)."""
        try:
            return super()._get_handler(feature_name)
        except JsonRpcMethodNotFound:
            raise JsonRpcMethodNotFound(f"{JsonRpcMethodNotFound.MESSAGE}: {echo_value(feature_name)}") from None

    @lsp_method(types.WORKSPACE_EXECUTE_COMMAND)
    def lsp_workspace__execute_command(self, params: types.ExecuteCommandParams) -> Any:
        """pygls' ``workspace/executeCommand``, whose refusal of an unknown command names it clipped
        (``-32602 Invalid Params: Command name 'mnemon.nope' is not defined``, :func:`~mnemon_ls.errors.echo_repr`)."""
        if params.command not in self.fm.commands:
            raise JsonRpcInvalidParams.of(f"Command name {echo_repr(params.command)} is not defined")
        return (yield from super().lsp_workspace__execute_command(params))

    def _send_response(self, msg_id: Any, result: Any = None, error: ResponseError | None = None) -> None:
        """pygls' response writer, with every error given a stable ``data.code`` (:func:`stable_error`).

        An error whose request id could not be read goes out with ``"id": null`` (JSON-RPC 2.0 section 5;
        pygls' converter would leave the member out)."""
        if error is not None and msg_id is None:
            error = stable_error(error)
            self._send_data({"jsonrpc": "2.0", "id": None,
                             "error": {"code": error.code, "message": error.message, "data": error.data}})
            return
        super()._send_response(msg_id, result, None if error is None else stable_error(error))


def strict_converter() -> Any:
    """pygls' converter, except that only a JSON array structures as an LSP array (``Sequence[...]``).

    cattrs turns any iterable into a sequence: ``"arguments": {"uri": ...}`` of
    ``workspace/executeCommand`` would arrive as ``["uri"]`` and a string as its characters. Here
    anything but an array fails to structure, so the request gets ``-32602`` naming the field.
    """
    import collections.abc
    import typing

    from cattrs.cols import homogenous_tuple_structure_factory, list_structure_factory
    from pygls.protocol import default_converter

    converter = default_converter()
    lists = (list, collections.abc.MutableSequence)
    origins = (*lists, collections.abc.Sequence)

    def factory(cls: Any, conv: Any) -> Any:
        inner = (list_structure_factory if typing.get_origin(cls) in lists
                 else homogenous_tuple_structure_factory)(cls, conv)

        def structure(obj: Any, cls: Any) -> Any:
            if not isinstance(obj, (list, tuple)):
                raise TypeError(f"must be an array (got {type(obj).__name__})")
            return inner(obj, cls)

        return structure

    converter.register_structure_hook_factory(lambda cls: typing.get_origin(cls) in origins, factory)
    return converter


def stable_error(error: ResponseError) -> ResponseError:
    """``error`` with ``data.code`` (from :data:`STABLE_CODES`, ``internal-error`` for unknown numbers)
    and without a traceback; a non-object ``data`` is kept as ``data.detail``."""
    data = error.data
    if isinstance(data, dict):
        data = {k: v for k, v in data.items() if k != "traceback"}
    else:
        data = {} if data is None else {"detail": data}
    if not isinstance(data.get("code"), str):
        data = {"code": STABLE_CODES.get(error.code, "internal-error"), **data}
    message = error.message.split("\nTraceback", 1)[0]
    return ResponseError(code=error.code, message=message, data=data)


def to_rpc_error(error: Exception) -> JsonRpcException:
    """Map a domain error (or anything else) to a JSON-RPC error with ``data.code``; never a traceback."""
    mapped = as_error(error)  # the operation layer's one mapping (mnemon_ls.ops.errors)
    if mapped is not None:
        data = {k: v for k, v in mapped.to_dict().items() if k != "message"}
        return JsonRpcException(mapped.message, rpc_code(mapped), data)
    return JsonRpcException(f"internal error: {type(error).__name__}: {error}", -32603, {"code": "internal-error"})
