"""``mnemon-ls hook EVENT``: what an assistant's lifecycle hook prints into the model's context.

``session-start`` prints the bounded wake snapshot (:data:`HOOK_WAKE_BUDGET` characters), ``prompt`` a one-line
recall/writeback cue (:func:`recall_cue`); ``--json`` wraps either in the hook JSON Claude Code and Codex read
(:func:`hook_output`). Hooks never fail the assistant's turn: an error is one line on stderr and exit 0.

The client stops a hook after :data:`~mnemon_ls.hookspec.HOOK_TIMEOUT_SECONDS` (``mnemon-ls setup`` writes that
timeout), and a session that starts without its memory tells nobody. So ``session-start`` gives the wake a deadline
measured from the process's start (:data:`HOOK_BUDGET_MS` milliseconds, ``MNEMON_HOOK_BUDGET_MS`` to change it): the
wake runs in a worker thread, and when it is not done by then the hook prints what is ready without it, USER.md and
MEMORY.md as they are on disk (read without a lock, as any reader of the projections does), with a line saying what was
left out (:func:`partial_text`), and a line on stderr; the worker is abandoned (a daemon thread: the process ends when
the hook has answered; every write it might be doing is atomic).

Light: the hook runs at every prompt a person types, so this module and what ``prompt`` needs import no
pydantic, no operation registry, no pygit2 and no Source (``tests/cli/test_hooks.py`` checks it).
"""

from __future__ import annotations

import json
import os
import sys
import time

from ..errors import EXIT_OK, InvalidInput, MnemonError
from ..hookspec import HOOK_TIMEOUT_SECONDS

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (the hook runs at every prompt)
if TYPE_CHECKING:
    import argparse
    from typing import Any

#: Characters of wake snapshot a SessionStart hook prints at most.
HOOK_WAKE_BUDGET = 12_000
#: Milliseconds from the hook process's start after which ``session-start`` answers without the full wake:
#: the rest of the client's timeout is left for printing and for a machine so loaded that it is slow at that too.
HOOK_BUDGET_MS = 7_000
#: The environment variable that changes :data:`HOOK_BUDGET_MS` (0..``HOOK_TIMEOUT_SECONDS`` x 1000).
BUDGET_VARIABLE = "MNEMON_HOOK_BUDGET_MS"
#: The hook event each ``mnemon-ls hook`` verb answers (``hookSpecificOutput.hookEventName`` of ``--json``).
HOOK_EVENT_NAMES = {"session-start": "SessionStart", "prompt": "UserPromptSubmit"}


def add_hook_parser(commands: Any, common: argparse.ArgumentParser) -> argparse.ArgumentParser:
    """Add the ``hook`` command to the ``commands`` subparsers (``common``: the settings flags)."""
    hook = commands.add_parser("hook", parents=[common],
                               help="run an assistant lifecycle hook (reads the hook's JSON on stdin)",
                               description="Print what an assistant's lifecycle hook adds to the model's context: "
                                           "session-start the wake snapshot, prompt a one-line recall/writeback cue. "
                                           "--json prints it as hook JSON ({\"hookSpecificOutput\": "
                                           "{\"hookEventName\", \"additionalContext\"}}), which Codex needs.")
    hook.add_argument("event", choices=("session-start", "prompt"))
    return hook


def recall_cue(recall_mode: str, writeback_mode: str) -> str:
    """The one-line cue a ``UserPromptSubmit`` hook prints for a new turn (empty when both modes are off)."""
    parts = []
    if recall_mode == "guided":
        parts.append("if older decisions may matter, recall them (mnemon_recall, mnemon_document_search)")
    if writeback_mode == "guided":
        parts.append("save durable facts the user would want kept (mnemon_runtime_memory, mnemon_remember); "
                     "never secrets, temporary progress or raw logs")
    return f"[mnemon] Memory: {'; '.join(parts)}." if parts else ""


def hook_output(event: str, text: str, as_json: bool) -> str:
    """What ``mnemon-ls hook EVENT`` prints for the context ``text``: the text and a newline, or with
    ``as_json`` the hook JSON Claude Code and Codex both read, ``{"hookSpecificOutput": {"hookEventName":
    "SessionStart"|"UserPromptSubmit", "additionalContext": text}}`` (Codex takes plain output that starts
    with ``[`` or ``{`` for broken JSON). Empty ``text``: nothing at all (no context to add)."""
    if not text:
        return ""
    if not as_json:
        return text + "\n"
    return json.dumps({"hookSpecificOutput": {"hookEventName": HOOK_EVENT_NAMES[event], "additionalContext": text}},
                      ensure_ascii=False) + "\n"


