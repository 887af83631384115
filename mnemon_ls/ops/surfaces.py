"""How an operation is declared and invoked, without pydantic: :class:`Operation`, the surface bindings
(:class:`LspMethod`, :class:`LspCommand`, :class:`McpTool`, :class:`CliCommand` with its :class:`CliArg`) and
:class:`Call`.

:mod:`.base` re-exports all of them next to the pydantic params base; they live here so that a light path
(the command line's ``wake`` and ``hook``, :mod:`mnemon_ls.cli.light`) can name an operation's command and
run function without importing pydantic. See :mod:`.base` for what an operation is.
"""

from __future__ import annotations

import string
from dataclasses import dataclass, field
from typing import Any, Callable, Literal, Mapping

Effect = Literal["read", "write", "destroy"]
Surface = Literal["lsp", "mcp", "cli", "tool"]


# ------------------------------------------------------------------ surfaces


@dataclass(frozen=True)
class LspMethod:
    """How the language server exposes an operation: the ``mnemon/*`` request ``method``; a list result is
    answered as ``{list_key: [...], workspace}``, a dict result as the dict plus ``workspace``, either with
    ``notes`` (a list of lines) when the operation's :attr:`Operation.notes` say something.

    ``params``: the params model of the request when its wire takes more than the operation's model (a
    subclass of it, declared beside the operation: ``mnemon/wake`` also takes ``viewId`` and ``surface``);
    default the operation's. ``session``: the request belongs to the client's session, not to one folder
    (its turn Views, every open folder): the server resolves no folder and holds no pack gate for it, the
    operation runs with ``call.host`` ``None`` and ``call.client`` the session
    (:class:`~mnemon_ls.ops.client.ClientSession`: it resolves the folders it needs and holds their gates
    itself), and the answer is the result data as it is (no ``workspace`` added)."""

    method: str
    list_key: str = "items"
    params: type | None = None
    session: bool = False


@dataclass(frozen=True)
class LspCommand:
    """How the language server exposes an operation as an editor command (``workspace/executeCommand``, what
    its code actions run): the ``command`` id (one of :data:`.command_ids.COMMANDS`), its ``help`` (what the
    command does, for the reference), and ``args``, the model of the command's one argument object (a
    :class:`~mnemon_ls.ops.base.Params` subclass, camelCase on the wire; it has ``uri``, a file or folder URI:
    the folder the operation runs on, whose URI becomes the params' ``workspace``).

    How the argument object becomes the operation's params (Python field names; the registry checks each
    against ``args`` and the operation's params model, and that every required field is set):

    - ``fields``: params field -> the argument field whose value it takes (``{"content": "text"}``);
    - ``convert``: params field -> a function of that argument value (raises
      :class:`~mnemon_ls.errors.InvalidInput` naming the argument field); ``fixed``: params field -> a value
      every run sets (``{"action": "add"}``);
    - ``file``: the params field that takes the path of ``uri``, a workspace file (a file of a storage root is
      refused: memory, not a source);
    - ``comment``: the argument field holding selected text: a comment loses its comment markers (by the
      argument's ``language_id``, else the language the client opened the ``uri`` document with, else the file
      name's) before it is mapped;
    - ``cite``: the argument field holding the selection's LSP range (``{start, end}``): the params' ``cites``
      become the saved lines of ``uri`` it covers, when the file is a workspace file whose lines there are the
      editor's (a file outside the folder, too big, binary, or not saved as shown is remembered uncited);
    - ``when``: several operations may bind one command (the same ``args``, ``quiet`` and ``failure``): this one
      runs it when the argument object sets this field, the binding without ``when`` otherwise.

    What the editor shows (no binding writes a handler of its own): the answer is the result data plus
    ``success: true`` and ``workspace`` (``answer``: only these keys of the data, and no ``workspace``);
    ``path`` (a dotted key of the data: ``document.path``) is answered as ``path``; ``render`` writes the
    data's ``text`` read-only under the storage root's ``state/`` (``<render>-<12 hex of the workspace
    path>.md``) and answers that file as ``path``; ``show`` asks the client to open ``path``
    (``window/showDocument``: answered ``uri`` and ``shown``). ``message(data, params)`` is the text of the
    information message shown on success (``None``: none); a failure answers ``{success: false, error}``
    (never a JSON-RPC error: clients run commands from menus, where an error response is lost) and shows
    ``failure`` followed by the error's message. ``quiet`` names the argument flag with which the client
    shows the result itself (no message either way)."""

    command: str
    args: type
    help: str = ""
    fields: Mapping[str, str] = field(default_factory=dict)
    convert: Mapping[str, Callable[[Any], Any]] = field(default_factory=dict)
    fixed: Mapping[str, Any] = field(default_factory=dict)
    file: str | None = None
    comment: str | None = None
    cite: str | None = None
    when: str | None = None
    quiet: str | None = None
    message: Callable[[Any, Any], str | None] | None = None
    failure: str = ""
    answer: tuple[str, ...] | None = None
    path: str | None = None
    render: str | None = None
    show: bool = False


