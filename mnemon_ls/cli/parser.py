"""The parser pieces every ``mnemon-ls`` command shares: the settings flags (:func:`settings_parent`) and the
parser class with one-line usage errors (:class:`Parser`). :mod:`mnemon_ls.cli.full` builds every command with them,
:mod:`mnemon_ls.cli.light` the ``hook`` and ``wake`` commands alone."""

from __future__ import annotations

import argparse
import json
import re
import sys
from typing import Any, Callable, Iterator

from ..errors import EXIT_INVALID


def integer_type(bounds: dict[str, Any] | None = None) -> Callable[[str], int]:
    """An argparse ``type`` reading an integer as typed: ASCII digits after an optional ``-``
    (:func:`mnemon_ls.digits.ascii_int`; ``1_0`` and ``١`` are refused). Anything else is refused in the words
    every range check uses, with the field's ``bounds`` (``ge``/``le``...) when known: ``--limit: must be an
    integer in 1..50 (got 'x')`` (:meth:`Parser.error` words argparse's ``argument --limit: ...`` so). The range
    itself is the operation's to check (one wording on every surface)."""
    from ..digits import ascii_int
    from ..errors import echo_repr, range_rule

    def integer(text: str) -> int:
        value = ascii_int(text)
        if value is None:
            rule = range_rule("integer", bounds) if bounds else "must be an integer"
            raise argparse.ArgumentTypeError(f"{rule} (got {echo_repr(text, 32)})")
        return value

    integer.__name__ = "int"
    return integer


def settings_parent() -> argparse.ArgumentParser:
    """The parent parser of every command: ``--workspace``, the settings flags and ``--json`` (a :class:`Parser`, so
    a settings flag given twice is refused like every option of one value)."""
    parent = Parser(add_help=False)
    group = parent.add_argument_group("workspace and settings")
    group.add_argument("--workspace", metavar="DIR",
                       help="workspace directory (default: the nearest directory from the current one upward "
                            "holding .git or .mnemon; none found: no workspace, the global root is used)")
    group.add_argument("--scope", choices=("global", "workspace", "workspaces", "custom"),
                       help="storageScope (default workspaces: <$MNEMON_DATA_DIR or ~/.mnemon>/workspaces/"
                            "<sha256 of the workspace path>; global: $MNEMON_DATA_DIR or ~/.mnemon)")
    group.add_argument("--data-dir", metavar="DIR",
                       help="dataDir: the root (implies --scope custom), or the base for --scope workspaces")
    group.add_argument("--runtime-user-scope", choices=("storage", "global"),
                       help="runtimeUserScope (default global: USER.md from the global root; "
                            "storage: from the selected root)")
    limit_bytes = integer_type({"ge": 1, "le": 1048576})
    group.add_argument("--user-limit-bytes", type=limit_bytes, metavar="N",
                       help="runtimeMemory.userLimitBytes (1..1048576)")
    group.add_argument("--memory-limit-bytes", type=limit_bytes, metavar="N",
                       help="runtimeMemory.memoryLimitBytes (1..1048576)")
    group.add_argument("--memory-maintenance", choices=("archive", "reject"),
                       help="runtimeMemory.maintenance: a full MEMORY.md archives what does not fit into Memory Spaces "
                            "or the local archive (default archive), or refuses the change (reject)")
    group.add_argument("--detached-head-policy", choices=("hide", "show"), help="detachedHeadPolicy")
    group.add_argument("--worktree-sharing", choices=("shared", "separate"), help="worktreeSharing")
    group.add_argument("--recall-mode", choices=("guided", "off"), help="recallMode (assistant hooks' recall cue)")
    group.add_argument("--writeback-mode", choices=("guided", "off"),
                       help="writebackMode (assistant hooks' writeback cue)")
    group.add_argument("--secrets", choices=("redact", "reject", "allow"),
                       help="secrets: what a write does with a value that looks like a credential (default redact)")
    group.add_argument("--hand-edits", choices=("import", "restore"),
                       help="handEdits: import hand edits of USER.md/MEMORY.md (default) or restore the files")
    group.add_argument("--json", action="store_true", help="print JSON for scripts")
    for action in group._group_actions:  # a refused value names the setting it gives, as a range error does
        setting = SETTING_PARAMS.get(action.dest)
        if setting is not None:
            action.param = setting  # type: ignore[attr-defined]
    return parent


