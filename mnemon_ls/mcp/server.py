"""``mnemon-ls mcp``: the stdio MCP server (official ``mcp`` SDK 2.x, ``MCPServer``) over the same Host.

Tools (``mnemon_`` prefix, reference/dsh-mnemon.md 7.1), resources (``mnemon://wake``,
``mnemon://runtime/USER.md``, ``mnemon://runtime/MEMORY.md``, ``mnemon://documents/{id}``), the
``mnemon-routing`` prompt and the routing guidance as the server's ``instructions``
(:mod:`mnemon_ls.guidance`). Every tool parses its arguments, calls one Host/Source operation in a worker
thread (the same operations, locks and revision fences as the CLI and the language server) and formats
text for the model. Errors are tool errors (``isError``) whose text is ``<code>: <message>`` with the
language server's stable ``data.code``; arguments are checked strictly before any tool runs, and a malformed
request or an unknown tool is a JSON-RPC ``-32602`` error (:mod:`.arguments`). Logs go to stderr only: stdout carries
the protocol.
"""

from __future__ import annotations

import errno
import gc
import functools
import inspect
import logging
import os
import secrets
import warnings
import weakref
from typing import TYPE_CHECKING, Any, Callable, Mapping, TypeVar

import anyio
from mcp.server import MCPServer
from mcp.server.mcpserver import Context
from mcp.server.mcpserver.exceptions import ToolError
from mcp.shared.exceptions import MCPError
from mcp.types import ToolAnnotations
from mcp_types import INVALID_PARAMS

from .. import __version__, guidance
from ..errors import InvalidInput, MnemonError, NotFound, echo_value, rename_fields
from ..settings import Settings
from ..ops import modeltext as fmt
from .arguments import StrictArguments, bounded_error, make_strict
from .workspaces import McpWorkspaces

if TYPE_CHECKING:  # the host is imported on the first call (mnemon_ls.mcp.workspaces), not before `initialize`
    from ..host import WorkspaceHost

log = logging.getLogger("mnemon_ls.mcp")

T = TypeVar("T")

#: JSON-RPC error code of a resource that does not exist (MCP specification, resources: error handling).
RESOURCE_NOT_FOUND = -32002

READ_ONLY = ToolAnnotations(readOnlyHint=True, destructiveHint=False, idempotentHint=True, openWorldHint=False)
WRITE = ToolAnnotations(readOnlyHint=False, destructiveHint=False, idempotentHint=False, openWorldHint=False)
DESTRUCTIVE = ToolAnnotations(readOnlyHint=False, destructiveHint=True, idempotentHint=True, openWorldHint=False)


def tool_error(error: Exception, rename: Mapping[str, str] | None = None,
               fields: frozenset[str] = frozenset()) -> ToolError:
    """A domain error as an MCP tool error: ``<code>: <message>`` (the code the language server sends as
    ``data.code``), plus the field when the error names one, as the tool's argument (``rename``: field ->
    argument name, for a tool that offers a field under another name). ``fields``: the operation's parameters as
    the wire names them (camelCase); one the rule names is named as its argument too (``target_id: must differ
    from source_id``, not ``... from sourceId``)."""
    from ..ops.tools import argument_name

    def argument(name: str) -> str:
        return argument_name(name, rename)

    if isinstance(error, InvalidInput):
        # The Sources name fields as the wire does (camelCase: spaceId, oldText); tool arguments are snake_case.
        rule = rename_fields(error.rule, lambda name: argument(name) if name in fields else None)
        return ToolError(bounded_error(f"{error.code}: {argument(error.field)}: {rule}"))
    if isinstance(error, MnemonError):
        field = error.data.get("field")
        if isinstance(field, str) and error.message.startswith(f"{field}: "):  # oldText -> old_text, as above
            error = type(error)(f"{argument(field)}: {error.message[len(field) + 2:]}", **error.data)
        plan = fmt.plan_text(error)  # a full USER.md: the numbered plan for mnemon_runtime_compact
        return ToolError(f"{error.code}: {error.message}\n{plan}" if plan
                         else bounded_error(f"{error.code}: {error.message}"))
    return ToolError(bounded_error(f"internal-error: {type(error).__name__}: {error}"))