@dataclass(frozen=True)
class McpTool:
    """How the MCP server exposes an operation: tool ``name``, its model-facing ``description``, the params
    fields it offers (``fields``: Python names, default every field), ``narrow`` (field -> a narrower
    annotation offered to the model, e.g. a lower result cap; the params model still validates the call),
    ``defaults`` (field -> the tool's own default where it differs from the model's) and ``fixed`` (field ->
    a value every call of the tool sets; the field is not offered).

    Several operations may share one tool: each names its ``action`` (the value of the tool's ``action``
    argument that picks it); the tool offers the union of their fields, every one optional, and the chosen
    operation's params model validates the call (a field it requires and the call lacks is ``invalid-input``
    ``<field>: is required for action=<action>``). ``default_action`` marks the action taken when the call
    names none; the first operation's ``description`` is the tool's. ``rename`` offers a field under another
    argument name (``document_revision`` as ``revision``); ``required`` makes a field the model leaves
    optional a required argument of the tool. ``single`` offers a list field as one value (its type from
    ``narrow``; the call's value becomes a list of that one value, ``None`` stays unset)."""

    name: str
    description: str = ""
    fields: tuple[str, ...] | None = None
    narrow: Mapping[str, Any] = field(default_factory=dict)
    defaults: Mapping[str, Any] = field(default_factory=dict)
    fixed: Mapping[str, Any] = field(default_factory=dict)
    action: str | None = None
    default_action: bool = False
    rename: Mapping[str, str] = field(default_factory=dict)
    required: tuple[str, ...] = ()
    single: tuple[str, ...] = ()

    def argument(self, field_name: str) -> str:
        """The tool's argument name of ``field_name``."""
        return self.rename.get(field_name, field_name)

    def offered(self, model: Any) -> tuple[str, ...]:
        """The argument names the tool offers: ``fields``, else every field of ``model`` not ``fixed``."""
        names = self.fields if self.fields is not None else tuple(model.model_fields)
        return tuple(name for name in names if name not in self.fixed)


@dataclass(frozen=True)
class CliArg:
    """One command-line argument bound to a params field.

    ``field`` is the Python field name; ``flag`` the option (``"--space"``) or ``None`` for a positional;
    ``repeat`` makes it repeatable (a list field); ``stdin`` lets ``-`` read standard input; ``help``,
    ``metavar`` and ``choices`` are argparse's (choices default to the field's ``Literal`` values);
    ``kind`` is ``"flag"`` for an option without a value (``store_true``; ``store_false`` when ``default`` is
    ``True``; another ``default`` is the value the option sets, e.g. ``--replace`` sets ``mode`` to ``replace``),
    ``"clear"`` for an option that sets a list field to ``[]`` (``--no-branches``; refused together with
    another option of the same field), else the value type is the field's (``int``/``float``/``str``);
    ``dest`` is the name argparse keeps the value under (default the field name): a positional is known by
    it in errors when it has no ``metavar``, and two options of one field need their own (``--plan`` and ``--entries``,
    refused together); ``path`` makes a relative path absolute against the current directory (a file the command names);
    ``path="in-workspace"`` takes a relative path from the current directory only when that is the command's
    workspace or inside it (the value sent is then relative to the workspace), and otherwise leaves it as typed
    (the operation takes it relative to the workspace: ``cited FILE``);
    ``convert`` turns the typed text into the field's value (``--routes`` JSON) and raises
    :class:`~mnemon_ls.errors.InvalidInput` naming the field; an error about the field names the argument as
    ``--help`` shows it (``--space: ...`` for ``spaceId``; ``SPACE: ...`` for a positional of ``metavar``
    ``SPACE``, else its ``dest``) when the invocation gave it; ``names_errors`` makes the option name it
    also when the invocation did not give it (``--space: ...`` for a ``spaceId`` chosen by default); ``aliases``
    are more option strings of the same option (``-o`` for ``--output``, shown before it; ``--yes`` for
    ``--confirm``, after it); ``also`` are more names an error about the field may carry, the words of the layer
    below (``pack`` for a pack file's ``path``).

    ``spread`` names the fields an option's converted value (an object) holds (``--plan FILE``: revision,
    target, entries, pending): each member it has sets its field, and another option of any of them is
    refused. ``member`` makes the option fill one member of the objects of a list field (``merge``): the
    field's first declared option with a member (``--merge 2,3``) starts a new object each time it is
    given, its other member options (``--as TEXT``, ``--importance``) set their member on the object started
    last; one given before any start, or twice for one object, is refused, as is an object missing a
    ``required`` member; ``convert`` applies to the member's value."""

    field: str
    flag: str | None = None
    dest: str | None = None
    path: bool | Literal["in-workspace"] = False
    repeat: bool = False
    stdin: bool = False
    help: str | None = None
    metavar: str | None = None
    kind: Literal["value", "flag", "clear"] = "value"
    required: bool | None = None
    choices: tuple[str, ...] | None = None
    default: Any = None
    convert: Callable[[str], Any] | None = None
    names_errors: bool = False
    aliases: tuple[str, ...] = ()
    spread: tuple[str, ...] = ()
    member: str | None = None
    also: tuple[str, ...] = ()