#: The setting (its dotted field, as :class:`mnemon_ls.settings.Settings` names it in an error) each settings
#: flag's dest gives: the ``param`` of a ``--json`` error of a value the flag's type or choices refused
#: (``--secrets maybe``: ``"param": "secrets"``), as a value the setting's rule refuses has it.
SETTING_PARAMS = {"scope": "storageScope", "data_dir": "dataDir",
                  "runtime_user_scope": "runtimeUserScope", "user_limit_bytes": "runtimeMemory.userLimitBytes",
                  "memory_limit_bytes": "runtimeMemory.memoryLimitBytes",
                  "memory_maintenance": "runtimeMemory.maintenance", "detached_head_policy": "detachedHeadPolicy",
                  "worktree_sharing": "worktreeSharing", "recall_mode": "recallMode", "writeback_mode": "writebackMode",
                  "secrets": "secrets", "hand_edits": "handEdits"}


def misplaced_settings(argv: list[str], parser: argparse.ArgumentParser) -> str | None:
    """The usage error of settings flags typed before the command (``mnemon-ls --scope global runtime list``), which
    argparse answers with a misleading refusal of ``global`` as ``COMMAND`` (``must be one of ...``) or
    ``unrecognized arguments: --json`` pointing at a ``--help`` that lists ``--json``: the first such flag, then
    the same command with the flags moved behind it (``--scope: goes after the command: mnemon-ls runtime list
    --scope global``). ``None``
    when ``argv`` (without the program name) starts with no flag of :func:`settings_parent`, or the words after
    them are not a command of ``parser`` that takes the flags (``serve`` takes none)."""
    import shlex

    flags = {name: action for action in settings_parent()._actions for name in action.option_strings}
    commands = next((a.choices for a in parser._actions if isinstance(a, argparse._SubParsersAction)), {})
    index = 0
    while index < len(argv) and argv[index].split("=", 1)[0] in flags:
        takes_value = flags[argv[index].split("=", 1)[0]].nargs != 0 and "=" not in argv[index]
        index += 2 if takes_value else 1
    if index == 0 or index >= len(argv) or argv[index] not in commands or argv[index] == "serve":
        return None
    moved = [*argv[index:], *argv[:index]]
    return f"{argv[0].split('=', 1)[0]}: goes after the command: {shlex.join(['mnemon-ls', *moved])}"


def chosen_parsers(parser: argparse.ArgumentParser, args: argparse.Namespace) -> Iterator[argparse.ArgumentParser]:
    """``parser``, then each sub-command parser ``args`` went through (``mnemon-ls``, ``mnemon-ls space``,
    ``mnemon-ls space list``)."""
    current: argparse.ArgumentParser | None = parser
    while current is not None:
        yield current
        following = None
        for action in current._actions:
            if isinstance(action, argparse._SubParsersAction):
                following = action.choices.get(getattr(args, action.dest, None) or "")
        current = following


#: How argparse begins the error of a required argument not given.
_REQUIRED = "the following arguments are required: "


class _Refused(Exception):
    """An error met while :class:`Parser` looks for unrecognized arguments behind a missing required one."""


#: argparse's error about one argument: ``argument --revision: <rule>`` (its option strings joined by ``/``).
_ABOUT = re.compile(r"argument (\S+): (.*)", re.S)


def error_field(message: str) -> str | None:
    """The argument a usage error of :class:`Parser` is about, as typed or as the usage line shows it (the
    ``--json`` error's ``field``): the first unrecognized option without a value it was typed with (``--frob``,
    ``--frob=1``: ``--frob``), the first required argument missing (``--content``, ``FILE``), the argument a value
    was refused for (``--revision``, ``COMMAND``);
    ``None`` when the message names none."""
    for lead in ("unrecognized arguments: ", _REQUIRED):
        if message.startswith(lead):
            words = message[len(lead):].split(";")[0].replace(",", " ").split()
            return next((w.split("=", 1)[0] for w in words if w.startswith("-")), words[0] if words else None)
    about = _ABOUT.fullmatch(message)
    if about is not None:
        return max(about.group(1).split("/"), key=len)
    first = message.split(" ", 1)[0].removesuffix(":")
    return first if first.startswith("--") else None


def abbreviation_hint(message: str, parser: argparse.ArgumentParser) -> str:
    """``message`` (a usage error of ``parser``) with, when it begins ``unrecognized arguments: `` and the first
    unrecognized option is the start of options of ``parser``, those options named after that list (at most
    three): ``unrecognized arguments: --rev 2; did you mean --revision? (an option is never abbreviated)``.
    Otherwise ``message`` unchanged."""
    lead = "unrecognized arguments: "
    if not message.startswith(lead):
        return message
    listed, semicolon, rest = message[len(lead):].partition(";")
    typed = next((w.split("=", 1)[0] for w in listed.split() if w.startswith("--") and len(w) > 2), None)
    if typed is None:
        return message
    names = sorted(o for o in parser._option_string_actions if o.startswith(typed) and o != typed)
    if not names:
        return message
    hint = f"; did you mean {' or '.join(names[:3])}? (an option is never abbreviated)"
    return f"{lead}{listed}{hint}{semicolon}{rest}"


