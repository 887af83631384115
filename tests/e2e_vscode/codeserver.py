"""One private code-server for a test session: its own HOME, user-data-dir, extensions-dir and config,
bound to 127.0.0.1 on a free port, with nothing that reaches outside the machine.

Network: the extension gallery is switched off (``EXTENSIONS_GALLERY={}``: no service URL, so VS Code's
gallery service is disabled), telemetry and the update check are off (flags and user settings), the
workspace trust prompt is off, and the user settings disable experiments, recommendations, online npm
lookups and the AI chat features. Webviews are served by code-server itself.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import threading
from pathlib import Path
from typing import IO, Any

#: The extension's id in the marketplace sense: ``<publisher>.<name>`` of editors/vscode/package.json.
EXTENSION_ID = "mnemon.mnemon-ls"
#: Longest wait for code-server to print its address (it needs about 1 s; the first start of a machine more).
START_SECONDS = 90.0
_LISTENING = re.compile(r"HTTP server listening on (http://127\.0\.0\.1:\d+)/")

#: User settings written before code-server starts (it does not pick up an outside write quickly).
BASE_SETTINGS: dict[str, Any] = {
    "telemetry.telemetryLevel": "off",
    "update.mode": "none",
    "extensions.autoCheckUpdates": False,
    "extensions.autoUpdate": False,
    "extensions.ignoreRecommendations": True,
    "workbench.enableExperiments": False,
    "workbench.startupEditor": "none",
    "workbench.tips.enabled": False,
    "workbench.secondarySideBar.defaultVisibility": "hidden",
    "chat.disableAIFeatures": True,
    "npm.fetchOnlinePackageInfo": False,
    "security.workspace.trust.enabled": False,
    "git.autofetch": False,
    "git.openRepositoryInParentFolders": "never",
    "editor.minimap.enabled": False,
    "workbench.view.alwaysShowHeaderActions": True,
    "workbench.editor.useModal": "off",  # Settings as an editor tab (a modal one would swallow F1)
    "window.restoreWindows": "none",
    "files.hotExit": "off",
}


class CodeServer:
    """A code-server under ``base`` (created here): ``home``, ``user_data``, ``extensions``, ``log_path``.

    ``env`` is the environment of every code-server process (and so of the extension host and the
    mnemon-ls server it starts): HOME and the XDG directories under ``home``, no ``GIT_*``/``MNEMON_*``.
    """

    def __init__(self, executable: Path, base: Path, settings: dict[str, Any]) -> None:
        self.executable = executable
        self.base = base
        self.home = base / "home"
        self.user_data = base / "user-data"
        self.extensions = base / "extensions"
        self.log_path = base / "code-server.log"
        for path in (self.home, self.user_data / "User", self.extensions):
            path.mkdir(parents=True, exist_ok=True)
        (self.user_data / "User" / "settings.json").write_text(json.dumps({**BASE_SETTINGS, **settings}, indent=2))
        self.env = {k: v for k, v in os.environ.items() if not k.startswith(("GIT_", "MNEMON_", "VSCODE_", "XDG_"))}
        self.env.update(
            HOME=str(self.home),
            XDG_CONFIG_HOME=str(self.home / ".config"),
            XDG_DATA_HOME=str(self.home / ".local" / "share"),
            XDG_CACHE_HOME=str(self.home / ".cache"),
            EXTENSIONS_GALLERY="{}",
            PYTHONUNBUFFERED="1",
        )
        self.url: str | None = None
        self._proc: subprocess.Popen[str] | None = None
        self._pump: threading.Thread | None = None

    def _common(self) -> list[str]:
        return ["--user-data-dir", str(self.user_data), "--extensions-dir", str(self.extensions),
                "--config", str(self.base / "code-server.yaml")]

    def cli(self, *args: str, timeout: float = 180.0) -> subprocess.CompletedProcess[str]:
        """Run ``code-server <args>`` with this session's directories (e.g. ``--install-extension X``)."""
        return subprocess.run([str(self.executable), *args, *self._common()], env=self.env, cwd=str(self.base),
                              capture_output=True, text=True, timeout=timeout)

    def start(self, folder: Path) -> str:
        """Start serving ``folder``; returns the base URL once code-server prints it (raises RuntimeError
        with the log's tail when it exits or stays silent for :data:`START_SECONDS`)."""
        args = [str(self.executable), "--auth", "none", "--bind-addr", "127.0.0.1:0", "--disable-telemetry",
                "--disable-update-check", "--disable-workspace-trust", "--disable-getting-started-override",
                *self._common(), str(folder)]
        self._proc = subprocess.Popen(args, env=self.env, cwd=str(self.base), stdin=subprocess.DEVNULL,
                                      stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                                      start_new_session=True)
        found = threading.Event()
        log = self.log_path.open("a", encoding="utf-8")
        assert self._proc.stdout is not None
        self._pump = threading.Thread(target=self._copy_log, args=(self._proc.stdout, log, found), daemon=True)
        self._pump.start()
        if not found.wait(START_SECONDS) or self.url is None:
            self.stop()
            raise RuntimeError(f"code-server did not start (log {self.log_path}):\n{self.log_tail()}")
        return self.url

    def _copy_log(self, stream: IO[str], log: IO[str], found: threading.Event) -> None:
        with log:
            for line in stream:
                log.write(line)
                log.flush()
                match = _LISTENING.search(line)
                if match and self.url is None:
                    self.url = match.group(1)
                    found.set()
        found.set()  # EOF: the process ended (start() then reports the log)

    def log_tail(self, lines: int = 40) -> str:
        """The last ``lines`` lines of the code-server log (empty when there is none yet)."""
        if not self.log_path.exists():
            return ""
        return "\n".join(self.log_path.read_text(encoding="utf-8", errors="replace").splitlines()[-lines:])

    def stop(self) -> None:
        """Stop code-server and everything it started (its own process group: extension host, mnemon-ls)."""
        proc, self._proc = self._proc, None
        if proc is None:
            return
        if proc.poll() is None:
            os.killpg(proc.pid, 15)
            try:
                proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, 9)
                proc.wait(timeout=20)
        if self._pump is not None:
            self._pump.join(timeout=20)


def mnemon_cli(server: CodeServer, workspace: Path, *args: str) -> Any:
    """``python -m mnemon_ls <args> --workspace <workspace> --json`` with the code-server session's HOME (so
    it finds the store the editor wrote: the default ``workspaces`` scope lives under ``~/.mnemon``); the
    parsed JSON output. Raises AssertionError with stderr when the command fails."""
    proc = subprocess.run([sys.executable, "-m", "mnemon_ls", *args, "--workspace", str(workspace), "--json"],
                          cwd=str(workspace), env=server.env, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, f"mnemon-ls {' '.join(args)} exited with {proc.returncode}: {proc.stderr}"
    return json.loads(proc.stdout)