def cmd_hook(args: argparse.Namespace) -> int:
    """``mnemon-ls hook session-start|prompt [--json]``: read the hook's JSON on stdin (its ``cwd`` is the
    workspace unless ``--workspace`` or ``CLAUDE_PROJECT_DIR`` says otherwise) and print the event's context
    (module doc). Never fails the assistant's turn: errors go to stderr, exit 0."""
    from .common import settings_from

    try:
        payload = json.loads(sys.stdin.read() or "{}") if not sys.stdin.isatty() else {}
    except ValueError:  # not JSON (or a number past Python's digit limit), not UTF-8: fail open
        payload = {}
    cwd = payload.get("cwd") if isinstance(payload, dict) and isinstance(payload.get("cwd"), str) else None
    if args.workspace is None:
        args.workspace = os.environ.get("CLAUDE_PROJECT_DIR") or cwd
    try:
        as_json = bool(getattr(args, "json", False))
        if args.event == "prompt":
            settings = settings_from(args)
            sys.stdout.write(hook_output("prompt", recall_cue(settings.recall_mode, settings.writeback_mode), as_json))
            return EXIT_OK
        sys.stdout.write(hook_output("session-start", session_start(args, budget_ms()), as_json))
    except (MnemonError, OSError) as exc:
        print(f"mnemon-ls hook: {getattr(exc, 'message', exc)}", file=sys.stderr)
    return EXIT_OK


def budget_ms(env: Any = None) -> int:
    """The ``session-start`` deadline in milliseconds from the process's start: :data:`BUDGET_VARIABLE` when
    set (an integer 0..``HOOK_TIMEOUT_SECONDS`` x 1000, else :class:`InvalidInput` naming it), else
    :data:`HOOK_BUDGET_MS`."""
    value = (os.environ if env is None else env).get(BUDGET_VARIABLE, "").strip()
    if not value:
        return HOOK_BUDGET_MS
    limit = HOOK_TIMEOUT_SECONDS * 1000
    if not value.isdigit() or int(value) > limit:
        raise InvalidInput(BUDGET_VARIABLE, f"must be an integer 0..{limit} (milliseconds; got {value[:20]!r})")
    return int(value)


def seconds_since_start() -> float:
    """Seconds since this process started (Linux: ``/proc/self/stat`` against ``CLOCK_BOOTTIME``, so the
    interpreter's own start-up counts). 0.0 where that cannot be read, and for a process older than the
    client's hook timeout: the client did not start it for this hook (it would have stopped it by now), so the
    hook runs inside a longer-lived program (a test, an embedding) and its deadline counts from the call."""
    try:
        with open("/proc/self/stat", "rb") as fh:
            fields = fh.read().rsplit(b")", 1)[1].split()
        started = int(fields[19]) / os.sysconf("SC_CLK_TCK")  # field 22 of stat(5), counted after the name
        elapsed = time.clock_gettime(time.CLOCK_BOOTTIME) - started
    except (OSError, ValueError, IndexError, AttributeError):
        return 0.0
    return elapsed if 0.0 <= elapsed < HOOK_TIMEOUT_SECONDS else 0.0