def internal_tool_error(exc: Exception, where: str) -> ToolError:
    """An exception no layer expected (a bug), as an MCP tool error: ``internal-error: <type>: <message>`` (clipped),
    with its traceback logged to stderr under ``where`` (the operation's name). Without it the SDK answers only
    "Error executing tool <name>", and the client cannot tell a bug from a refusal."""
    log.error("internal error in %s", where, exc_info=exc)
    return tool_error(exc)


def os_tool_error(exc: OSError) -> ToolError:
    """An :class:`OSError` no layer below mapped, as an MCP tool error: a storage failure with its code
    (:func:`~mnemon_ls.errors.storage_error`), a path too long as ``invalid-input`` naming ``path``, else
    ``internal-error: <file>: <reason>`` (the file clipped)."""
    from ..errors import echo_value, storage_error

    mapped = storage_error(exc)
    if mapped is not None:
        return tool_error(mapped)
    if exc.errno == errno.ENAMETOOLONG:
        return tool_error(InvalidInput("path", f"is longer than the system allows: {exc.strerror}"))
    where = f" {echo_value(os.fsdecode(exc.filename))}" if exc.filename else ""
    return ToolError(bounded_error(f"internal-error:{where}: {exc.strerror or exc}"))


class MnemonMcp:
    """The MCP adapter: one :class:`MCPServer` whose tools call :class:`WorkspaceHost` operations.

    ``write_enabled=False`` registers only the read tools (reference 7.1: ``writeEnabled``). ``defer=True``
    (``mnemon-ls mcp``) registers the tools, resources and prompts when the first request other than
    ``initialize`` or ``ping`` arrives instead of now (:meth:`register`): building them imports the operation
    registry and has the SDK derive every tool's schema, which a client waits for before its ``initialize``
    answer otherwise. The capabilities ``initialize`` announces are the same either way (the SDK registers its
    handlers for tools, resources and prompts when the server is made).
    """

    def __init__(self, workspaces: McpWorkspaces, *, write_enabled: bool = True, defer: bool = False) -> None:
        self.workspaces = workspaces
        self.write_enabled = write_enabled
        #: The session of this MCP server's lifetime (records' provenance and session scope).
        self.session_id = f"mcp-{secrets.token_hex(8)}"
        self._arguments: dict[str, frozenset[str]] = {}
        self.cited_watch: Any = None  # the cited-file watch, from the first workspace served (_watch_citations)
        self._registered = False
        # the hosts made so far (settle() after each new one); weak, so that a dropped host's id, which a new
        # host may reuse, is not taken for it
        self._settled: weakref.WeakSet[WorkspaceHost] = weakref.WeakSet()
        self.server = MCPServer("mnemon-ls", version=__version__, instructions=guidance.instructions(),
                                title="mnemon-ls memory", log_level="WARNING",
                                middleware=[StrictArguments(self._arguments, self._find_tool, self._params_type,
                                                            self._has_prompt, prepare=self.register)])
        self._watch_roots()
        if not defer:
            self.register()

    def register(self) -> None:
        """Register the tools, resources and prompts (once; the middleware calls it before any request but
        ``initialize`` and ``ping``)."""
        if self._registered:
            return
        self._registered = True
        self._register_tools()
        self._register_resources()
        self._register_prompts()
        settle()

    def _find_tool(self, name: Any) -> Any:
        """The SDK's registered tool ``name`` (``None`` for an unknown one)."""
        return self.server._tool_manager.get_tool(name) if isinstance(name, str) else None

    def _params_type(self, method: str) -> Any:
        """The SDK's params model of request ``method`` (``None``: a method this server does not serve)."""
        entry = self.server._lowlevel_server.get_request_handler(method)
        return None if entry is None else entry.params_type

    def _has_prompt(self, name: str) -> bool:
        return self.server._prompt_manager.get_prompt(name) is not None

    async def serve_stdio(self) -> None:
        """Serve over stdin/stdout until the client closes (:mod:`.stdio`: bad lines are answered)."""
        from .stdio import answering_stdio_server

        lowlevel = self.server._lowlevel_server
        try:
            async with answering_stdio_server() as (read_stream, write_stream):
                await lowlevel.run(read_stream, write_stream, lowlevel.create_initialization_options())
        finally:
            if self.cited_watch is not None:
                await anyio.to_thread.run_sync(self.cited_watch.stop)

    def _watch_citations(self) -> None:
        """Start the cited-file watch once a workspace is served (:class:`mnemon_ls.citations.watch.CitedWatch`:
        a wake or recall of cited memory then costs no system call per citation); not at start, which stays as
        light as the SDK's own. ``MNEMON_WATCH_CITED_FILES=0`` leaves it off."""
        if self.cited_watch is None:
            from ..citations.watch import CitedWatch, enabled

            if not enabled():
                return
            self.cited_watch = CitedWatch()
            self.cited_watch.start()

    # ------------------------------------------------------------------ plumbing

    async def _host(self, ctx: Context | None, workspace: str | None) -> WorkspaceHost:
        host = await self.workspaces.host(workspace, self._roots_fetcher(ctx))
        self._watch_citations()
        if host not in self._settled:
            self._settled.add(host)
            settle()
        return host

    def _roots_fetcher(self, ctx: Context | None) -> Callable[[], Any] | None:
        if ctx is None:
            return None
        caps = ctx.client_capabilities
        if caps is None or getattr(caps, "roots", None) is None:
            return None

        async def fetch() -> list[str] | None:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # roots are deprecated in the 2026-07-28 spec, still served
                try:
                    result = await ctx.session.list_roots()
                except Exception as exc:  # a client that advertises roots but fails: fall back to cwd
                    log.warning("roots/list failed: %s", exc)
                    return None
            return [str(root.uri) for root in result.roots]

        return fetch

    def _watch_roots(self) -> None:
        """Forget the cached roots on ``notifications/roots/list_changed`` (re-read on the next call)."""
        from mcp.types import NotificationParams

        lowlevel = getattr(self.server, "_lowlevel_server", None)
        if lowlevel is None or not hasattr(lowlevel, "add_notification_handler"):
            return

        async def changed(_ctx: Any, _params: Any) -> None:
            self.workspaces.invalidate_roots()

        lowlevel.add_notification_handler("notifications/roots/list_changed", NotificationParams, changed)

    async def _resolve(self, ctx: Context | None, workspace: str | None) -> WorkspaceHost:
        """The host of ``workspace`` (or the client's only root); a path the system cannot even look up is
        ``invalid-input`` naming ``workspace``."""
        try:
            return await self._host(ctx, workspace)
        except OSError as exc:
            if exc.errno in (errno.ENAMETOOLONG, errno.ELOOP):
                raise InvalidInput("workspace", f"cannot be used: {exc.strerror}") from None
            raise

    async def _call(self, ctx: Context | None, workspace: str | None,
                    operation: Callable[[WorkspaceHost], T]) -> T:
        """Resolve the workspace and run ``operation(host)`` in a worker thread; domain errors become tool
        errors. A client that disconnects mid-call does not cancel the write: it commits or it does not."""
        try:
            host = await self._resolve(ctx, workspace)
        except ToolError:
            raise
        except MnemonError as exc:
            raise tool_error(exc) from None
        except OSError as exc:
            raise tool_error(exc) from None
        engine = host.semantic
        if engine is not None:
            engine.warm_up()  # load the model off the event loop, so remembers are embedded in the background
        from ..packgate import run_held

        try:
            return await anyio.to_thread.run_sync(run_held, host, operation, host, abandon_on_cancel=False)
        except ToolError:
            raise
        except MnemonError as exc:
            raise tool_error(exc) from None
        except OSError as exc:
            raise os_tool_error(exc) from None
        except Exception as exc:  # a bug: the client learns its kind, the log its traceback
            raise internal_tool_error(exc, getattr(operation, "__name__", "a call")) from None

    # ------------------------------------------------------------------ tools

    def _bind_operations(self) -> None:
        """Register every assistant tool of the operation layer (:func:`mnemon_ls.ops.tools.tools`; a tool
        whose every operation writes only when writes are enabled; under ``--read-only`` a writing action of
        a tool that also reads is refused naming the mode)."""
        from ..ops.tools import tools

        for tool in tools().values():
            if tool.available(self.write_enabled):
                self._bind_tool(tool)

    def _bind_tool(self, tool: Any) -> None:
        """One SDK tool for ``tool``: its parameters (plus ``ctx``), its call resolved to an operation
        (:meth:`~mnemon_ls.ops.tools.Tool.resolve`) and run by :meth:`_run_operation`."""
        parameters = [*tool.parameters, inspect.Parameter("ctx", inspect.Parameter.KEYWORD_ONLY, default=None,
                                                          annotation=Context | None)]
        signature = inspect.Signature(parameters, return_annotation=str)

        async def tool_function(ctx: Context | None = None, **arguments: Any) -> str:
            try:
                operation, raw = tool.resolve(arguments, write_enabled=self.write_enabled)
            except MnemonError as exc:
                raise tool_error(exc) from None
            return await self._run_operation(ctx, operation, raw)

        tool_function.__name__ = tool.name
        tool_function.__signature__ = signature  # type: ignore[attr-defined]
        tool_function.__annotations__ = {p.name: p.annotation for p in parameters} | {"return": str}
        effect = tool.effect
        annotations = DESTRUCTIVE if effect == "destroy" else WRITE if effect == "write" else READ_ONLY
        self.server.add_tool(tool_function, name=tool.name, description=tool.description, annotations=annotations,
                             structured_output=False)
        make_strict(self._find_tool(tool.name))
        self._arguments[tool.name] = frozenset(p.name for p in tool.parameters)

    async def _run_operation(self, ctx: Context | None, operation: Any, raw: dict[str, Any]) -> str:
        """Run one operation for a tool call (:func:`mnemon_ls.ops.execute.execute_async`) and answer its
        model-facing text; a domain error is a tool error."""
        from ..ops.execute import execute_async, model_text_async
        from ..ops.surfaces import Call

        async def host_for(workspace: str | None) -> WorkspaceHost:
            host = await self._resolve(ctx, workspace)
            if host.semantic is not None:
                host.semantic.warm_up()  # load the model off the event loop (remembers embed in the background)
            return host

        def to_thread(fn: Callable[[], Any]) -> Any:
            return anyio.to_thread.run_sync(fn, abandon_on_cancel=False)

        try:
            host, data = await execute_async(operation, raw, host_for, surface="mcp", session=self.session_id,
                                             to_thread=to_thread)
            return await model_text_async(operation, data, Call(host, "mcp", session=self.session_id),
                                          to_thread=to_thread)
        except ToolError:
            raise
        except MnemonError as exc:
            raise tool_error(exc, _error_rename(operation), _wire_fields(operation)) from None
        except OSError as exc:  # the SDK would answer only "Error executing tool <name>"
            raise os_tool_error(exc) from None
        except Exception as exc:  # a bug: the client learns its kind, the log its traceback
            raise internal_tool_error(exc, operation.name) from None

    def _register_tools(self) -> None:
        self._bind_operations()  # every tool comes from the operation layer (mnemon_ls/ops/tools.py)

    # ------------------------------------------------------------------ resources and prompts

    def _register_resources(self) -> None:
        server = self.server

        @server.resource("mnemon://wake", name="wake", title="Wake snapshot", mime_type="text/markdown",
                         description="The wake snapshot of the (only) workspace: Runtime memory and covers.")
        async def wake_resource() -> str:
            snapshot = await self._call(None, None, lambda h: h.wake(surface="tool")[0])
            return snapshot.text

        from ..runtime.model import PROJECTION_FILES

        for target, file_name in PROJECTION_FILES.items():
            self._projection_resource(target, file_name)

        from ..ops.documents import MIN_ID_PREFIX, full_id

        @server.resource("mnemon://documents/{id}", name="document", title="Document", mime_type="text/markdown",
                         description="One Document's body by id, or by a unique prefix of at least "
                                     f"{MIN_ID_PREFIX} characters of it (as `mnemon-ls doc get` takes it).")
        async def document_resource(id: str) -> str:
            def read(host: WorkspaceHost) -> str | None:
                try:  # the id rule of doc get and every document operation (ops.documents.full_id)
                    return host.documents.get(full_id(host.documents, id)).to_dict().get("content", "")
                except NotFound:
                    return None
                except InvalidInput as exc:  # a prefix of several ids
                    raise MCPError(INVALID_PARAMS, bounded_error(f"Invalid params: {exc.message}"),
                                   {"uri": f"mnemon://documents/{echo_value(id)}"}) from None

            content = await self._call(None, None, read)
            if content is None:  # MCP spec (resources, error handling): -32002 Resource not found
                uri = f"mnemon://documents/{echo_value(id)}"  # escaped: %1b in the URI is a raw ESC here
                hint = f" (an id prefix needs at least {MIN_ID_PREFIX} characters)" if len(id) < MIN_ID_PREFIX else ""
                raise MCPError(RESOURCE_NOT_FOUND, bounded_error(f"Resource not found: {uri}{hint}"), {"uri": uri})
            return content

    def _projection_resource(self, target: str, file_name: str) -> None:
        @self.server.resource(f"mnemon://runtime/{file_name}", name=file_name, title=file_name,
                              mime_type="text/markdown",
                              description=f"Runtime memory {file_name} as projected from memories.json.")
        async def projection() -> str:
            return await self._call(None, None, functools.partial(_projection_text, target=target))

    def _register_prompts(self) -> None:
        @self.server.prompt("mnemon-routing", title="mnemon-ls routing",
                            description="Where to look for memory, and what to save where.")
        def routing() -> str:
            return f"{guidance.ROUTING_GUIDANCE}\n\n{guidance.ADMISSION_RULES}"


