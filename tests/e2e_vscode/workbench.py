"""Driving the VS Code workbench in the browser, the way a person does: keys, the command palette,
quick picks, notifications, the status bar. Every wait is on a DOM condition (Playwright's auto-waiting
locators and ``expect``), bounded by a timeout in milliseconds; nothing sleeps.

Selectors are VS Code's own DOM classes (``.quick-input-widget``, ``.notification-toast``, ``.statusbar-item``,
``.monaco-list-row``), stable across VS Code 1.9x-1.13x.
"""

from __future__ import annotations

import re
from pathlib import Path

from playwright.sync_api import Locator, Page, expect

#: Default wait for something the mnemon-ls server has to answer (a request, a notification), in ms.
SERVER_MS = 30_000
#: Default wait for the UI itself (a palette opening, a row appearing), in ms.
UI_MS = 15_000
#: The Mnemon status bar item: ``<publisher>.<name>.<item id>`` (src/status.ts creates ``mnemon.status``).
STATUS_ITEM_ID = "mnemon.mnemon-ls.mnemon.status"


def exact(text: str) -> re.Pattern[str]:
    """A pattern matching exactly ``text`` (after trimming)."""
    return re.compile(rf"^\s*{re.escape(text)}\s*$")


class Workbench:
    """One VS Code window in ``page``; ``workspace`` is the folder it has open (a path on this machine)."""

    def __init__(self, page: Page, workspace: Path) -> None:
        self.page = page
        self.workspace = workspace
        self.collapsed: list[str] = []  # the panes :meth:`only` collapsed, for :meth:`restore_panes`

    # ---------------------------------------------------------------------------------- screenshots

    def screenshot(self, artifacts: Path, name: str, target: Locator | None = None) -> Path:
        """Save a PNG of ``target`` (one element; default the whole window) as ``<artifacts>/<name>.png``, for a
        person to look at what a test checked; returns its path."""
        path = artifacts / f"{name}.png"
        if target is None:
            self.page.screenshot(path=str(path))
        else:
            target.screenshot(path=str(path))
        return path

    # ---------------------------------------------------------------------------------- quick input

    @property
    def quick_input(self) -> Locator:
        """The quick input widget (command palette, quick pick, input box) while it is shown."""
        return self.page.locator(".quick-input-widget").filter(visible=True)

    def quick_input_rows(self) -> Locator:
        """The rows of the open quick pick."""
        return self.quick_input.locator(".monaco-list-row")

    def run_command(self, title: str) -> None:
        """Run a command by its palette title (``"Mnemon: Remember Selection"``), picking the row whose
        label is exactly ``title`` (fuzzy matching would also offer longer titles)."""
        self.page.keyboard.press("F1")
        box = self.quick_input.locator("input.input")
        expect(box).to_be_focused(timeout=UI_MS)
        box.fill(f">{title}")
        self.pick(title)

    def pick(self, label: str | re.Pattern[str]) -> None:
        """Choose the row of the open quick pick whose label is ``label`` (text: exact) and accept it."""
        pattern = exact(label) if isinstance(label, str) else label
        row = self.quick_input_rows().filter(has=self.page.locator(".label-name").filter(has_text=pattern))
        expect(row).to_have_count(1, timeout=UI_MS)
        row.click()

    def input_text(self, text: str, *, prompt: str | re.Pattern[str] | None = None) -> None:
        """Type ``text`` into the open input box (its prompt contains ``prompt``, if given) and press Enter.

        With ``prompt``, this waits for that very box and, after Enter, until it is gone: VS Code shows every
        input box in the same widget and the same ``<input>``, so two boxes asked one after the other (a name,
        then a description) are told apart only by their prompt. Without it, a second call could type into the
        first box while it closes, and the second box, shown next, starts empty."""
        # (VS Code 1.139 puts the prompt in .quick-input-message; an empty .quick-input-description comes before it)
        message = self.quick_input.locator(".quick-input-message, .quick-input-description").filter(has_text=prompt or "")
        if prompt is not None:
            expect(message.first).to_be_visible(timeout=UI_MS)
        box = self.quick_input.locator("input.input")
        expect(box).to_be_focused(timeout=UI_MS)
        box.fill(text)
        expect(box).to_have_value(text, timeout=UI_MS)
        box.press("Enter")
        if prompt is not None:
            expect(message).to_have_count(0, timeout=SERVER_MS)

    def expect_save_dialog(self, proposed: "str | re.Pattern[str]") -> Locator:
        """Wait for a save dialog (in code-server VS Code's own simple file dialog: a quick input whose box
        holds the proposed path, set after the box shows) proposing a file named ``proposed`` (a name, or a
        pattern the whole name matches); returns its input box."""
        name = proposed.pattern if isinstance(proposed, re.Pattern) else re.escape(proposed)
        box = self.quick_input.locator("input.input")
        expect(box).to_be_focused(timeout=UI_MS)
        expect(box).to_have_value(re.compile(rf"^/.*/{name}$"), timeout=UI_MS)
        return box

    def save_as(self, name: str, proposed: "str | re.Pattern[str]") -> Path:
        """Answer the open save dialog (proposing a file named ``proposed``) with a file called ``name`` in
        the directory it proposes, and wait until it closes; returns the path chosen. (Staying in the proposed
        directory matters: a box naming another directory makes the dialog list that one first, and an Enter
        while it does only navigates.)"""
        box = self.expect_save_dialog(proposed)
        directory = Path(box.input_value()).parent
        box.fill(str(directory / name))
        expect(box).to_have_value(str(directory / name), timeout=UI_MS)
        box.press("Enter")
        self.wait_quick_input_closed()
        return directory / name

    def wait_quick_input_closed(self) -> None:
        """Wait until no quick input is shown."""
        expect(self.page.locator(".quick-input-widget")).to_be_hidden(timeout=UI_MS)

    # ---------------------------------------------------------------------------------- editors

    def open_file(self, relative: str) -> None:
        """Open ``relative`` (a path inside the workspace) with Quick Open and wait until its editor is active.

        A file the test has just written may not be in Quick Open's file index yet (VS Code adds it when its file
        watcher reports it, later on a loaded machine): the search is asked again, up to four times, until the
        file's row is there."""
        name = Path(relative).name
        row = self.quick_input_rows().filter(has=self.page.locator(".label-name").filter(has_text=exact(name)))
        for attempt in range(4):
            self.page.keyboard.press("Control+p")
            box = self.quick_input.locator("input.input")
            expect(box).to_be_focused(timeout=UI_MS)
            box.fill(relative)
            try:
                expect(row.first).to_be_visible(timeout=UI_MS // 3)
                break
            except AssertionError:
                if attempt == 3:
                    raise
                self.page.keyboard.press("Escape")
                expect(box).to_be_hidden(timeout=UI_MS)
        row.first.click()  # (Enter could still accept the row highlighted before the list filtered)
        tab = self.page.locator(f'.tabs-container .tab.active[data-resource-name="{name}"]')
        expect(tab).to_be_visible(timeout=UI_MS)
        self.focus_editor()

    @property
    def editor(self) -> Locator:
        """The active text editor."""
        return self.page.locator(".editor-group-container.active .monaco-editor").first

    def focus_editor(self) -> None:
        """Put the keyboard focus into the active text editor."""
        self.editor.locator(".view-lines").click()
        expect(self.editor.locator("textarea, .native-edit-context").first).to_be_focused(timeout=UI_MS)

    def select_all(self) -> None:
        """Select the whole text of the active editor."""
        self.focus_editor()
        self.page.keyboard.press("Control+a")
        expect(self.editor.locator(".selected-text").first).to_be_attached(timeout=UI_MS)

    def select_first_lines(self, count: int) -> None:
        """Select the first ``count`` lines of the active editor (to the start of the next line)."""
        self.focus_editor()
        self.page.keyboard.press("Control+Home")
        for _ in range(count):
            self.page.keyboard.press("Shift+ArrowDown")
        expect(self.editor.locator(".selected-text").first).to_be_attached(timeout=UI_MS)

    # ---------------------------------------------------------------------------------- notifications

    @property
    def toasts(self) -> Locator:
        """The notification toasts currently shown."""
        return self.page.locator(".notifications-toasts .notification-toast")

    def notification(self, text: str | re.Pattern[str], timeout: float = SERVER_MS) -> Locator:
        """Wait for a toast whose message contains ``text``; returns that toast."""
        toast = self.toasts.filter(has=self.page.locator(".notification-list-item-message").filter(has_text=text))
        expect(toast.first).to_be_visible(timeout=timeout)
        return toast.first

    def notification_button(self, toast: Locator, label: str) -> Locator:
        """The action button ``label`` of ``toast``."""
        return toast.locator(".monaco-button").filter(has_text=exact(label))

    def clear_notifications(self) -> None:
        """Dismiss every notification (command "Notifications: Clear All Notifications")."""
        if self.toasts.count() == 0:
            return
        self.run_command("Notifications: Clear All Notifications")
        expect(self.toasts).to_have_count(0, timeout=UI_MS)

    # ---------------------------------------------------------------------------------- status bar

    @property
    def status_item(self) -> Locator:
        """The Mnemon status bar item."""
        return self.page.locator(f'[id="{STATUS_ITEM_ID}"]')

    def expect_status(self, pattern: str | re.Pattern[str], timeout: float = SERVER_MS) -> str:
        """Wait until the Mnemon status bar item's text matches ``pattern``; returns the text."""
        expect(self.status_item).to_have_text(pattern, timeout=timeout)
        return self.status_item.inner_text()

    def status_tooltip(self) -> str:
        """The status bar item's accessible label (its text, then the tooltip)."""
        return self.status_item.get_attribute("aria-label") or ""

    # ---------------------------------------------------------------------------------- views

    def show_mnemon(self) -> None:
        """Open the Mnemon view container from its activity bar icon."""
        pane = self.page.locator('[id="workbench.view.extension.mnemon"]')
        if not pane.is_visible():
            self.page.locator('.activitybar .action-item a.action-label[aria-label^="Mnemon"]').first.click()
        expect(pane).to_be_visible(timeout=UI_MS)

    def view(self, name: str) -> Locator:
        """The pane of the view called ``name`` ("Runtime Memory") in the open view container, expanded."""
        pane = self.page.locator(".pane").filter(has=self.page.locator(".pane-header h3.title").filter(has_text=exact(name)))
        expect(pane).to_have_count(1, timeout=UI_MS)
        header = pane.locator(".pane-header")
        if header.get_attribute("aria-expanded") == "false":
            header.click()
        expect(header).to_have_attribute("aria-expanded", "true", timeout=UI_MS)
        return pane

    def only(self, name: str) -> Locator:
        """The pane of the view called ``name``, expanded, with every other pane of the Mnemon container collapsed:
        its tree gets the container's height (a tree draws only the rows in sight). :meth:`restore_panes` expands
        them again, so the next test finds the layout as it was."""
        container = self.page.locator('[id="workbench.view.extension.mnemon"]')
        headers = container.locator(".pane-header")
        for index in range(headers.count()):
            header = headers.nth(index)
            title = header.locator("h3.title").inner_text().strip()
            if title != name and header.get_attribute("aria-expanded") == "true":
                header.click()
                expect(header).to_have_attribute("aria-expanded", "false", timeout=UI_MS)
                self.collapsed.append(title)
        return self.view(name)

    def restore_panes(self) -> None:
        """Expand again the panes :meth:`only` collapsed."""
        while self.collapsed:
            self.view(self.collapsed.pop())

    def row(self, view: Locator, label: str | re.Pattern[str]) -> Locator:
        """The tree rows of ``view`` whose label is ``label`` (text: exact)."""
        pattern = exact(label) if isinstance(label, str) else label
        return view.locator(".monaco-list-row").filter(has=self.page.locator(".label-name").filter(has_text=pattern))

    def scroll_to_end(self, view: Locator, key: str = "End") -> None:
        """Scroll the tree of ``view`` to its last row (``key`` ``Home``: its first; a tree draws only the rows in
        sight): focus its list and press the key, then wait until the list holds its focused row."""
        tree = view.locator(".monaco-list").first
        tree.focus()
        self.page.keyboard.press(key)
        expect(tree.locator(".monaco-list-row.focused")).to_have_count(1, timeout=UI_MS)

    def description(self, row: Locator) -> Locator:
        """The description (grey text after the label) of a tree row."""
        return row.locator(".label-description")

    def view_action(self, view: Locator, title: str) -> None:
        """Click the title-bar action ``title`` of ``view`` (e.g. "Create Memory Space")."""
        view.locator(".pane-header").hover()
        view.locator(f'.pane-header .actions .action-label[aria-label^="{title}"]').click()

    def inline_action(self, row: Locator, title: str) -> None:
        """Click the inline action ``title`` of a tree row (shown on hover): hover the row, wait until the
        action shows, click it. (The row's actions are redrawn when the extension refreshes the row; the click
        finds the current button. A refresh listing the same rows keeps every row known to the extension, so
        the click always reaches its command: editors/vscode/src/treeUpdate.ts.)"""
        row.hover()
        action = row.locator(f'.actions .action-label[aria-label^="{title}"]')
        expect(action).to_be_visible(timeout=UI_MS)
        action.click()

    def context_menu(self, row: Locator, item: str) -> None:
        """Right-click a tree row and choose ``item`` from its context menu."""
        row.click(button="right")
        menu = self.page.locator(".monaco-menu .action-item").filter(has=self.page.locator(".action-label").filter(has_text=exact(item)))
        expect(menu.first).to_be_visible(timeout=UI_MS)
        # A click on the item sometimes only focuses it (the menu stays open, seen in code-server 4.139 under
        # load); Enter on the focused item always runs it.
        menu.first.hover()
        expect(menu.first.locator(".action-menu-item, .action-label").first).to_be_visible(timeout=UI_MS)
        self.page.keyboard.press("Enter")


# -------------------------------------------------------------------------------------- sizes as shown


def format_bytes(count: int) -> str:
    """A byte count as the extension writes it (editors/vscode/src/units.ts ``formatBytes``): ``512 B``,
    ``8.1 KiB``, ``10 KiB``, ``10 MiB`` (one decimal under 100, dropped when ``.0``; none from 100 on)."""
    if count < 1024:
        return f"{count} B"

    def rounded(value: float) -> float:
        # JavaScript's Math.round (half up), not Python's round (half to even)
        return float(int(value + 0.5)) if value >= 100 else int(value * 10 + 0.5) / 10

    value, units = count / 1024, ["KiB", "MiB", "GiB", "TiB"]
    unit = 0
    while unit < len(units) - 1 and rounded(value) >= 1024:
        value /= 1024
        unit += 1
    return f"{rounded(value):g} {units[unit]}"


def format_usage(used: int, limit: int) -> str:
    """``used of limit`` as the extension writes it (src/units.ts ``formatUsage``)."""
    a, b = format_bytes(used), format_bytes(limit)
    return f"{used} B of {limit} B" if a == b and used != limit else f"{a} of {b}"