#: Where :class:`_StoreOnce` notes, in the namespace being filled, the options already given (removed by
#: :meth:`Parser.parse_known_args`, as argparse removes its own note of unrecognized arguments).
_GIVEN = "_mnemon_given_options"


class _StoreOnce(argparse._StoreAction):
    """argparse's ``store`` (the action of an option that takes one value), but an option given a second time is
    refused (``--limit: given twice; give it once``) instead of the last value silently winning. Options meant to
    repeat use ``append`` (``--tag``, ``--cite``) and are not this action. An option whose one value is a list
    joined by commas (its metavar has one: ``--drop N,M``) is told how to give several: ``--drop: given twice;
    give it once (several as one list: --drop 1,2)``, the values typed joined."""

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace, values: Any,
                 option_string: str | None = None) -> None:
        if self.option_strings:
            given = vars(namespace).setdefault(_GIVEN, set())
            if id(self) in given:
                flag, hint = max(self.option_strings, key=len), ""
                if isinstance(self.metavar, str) and "," in self.metavar:
                    before = getattr(namespace, self.dest, None)
                    hint = f" (several as one list: {flag} {before},{values})"
                parser.error(f"{flag}: given twice; give it once{hint}")
            given.add(id(self))
        super().__call__(parser, namespace, values, option_string)


#: argparse's rule of an option left without its value (``expected one argument``, ``expected at least one
#: argument``): a value starting with ``-`` is read as an option (:meth:`Parser.dash_hint`).
_EXPECTED = re.compile(r"expected (?:one|at least one) argument")