@dataclass(frozen=True)
class CliCommand:
    """How the command line exposes an operation: the command ``path`` (``("space", "create")``), its
    ``help``, its arguments (:class:`CliArg`) and ``text(data, call, params)`` (the result as a person reads
    it in a terminal; ``--json`` prints the result data instead). ``extra`` adds arguments that steer the
    process, not the operation (argparse keyword dicts, by flag); ``fixed`` are params every invocation of
    this command sets (``runtime add`` is ``runtime.mutate`` with ``action: add``); ``hand_edits_first``
    imports hand edits of USER.md/MEMORY.md before the operation runs (the command line has no file
    watcher; each result is printed on stderr); ``warnings(data, call)`` are lines printed on stderr.
    ``gather(args, host)`` returns raw params built from arguments that do not map one to one onto fields
    (``provider configure``'s ``--set KEY=VALUE`` and ``--secret KEY`` into ``services``); it runs after the
    host opens, before the operation, and raises :class:`~mnemon_ls.errors.InvalidInput`. ``exit_code(data)``
    is the process's exit code for a result (default 0: ``provider test`` exits 1 when the test failed).
    ``to_file(data, file)``, when given, lets the command write its text to a file: it then takes ``--output
    FILE``, writes the text there (mode 0600, replaced atomically) instead of printing it, and prints the line
    ``to_file`` returns (``--json``: ``{file, bytes}``). ``error_text(error)``, when given, says an error of
    the command in a person's words (a full USER.md: the commands that make room) or returns ``None``
    (the error's own message); ``--json`` keeps the error's data and message. ``host=False`` is a command
    that opens no workspace host, for an operation that works on no storage root (``setup`` writes an
    assistant client's configuration files): no root is resolved, no pack gate held (declare the operation
    ``gated=False``), the settings flags are not read; the operation runs with ``call.host`` ``None``, and
    ``--workspace`` as given is its params' ``workspace`` (``gather`` gets ``None`` for the host)."""

    path: tuple[str, ...]
    help: str
    args: tuple[CliArg, ...] = ()
    text: Callable[[Any, Any, Any], str] | None = None
    extra: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    fixed: Mapping[str, Any] = field(default_factory=dict)
    hand_edits_first: bool = False
    warnings: Callable[[Any, Any], list[str]] | None = None
    #: What each warning line starts with after ``mnemon-ls: `` (``warning: `` unless said otherwise).
    warning_prefix: str = "warning: "
    to_file: Callable[[Any, str], str] | None = None
    gather: Callable[[Any, Any], Mapping[str, Any]] | None = None
    exit_code: Callable[[Any], int] | None = None
    error_text: Callable[[Any], str | None] | None = None
    host: bool = True

    def flag_of(self, field_name: str, given: Callable[[CliArg], bool] | None = None) -> str | None:
        """The option an error about ``field_name`` names, as the person typed it and ``--help`` shows it: of
        the arguments of that field (``--revision`` for ``documentRevision``; not those that fill a member of an
        object, which :func:`mnemon_ls.cli.ops.explain` names itself) the one the invocation gave
        (``given(arg)``: a positional always is), else the one with :attr:`CliArg.names_errors`, else (no
        ``given``) the first option. A positional is named as the usage line shows it: its ``metavar`` (``SPACE``
        for ``spaceId``), else its ``dest`` (argparse's name for it). ``None``: no argument the invocation gave
        takes the field (the error names the field: ``branches``, not ``--branch``, for a rule of the field). An
        argument of the field itself goes before one that only :attr:`CliArg.also` fills it."""
        # the arguments of the field itself first, then those that also fill it (``--file`` for ``sourcePaths``)
        named = sorted((a for a in self.args if (a.field == field_name or field_name in a.also) and a.member is None),
                       key=lambda a: a.field != field_name)
        chosen = next((a for a in named if given is not None and given(a)), None) or next(
            (a for a in named if a.names_errors or (given is None and a.flag)), None)
        if chosen is None:
            return None
        return chosen.flag or chosen.metavar or chosen.dest or chosen.field