def session_start(args: argparse.Namespace, budget: int) -> str:
    """The context of a ``SessionStart`` hook: the wake snapshot of the workspace (within
    :data:`HOOK_WAKE_BUDGET` characters), or, when it is not ready ``budget`` ms after the process started,
    :func:`partial_text` (at once, no wake started, when that time has already passed: a ``budget`` of 0 always
    answers the fallback). Raises what resolving the settings and the storage root raises."""
    import threading

    from .common import root_flags_named, settings_from, workspace_of
    from ..roots import resolve_root
    from ..roots_safety import confine_roots

    settings = settings_from(args)
    workspace = workspace_of(args)
    # read-only and quick: the fallback needs its paths
    resolution = root_flags_named(args, lambda: resolve_root(workspace, settings))
    done = threading.Event()
    result: dict[str, Any] = {}

    def wake() -> None:
        try:
            from ..host import WorkspaceHost

            host = WorkspaceHost(workspace, settings, one_shot=True)
            try:
                host.hold_pack_gate()
                snapshot, _ = host.wake(budget_chars=HOOK_WAKE_BUDGET, surface="tool")
                result["text"] = snapshot.text
            finally:
                host.close()
        except BaseException as exc:  # handed to the hook's thread, which reports it
            result["error"] = exc
        finally:
            done.set()

    remaining = budget / 1000 - seconds_since_start()
    if remaining > 0:  # no time left (a budget of 0, a slow start): the fallback, whatever a wake thread would do
        threading.Thread(target=wake, name="mnemon-hook-wake", daemon=True).start()
        if done.wait(remaining):
            if "error" in result:
                raise result["error"]
            return result["text"]
    confine_roots(resolution)
    print(f"mnemon-ls hook: the wake snapshot was not ready {budget} ms after this hook started; it printed USER.md "
          "and MEMORY.md as they are on disk instead", file=sys.stderr)
    return partial_text(resolution, budget, secrets=settings.secrets)


def partial_text(resolution: Any, budget: int, limit: int = HOOK_WAKE_BUDGET, *, secrets: str = "redact") -> str:
    """What ``session-start`` prints when the wake is not ready in time: a header, the line saying what was
    left out, and USER.md / MEMORY.md of ``resolution``'s roots as they are on disk (read through the confined
    store reads of :mod:`mnemon_ls.fsio`; an unreadable one is named), within ``limit`` characters.

    The projections mirror ``memories.json`` byte for byte, so they hold what another program stored there: unless
    ``secrets`` (the setting) is ``allow``, each value that looks like a credential is printed as its placeholder
    (``[redacted:<kind>]``, :func:`mnemon_ls.redact.redact_text`, as the wake shows it) and a line after the file
    counts them; the files are not touched. A tag in the files that would open or close the wrapper
    (``</runtime-memory-file>``) is neutralised (:func:`~mnemon_ls.runtime.snapshot.neutralise_wrapper_tags`), as in
    the wake."""
    from .. import fsio
    from ..runtime.snapshot import neutralise_wrapper_tags

    head = ("MNEMON RUNTIME MEMORY (PARTIAL)\n"
            f"Left out: the wake snapshot was not ready {budget} ms after this hook started (the client stops a hook "
            f"after {HOOK_TIMEOUT_SECONDS} s), so USER.md and MEMORY.md follow as they are on disk: not filtered to "
            "the current git branch (MEMORY.md holds every branch's entries), without annotations, hand edits not "
            "yet imported; the Documents and Memory Spaces covers and pending record proposals are left out. Call "
            "mnemon_wake for the full snapshot.\n")
    parts = [head]
    room = limit - len(head)
    for name, root in (("USER.md", resolution.user_root), ("MEMORY.md", resolution.root)):
        path = root / "runtime" / name
        try:
            data = fsio.read_bytes_or_none(path)
            body = "" if data is None else data.decode("utf-8", "replace").rstrip("\n")
        except (MnemonError, OSError) as exc:
            body = f"(not readable: {getattr(exc, 'message', exc)})"
        body = neutralise_wrapper_tags(body)  # the files' content never closes the tag wrapping it
        closing = "\n</runtime-memory-file>\n"
        if secrets != "allow" and body:
            from ..redact import redact_text  # the fallback only: the wake's path never imports the pass

            body, matches = redact_text(body)
            if matches:
                many = len(matches) != 1
                closing += (f"({len(matches)} value{'s' if many else ''} in {name} that "
                            f"{'look' if many else 'looks'} like a credential another program stored "
                            f"{'are' if many else 'is'} shown redacted; the file is unchanged: "
                            f"`mnemon-ls redact --apply` replaces {'them' if many else 'it'})\n")
        opening = f"\nContents of {name} (as on disk)\n<runtime-memory-file name=\"{name}\">\n"
        space = room - len(opening) - len(closing)
        if space <= 0:
            break
        if len(body) > space:
            marker = "\n[... cut: the hook's context is full]"
            body = body[:max(0, space - len(marker))] + marker
        block = opening + body + closing
        parts.append(block)
        room -= len(block)
    return "".join(parts).rstrip("\n")