def _error_rename(operation: Any) -> dict[str, str]:
    """The tool's ``rename`` (field -> argument) of ``operation``, also by each field's alias that is another word
    (``from`` of ``from_path``, offered as ``path``): an error names a field as the wire does."""
    from ..ops.tools import argument_name

    rename = dict(operation.mcp.rename or {})
    model = operation.params_for("mcp")
    for name, info in getattr(model, "model_fields", {}).items():
        alias = getattr(info, "alias", None)
        if alias and argument_name(alias) != name:
            rename.setdefault(argument_name(alias), rename.get(name, name))
    return rename


def _wire_fields(operation: Any) -> frozenset[str]:
    """The parameters of ``operation`` as the wire names them (pydantic aliases, camelCase)."""
    model = operation.params_for("mcp")
    return frozenset((info.alias or name) for name, info in getattr(model, "model_fields", {}).items())


def _projection_text(host: WorkspaceHost, *, target: str) -> str:
    """The ``USER.md`` / ``MEMORY.md`` text of the current store (entries joined by ``§`` lines), a credential
    another program wrote into ``memories.json`` shown redacted as the wake shows it
    (:meth:`~mnemon_ls.runtime.source.RuntimeSource.redact_listed`; ``secrets: allow`` shows it as stored)."""
    state = host.runtime.read()
    shown = [{"target": target, "content": entry.content} for entry in state.of(target)]
    host.runtime.redact_listed(shown)
    return "\n§\n".join(entry["content"] for entry in shown)


def settle() -> None:
    """Move every object alive now out of the cyclic garbage collector's reach (``gc.freeze``): what the
    server has built by now (modules, tool schemas, a workspace host) lives as long as the process, and each
    collection would otherwise walk all of it again (~100,000 objects; 2 full collections of ~31 ms each in
    1,600 ``mnemon_wake`` calls, none with it). Objects made later are collected as usual; frozen ones are still
    freed by reference counting, but a frozen reference cycle is not: a host dropped later (its workspace's
    roots changed) keeps its cycles, a bounded cost of one per host made."""
    gc.freeze()


def run(workspace: str | None, settings: Settings, *, write_enabled: bool = True) -> int:
    """Serve MCP over stdio until the client closes; returns the exit code. Logs go to stderr."""
    logging.basicConfig(level=logging.WARNING, format="mnemon-ls mcp: %(levelname)s %(message)s")
    from .. import output  # third-party output goes to the log at debug (the SDK keeps fd 1 for the wire)

    output.install(logging.WARNING)
    workspaces = McpWorkspaces(settings, workspace)
    app = MnemonMcp(workspaces, write_enabled=write_enabled, defer=True)
    try:
        anyio.run(app.serve_stdio)
    finally:
        workspaces.close()
    return 0