@dataclass
class Call:
    """One invocation of an operation: the workspace's ``host``, the ``surface`` it came from (``lsp``,
    ``mcp``, ``cli``, ``tool`` for the VS Code language-model tools), the caller's ``session`` id (records'
    provenance) when it has one, and ``progress(message, percentage)`` when the surface shows progress
    (the language server's ``$/progress``; called from the worker thread; percentage 0..100 or ``None``).
    ``client`` is the language server's session (:class:`~mnemon_ls.ops.client.ClientSession`) for a request
    its :class:`LspMethod` declares ``session`` (``host`` is then ``None``); ``None`` everywhere else."""

    host: Any
    surface: Surface
    session: str | None = None
    progress: Callable[[str, int | None], None] | None = None
    user: str | None = None
    options: Mapping[str, Any] = field(default_factory=dict)
    client: Any = None


@dataclass(frozen=True)
class Operation:
    """One operation, declared once (module docstring). ``run(call, params)`` returns JSON data;
    ``text(data)`` renders it for a model."""

    name: str
    #: The params model: a subclass of :class:`mnemon_ls.ops.base.Params` (named loosely here, so that this
    #: module stays below pydantic).
    params: type
    run: Callable[[Call, Any], Any]
    summary: str
    effect: Effect = "read"
    text: Callable[..., str] | None = None
    #: ``text`` takes ``(data, call)``, not ``(data)``: what it says depends on more than the data (an empty
    #: space list under a catalog of a newer version invites no ``create``).
    text_takes_call: bool = False
    lsp: LspMethod | None = None
    #: The editor commands that run it (:class:`LspCommand`; a tuple when several).
    lsp_command: LspCommand | tuple[LspCommand, ...] | None = None
    mcp: McpTool | None = None
    cli: CliCommand | tuple[CliCommand, ...] | None = None
    #: Run under the root's pack gate (every operation but the pack commands, which take it themselves).
    gated: bool = True
    #: ``notes(data, call)``: lines about the result that every surface shows beside it, from this one function
    #: (:func:`mnemon_ls.ops.execute.notes`): the command line prints each on stderr as ``mnemon-ls: note: <line>``
    #: (so ``--json`` prints the data as it is), the assistant tools (MCP, ``mnemon/tool``) add each to the text as
    #: ``note: <line>`` (:func:`mnemon_ls.ops.execute.model_text`), a ``mnemon/*`` request answers them as
    #: ``notes`` (when there are any). ``None``: none.
    notes: Callable[[Any, "Call"], list[str]] | None = None
    #: A read that an event loop may run itself (:func:`mnemon_ls.ops.execute.execute_async`): tried on the loop
    #: in no-wait mode (:mod:`mnemon_ls.nowait`: a lock to wait for, a write or a rebuild sends it to a worker
    #: thread, run again from the start); ``False``: always a worker thread.
    inline: bool = False
    #: Title of the progress a surface shows while it runs (the LSP request then also takes
    #: ``workDoneToken``); ``None``: the operation reports none. ``{name}`` in it is the params' attribute
    #: ``name`` (``"Compacting {file}"``: :meth:`progress_title`).
    progress: str | None = None

    def params_for(self, surface: Surface | None = None) -> type:
        """The params model a request of ``surface`` is validated with: the :class:`LspMethod`'s ``params``
        for ``lsp`` when it declares one, else :attr:`params`."""
        if surface == "lsp" and self.lsp is not None and self.lsp.params is not None:
            return self.lsp.params
        return self.params

    @property
    def commands(self) -> tuple[CliCommand, ...]:
        """The command-line commands that run it (``cli``, as a tuple)."""
        if self.cli is None:
            return ()
        return self.cli if isinstance(self.cli, tuple) else (self.cli,)

    @property
    def lsp_commands(self) -> tuple[LspCommand, ...]:
        """The editor commands that run it (``lsp_command``, as a tuple)."""
        if self.lsp_command is None:
            return ()
        return self.lsp_command if isinstance(self.lsp_command, tuple) else (self.lsp_command,)

    def progress_title(self, params: Any) -> str | None:
        """:attr:`progress` with each ``{name}`` filled from ``params`` (``None`` when it reports none)."""
        if self.progress is None:
            return None
        names = [name for _, name, _, _ in string.Formatter().parse(self.progress) if name]
        return self.progress.format(**{name: getattr(params, name) for name in names})

    @property
    def writes(self) -> bool:
        """Whether the operation changes memory (``write`` or ``destroy``)."""
        return self.effect != "read"
