"""Which files a memory file's ``@path`` imports may be read: the approval step and the credential locations.

Claude Code asks a person to approve the first time a project's memory imports files outside the project. An
import does the same (:func:`.found.read_all`): a file one of the source's files imports (Claude Code's ``@path``,
:func:`.claude_code.follow`) whose real path is outside the *trusted* directories (:func:`trusted_roots`: the
repository, the directories the source's own files were found in, and the user's Claude home ``~/.claude`` or
``$CLAUDE_CONFIG_DIR``) is listed in the plan as needing approval and not read, unless the caller passes
``allowOutside`` (``--allow-outside``). A credential location (:func:`credential_rule`: ``~/.ssh``, ``~/.aws``,
``~/.gnupg``, ``/etc/shadow``, a private key's name, ...) is never read, with or without it: refused, naming the
path and the rule.
"""

from __future__ import annotations

import os
from pathlib import Path, PurePosixPath
from typing import Iterable, Mapping

from .formats import home

#: Directories (a component of the path, wherever it is: ``HOME=/`` makes ``~/`` the root) that hold credentials,
#: and what they hold.
CREDENTIAL_DIRS = {".ssh": "SSH keys", ".aws": "AWS credentials", ".gnupg": "GnuPG keys",
                   ".azure": "Azure credentials", ".kube": "Kubernetes credentials",
                   ".docker": "Docker registry credentials", ".password-store": "a password store",
                   ".config/gcloud": "Google Cloud credentials", ".config/gh": "GitHub CLI tokens"}
#: File names that hold credentials (wherever they are).
CREDENTIAL_FILES = {".netrc": "login passwords", ".pgpass": "PostgreSQL passwords",
                    ".git-credentials": "git passwords", ".npmrc": "npm tokens", ".pypirc": "PyPI tokens",
                    ".vault-token": "a Vault token", "id_rsa": "an SSH private key", "id_dsa": "an SSH private key",
                    "id_ecdsa": "an SSH private key", "id_ed25519": "an SSH private key"}
#: File name endings of keys and key stores.
CREDENTIAL_SUFFIXES = {".pem": "a key or certificate", ".key": "a private key", ".p12": "a key store",
                       ".pfx": "a key store", ".kdbx": "a password database"}
#: System files and directories that hold credentials or are no files at all (``/proc``), by absolute path
#: (``/private`` before them on macOS is the same place).
SYSTEM_PLACES = {"/etc/shadow": "the password hashes", "/etc/shadow-": "the password hashes",
                 "/etc/gshadow": "the group password hashes", "/etc/gshadow-": "the group password hashes",
                 "/etc/master.passwd": "the password hashes", "/etc/sudoers": "the sudo rules",
                 "/etc/sudoers.d": "the sudo rules", "/etc/ssh": "the SSH host keys",
                 "/etc/ssl/private": "TLS private keys", "/proc": "process memory and environments",
                 "/sys": "kernel state", "/dev": "devices"}


def credential_rule(path: Path) -> str | None:
    """Why ``path`` (absolute; checked as written and, by the caller, as its real path) is a credential location
    never read, or None: ``a system credential location (/etc/shadow holds the password hashes)``, ``a credential
    location (.ssh holds SSH keys)``, ``a credential file (id_rsa holds an SSH private key)``."""
    posix = PurePosixPath(os.path.normpath(str(path)))
    text = str(posix).removeprefix("/private")
    for place, what in SYSTEM_PLACES.items():
        if text == place or text.startswith(place + "/"):
            return f"a system credential location ({place} holds {what})"
    parts = posix.parts
    for name, what in CREDENTIAL_DIRS.items():
        want = tuple(name.split("/"))
        if any(parts[i:i + len(want)] == want for i in range(len(parts) - len(want) + 1)):
            return f"a credential location ({name} holds {what})"
    if posix.name in CREDENTIAL_FILES:
        return f"a credential file ({posix.name} holds {CREDENTIAL_FILES[posix.name]})"
    if posix.suffix.lower() in CREDENTIAL_SUFFIXES:
        return f"a credential file (a {posix.suffix.lower()} file holds {CREDENTIAL_SUFFIXES[posix.suffix.lower()]})"
    return None


def claude_home(env: Mapping[str, str]) -> Path:
    """The user's Claude home: ``$CLAUDE_CONFIG_DIR``, else ``~/.claude`` (``HOME`` of ``env``)."""
    return Path(env["CLAUDE_CONFIG_DIR"]) if env.get("CLAUDE_CONFIG_DIR") else home(env) / ".claude"


def real(path: Path) -> Path:
    """``path``'s real path (symlinks followed), or ``path`` normalised when it cannot be resolved (a loop)."""
    try:
        return path.resolve()
    except (OSError, RuntimeError):
        return Path(os.path.normpath(path))


def trusted_roots(workspace: Path | None, bases: Iterable[Path], env: Mapping[str, str]) -> list[Path]:
    """The directories an import reads from without approval (module doc), as real paths, without repeats:
    ``workspace`` (the repository; None: none), ``bases`` (where the source's own files were found: the workspace,
    the auto memory directory, the directory ``--from`` names) and :func:`claude_home`."""
    roots = [*([workspace] if workspace is not None else []), *bases, claude_home(env)]
    return list(dict.fromkeys(real(r) for r in roots))


def is_trusted(path: Path, roots: list[Path]) -> bool:
    """Whether ``path``'s real path (:func:`real`) is inside one of ``roots`` (:func:`trusted_roots`)."""
    resolved = real(path)
    return any(resolved == r or r in resolved.parents for r in roots)


def approval_reason(roots: list[Path]) -> str:
    """Why a file outside ``roots`` is not read (the plan's ``needsApproval[].reason``)."""
    return (f"is outside the repository and your Claude home ({', '.join(str(r) for r in roots)}): Claude Code "
            "asks you to approve such an import the first time, so it is not read unless you allow files outside "
            "(--allow-outside, allowOutside); credential locations are never read")