class Parser(argparse.ArgumentParser):
    """argparse with one-line usage errors (``mnemon-ls: error: <message>``, exit 2), like every other error;
    each points at the ``--help`` of the command it is about (an unrecognized argument of ``mnemon-ls space list``
    at ``mnemon-ls space list --help``). A mistyped option is named before a required one it left missing
    (``runtime add --contnet y``: ``unrecognized arguments: --contnet y; the following arguments are required:
    --content``), where argparse reports only the missing one. An option is never read from a prefix of it
    (``--conten`` is not ``--content``: ``allow_abbrev`` is off, also for every sub-command's parser, which
    argparse makes of this class). An option of one value given twice is refused (:class:`_StoreOnce`). A value
    refused by the argument's type or choices reads as every rule does (``--limit: must be an integer in 1..50
    (got 'x')``, :func:`integer_type`; ``--secrets: must be one of redact, reject, allow (got 'x')``); an option
    left without its value because the value starts with ``-`` is told to write ``--title=-x``
    (:meth:`dash_hint`). With ``--json`` the error object names the argument in ``field`` (:func:`error_field`),
    its ``rule``, and for a refused value the ``value`` typed (escaped, :func:`mnemon_ls.errors.echo_value`) and
    ``param``, the operation's field the argument gives (an action's ``param``, set by
    :func:`mnemon_ls.cli.ops.add_parser`), as an error of the operation has them."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("allow_abbrev", False)
        super().__init__(*args, **kwargs)
        self.register("action", None, _StoreOnce)
        self.register("action", "store", _StoreOnce)

    #: While true, :meth:`error` raises :class:`_Refused` instead of printing (:meth:`_unrecognized`).
    _probing = False
    #: The arguments this parser was last given (:meth:`parse_known_args`), for :meth:`_unrecognized`.
    _given: list[str] | None = None
    #: ``(action, value as typed)`` of the value the last parse refused (its type or choices), for :meth:`error`.
    _refused: tuple[argparse.Action, Any] | None = None

    def parse_known_args(self, args: Any = None, namespace: Any = None) -> Any:  # type: ignore[override]
        """argparse's, remembering ``args`` in case a required argument turns out missing (:meth:`error`)."""
        self._given = sys.argv[1:] if args is None else list(args)
        self._refused = None
        parsed, extras = super().parse_known_args(self._given, namespace)
        vars(parsed).pop(_GIVEN, None)
        return parsed, extras

    def _get_value(self, action: argparse.Action, arg_string: str) -> Any:
        """argparse's, noting the text a type refused (the ``value`` of the ``--json`` error)."""
        try:
            return super()._get_value(action, arg_string)
        except argparse.ArgumentError:
            self._refused = (action, arg_string)
            raise

    def _check_value(self, action: argparse.Action, value: Any) -> None:
        """A value not among ``action``'s choices, refused in the project's words: ``must be one of a, b, c (got
        'x')`` (argparse's own: ``invalid choice: 'x' (choose from 'a', 'b', 'c')``)."""
        if action.choices is not None and value not in action.choices:
            from ..errors import echo_repr

            self._refused = (action, value)
            choices = ", ".join(map(str, action.choices))
            raise argparse.ArgumentError(action, f"must be one of {choices} (got {echo_repr(value)})")

    def dash_hint(self, options: list[str]) -> str:
        """The hint of an option (one of ``options``) left without its value because the word after it starts with
        ``-`` and so reads as an option: ``; to give a value that starts with -, write --title=-x`` (the word
        after it as typed, quoted for a shell when it needs it); ``""`` when no such word follows the option, or
        the word is an option of this command (``--title --content x``: the title was left out)."""
        import shlex

        given = self._given or []
        for word, following in zip(given, given[1:]):
            known = following.split("=", 1)[0] in self._option_string_actions
            if word in options and following.startswith("-") and not known:
                return f"; to give a value that starts with -, write {shlex.quote(f'{word}={following}')}"
        return ""

    def _unrecognized(self) -> list[str]:
        """The arguments no parser takes among those this parser was given, found by parsing them again with no
        argument required; ``[]`` when none looks like an option or that parse meets another error."""
        given, required = list(self._given or ()), [a for a in self._actions if a.required]
        Parser._probing = True
        for action in required:
            action.required = False
        try:
            _parsed, extras = super().parse_known_args(given, argparse.Namespace())
        except _Refused:
            extras = []
        finally:
            Parser._probing = False
            for action in required:
                action.required = True
        return extras if any(e.startswith("-") and e != "-" for e in extras) else []

    def parse_args(self, args: Any = None, namespace: Any = None) -> Any:  # type: ignore[override]
        """argparse's, but arguments no parser took are refused by the command they were given to, and settings
        flags typed before the command are named as such (:func:`misplaced_settings`)."""
        misplaced = misplaced_settings(sys.argv[1:] if args is None else list(args), self)
        if misplaced is not None:
            self.error(misplaced)
        parsed, extras = self.parse_known_args(args, namespace)
        if extras:
            *_, chosen = chosen_parsers(self, parsed)
            chosen.error(f"unrecognized arguments: {' '.join(extras)}")
        return parsed

    def _worded(self, message: str) -> tuple[str, dict[str, Any]]:
        """argparse's ``argument --limit: <rule>`` of a value refused or missing, as every rule reads (``--limit:
        <rule>``; a missing value with :meth:`dash_hint`), with the ``value`` and ``param`` of the ``--json``
        error (:class:`Parser`); any other message unchanged, with ``{}``."""
        from ..errors import echo_value

        refused, self._refused = self._refused, None
        about = _ABOUT.fullmatch(message)
        if about is None or not about.group(2).startswith(("must ", "expected ")):
            return message, {}
        options, rule = about.group(1).split("/"), about.group(2)
        if _EXPECTED.fullmatch(rule):
            rule += self.dash_hint(options)
        extra: dict[str, Any] = {}
        if refused is not None:
            extra["value"] = echo_value(refused[1])
        action = refused[0] if refused is not None else self._option_string_actions.get(options[0])
        if isinstance(getattr(action, "param", None), str):
            extra["param"] = action.param  # type: ignore[union-attr]
        return f"{max(options, key=len)}: {rule}", extra

    def error(self, message: str) -> None:  # type: ignore[override]
        """Print one line and exit 2 (argparse's own usage block is not printed); what was typed is repeated
        escaped and the message cut at 512 characters (:func:`mnemon_ls.errors.echo_value`)."""
        from ..errors import echo_value

        if Parser._probing:
            raise _Refused(message)
        if message.startswith(_REQUIRED):
            extras = self._unrecognized()
            if extras:
                message = f"unrecognized arguments: {' '.join(extras)}; {message}"
        message = abbreviation_hint(message, self)
        field = error_field(message)
        message, extra = self._worded(message)
        message = echo_value(message, 512)
        print(f"mnemon-ls: error: {message} (see `{self.prog} --help`)", file=sys.stderr)
        if "--json" in sys.argv[1:]:
            error = {"code": "invalid-input", "message": message}
            if field is not None:
                error["field"] = echo_value(field, 256)
                if message.startswith(f"{field}: "):  # a rule of the argument, as a range error has it
                    error["rule"] = message[len(field) + 2:]
                    error.update(extra)
                elif message.startswith(_REQUIRED):
                    error["rule"] = "is required"
                elif message.startswith("unrecognized arguments: "):
                    error["rule"] = f"is not an argument of `{self.prog}`"
            sys.stdout.write(json.dumps({"error": error}) + "\n")
        raise SystemExit(EXIT_INVALID)


def add_mcp_parser(commands: Any, common: argparse.ArgumentParser) -> argparse.ArgumentParser:
    """Add the ``mcp`` command to the ``commands`` subparsers (``common``: the settings flags)."""
    mcp = commands.add_parser("mcp", parents=[common],
                              help="run the MCP server (stdio) for assistants outside the editor")
    mcp.add_argument("--read-only", action="store_true", help="offer only the read tools (writeEnabled=false)")
    return mcp

