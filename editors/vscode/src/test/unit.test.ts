/**
 * Unit tests of the extension's pure modules (no VS Code, no server).
 */

import assert from "node:assert/strict";
import { describe, it } from "node:test";
import {
    createdMessage,
    errorMessage,
    handEditMessage,
    noResultsMessage,
    firstLine,
    noticesMessage,
    receiptMessage,
    rememberTargetRows,
    recallEmptyMessage,
    recallPickItem,
    recallTitle,
    spaceReceiptMessage,
    searchPickItem,
    searchTitle,
    statusBarText,
    statusReport,
    statusTooltip,
    updatedFromFileMessage,
} from "../format";
import { formatBytes, formatUsage } from "../units";
import { noProposalsMessage, proposalPickItem, VERDICT_ITEMS, verdictMessage } from "../proposals";
import {
    activateSpace,
    archiveDocument,
    createSpace,
    forgetInSpace,
    listSpaces,
    recall,
    RecallItem,
    rememberInSpace,
    rememberSelectionInMemory,
    rememberSelectionInSpace,
    asMnemonError,
    branchFor,
    createDocument,
    createDocumentFromFile,
    documentPath,
    remember,
    RequestSender,
    restoreDocument,
    SearchHit,
    searchDocuments,
    ServerCommand,
    SpaceView,
    SERVER_COMMAND_PREFIX,
    status,
    StatusResult,
    workspaceFor,
    WorkspaceStatus,
} from "../requests";
import { buildServerSettings, expandPath, interpreterSetting, serverArgs } from "../settings";
import { invokeTool, TOOL_REQUEST } from "../tools";

function row(overrides: Partial<WorkspaceStatus> = {}): WorkspaceStatus {
    return {
        uri: "file:///home/u/proj",
        name: "proj",
        root: "/home/u/.mnemon",
        userRoot: "/home/u/.mnemon",
        scope: "global",
        branch: "main",
        branchReason: null,
        detached: false,
        entries: { user: 0, memory: 2 },
        usage: { user: { used: 0, limit: 4096 }, memory: { used: 1024, limit: 10240 } },
        problems: [],
        ...overrides,
    };
}

function recorder(result: unknown = {}): RequestSender & { calls: [string, unknown][] } {
    const calls: [string, unknown][] = [];
    return {
        calls,
        sendRequest(method: string, params: unknown): Promise<unknown> {
            calls.push([method, params]);
            return Promise.resolve(result);
        },
    };
}

describe("requests", () => {
    it("remember sends mutate add/memory with the exact content and no undefined keys", async () => {
        const sender = recorder();
        await remember(sender, { workspace: "file:///w/a.py", content: "  keep\r\nthis  " });
        assert.deepEqual(sender.calls, [
            ["mnemon/runtime/mutate", { workspace: "file:///w/a.py", action: "add", target: "memory", content: "  keep\r\nthis  " }],
        ]);
        assert.ok(!("branches" in (sender.calls[0][1] as object)));
    });

    it("remember passes branches only when non-empty", async () => {
        const sender = recorder();
        await remember(sender, { workspace: "file:///w", content: "x", branches: ["feat/a"] });
        await remember(sender, { workspace: "file:///w", content: "x", branches: [] });
        assert.deepEqual((sender.calls[0][1] as { branches?: string[] }).branches, ["feat/a"]);
        assert.ok(!("branches" in (sender.calls[1][1] as object)));
    });

    it("status sends an empty object (the server forbids unknown keys)", async () => {
        const sender = recorder({ version: "0", protocolVersion: 1, workspaces: [] });
        await status(sender);
        assert.deepEqual(sender.calls, [["mnemon/status", {}]]);
    });

    it("asMnemonError decodes a ResponseError-like object and ignores other errors", () => {
        const decoded = asMnemonError({ code: -32013, message: "oldText: no entry matches", data: { code: "no-match", field: "oldText" } });
        assert.deepEqual(decoded, {
            code: "no-match",
            rpcCode: -32013,
            message: "oldText: no entry matches",
            data: { code: "no-match", field: "oldText" },
        });
        assert.equal(asMnemonError(new Error("connection closed")), undefined);
        assert.equal(asMnemonError(undefined), undefined);
        assert.equal(asMnemonError({ code: -32601, message: "unknown" })?.code, "rpc-32601");
    });

    it("workspaceFor picks the longest containing folder and compares decoded URIs", () => {
        const result: StatusResult = {
            version: "0",
            protocolVersion: 1,
            workspaces: [row({ uri: "file:///w", branch: "outer" }), row({ uri: "file:///w/inner", branch: "inner" }), row({ uri: "file:///c%3A/x", branch: "win" })],
        };
        assert.equal(branchFor(result, "file:///w/inner/a.py"), "inner");
        assert.equal(branchFor(result, "file:///w/innerx/a.py"), "outer");
        assert.equal(branchFor(result, "file:///w"), "outer");
        assert.equal(branchFor(result, "file:///w/"), "outer");
        assert.equal(branchFor(result, "file:///c:/x/y.ts"), "win");
        assert.equal(workspaceFor(result, "file:///elsewhere/a.py"), undefined);
        const detached: StatusResult = { ...result, workspaces: [row({ uri: "file:///w", branch: null, detached: true })] };
        assert.equal(branchFor(detached, "file:///w/a.py"), undefined);
    });
});

describe("document requests", () => {
    it("createDocumentFromFile is a workspace/executeCommand request with the server's id and one {uri} argument", async () => {
        const sender = recorder({ success: false, error: { code: "not-in-workspace", message: "x" } });
        await createDocumentFromFile(sender, { uri: "file:///w/notes/a.md" });
        assert.deepEqual(sender.calls, [
            ["workspace/executeCommand", { command: "mnemon.server.createDocumentFromFile", arguments: [{ uri: "file:///w/notes/a.md" }] }],
        ]);
        assert.ok(ServerCommand.createDocumentFromFile.startsWith(SERVER_COMMAND_PREFIX));
    });

    it("document helpers send their method with no undefined keys", async () => {
        const sender = recorder();
        await createDocument(sender, { workspace: "file:///w", title: "T", content: "body", description: undefined });
        await searchDocuments(sender, { workspace: "file:///w", query: "検索", limit: 20 });
        await archiveDocument(sender, { workspace: "file:///w", id: "i", documentRevision: 2 });
        await restoreDocument(sender, { id: "i" });
        assert.deepEqual(sender.calls, [
            ["mnemon/documents/create", { workspace: "file:///w", title: "T", content: "body" }],
            ["mnemon/documents/search", { workspace: "file:///w", query: "検索", limit: 20 }],
            ["mnemon/documents/archive", { workspace: "file:///w", id: "i", documentRevision: 2 }],
            ["mnemon/documents/restore", { id: "i" }],
        ]);
    });

    it("documentPath prefers the server's path, else joins relativePath to the storage root", () => {
        assert.equal(documentPath({ path: "/s/documents/active/a.md", relativePath: "documents/active/a.md" }, "/other"), "/s/documents/active/a.md");
        assert.equal(documentPath({ relativePath: "documents/active/a.md" }, "/home/u/.mnemon"), "/home/u/.mnemon/documents/active/a.md");
        assert.equal(documentPath({ relativePath: "documents/active/a.md" }, "/home/u/.mnemon/"), "/home/u/.mnemon/documents/active/a.md");
        assert.equal(documentPath({ relativePath: "documents/active/a.md" }, "C:\\Users\\u\\.mnemon"), "C:\\Users\\u\\.mnemon\\documents\\active\\a.md");
        assert.equal(documentPath({ relativePath: "documents/active/a.md" }), undefined);
    });
});

describe("remember selection requests", () => {
    it("are the server's command, quiet (the extension shows the receipt), with the document's language", async () => {
        const sender = recorder({ success: true, message: "Entry added." });
        await rememberSelectionInMemory(sender, { uri: "file:///w/a.py", text: "# x", languageId: "python", branches: undefined });
        await rememberSelectionInSpace(sender, { uri: "file:///w/a.py", text: "# x", languageId: "python", branches: ["main"], spaceId: "t" });
        assert.deepEqual(sender.calls, [
            ["workspace/executeCommand", { command: "mnemon.server.rememberSelection", arguments: [{ uri: "file:///w/a.py", text: "# x", languageId: "python", quiet: true }] }],
            ["workspace/executeCommand", { command: "mnemon.server.rememberSelection", arguments: [
                { uri: "file:///w/a.py", text: "# x", languageId: "python", branches: ["main"], spaceId: "t", quiet: true }] }],
        ]);
    });

    it("a refused one rejects like a refused request: asMnemonError reads its code, number and data", async () => {
        const sender = recorder({ success: false, error: { code: "runtime-capacity", message: "memory is over capacity", target: "memory", used: 20, projected: 42, limit: 30 } });
        const error = await rememberSelectionInMemory(sender, { uri: "file:///w/a.py", text: "x" }).then(() => undefined, (e: unknown) => e);
        assert.deepEqual(asMnemonError(error), {
            code: "runtime-capacity", rpcCode: -32010, message: "memory is over capacity",
            data: { code: "runtime-capacity", target: "memory", used: 20, projected: 42, limit: 30 },
        });
    });
});

describe("memory space requests", () => {
    it("space helpers send the server's methods and params, with no undefined keys", async () => {
        const sender = recorder();
        await listSpaces(sender, { workspace: "file:///w", activeOnly: true });
        await createSpace(sender, { workspace: "file:///w", name: "n", description: "d" });
        await activateSpace(sender, { workspace: "file:///w", spaceId: "default" });
        await rememberInSpace(sender, { workspace: "file:///w", content: "c", spaceId: "default", scopeToBranch: undefined });
        await rememberInSpace(sender, { workspace: "file:///w", content: "c", spaceId: "default", scopeToBranch: true });
        await recall(sender, { workspace: "file:///w", query: "q" });
        await forgetInSpace(sender, { workspace: "file:///w", spaceId: "default", id: "abc" });
        assert.deepEqual(sender.calls, [
            ["mnemon/spaces/list", { workspace: "file:///w", activeOnly: true }],
            ["mnemon/spaces/create", { workspace: "file:///w", name: "n", description: "d" }],
            ["mnemon/spaces/activate", { workspace: "file:///w", spaceId: "default" }],
            ["mnemon/remember", { workspace: "file:///w", content: "c", spaceId: "default" }],
            ["mnemon/remember", { workspace: "file:///w", content: "c", spaceId: "default", scopeToBranch: true }],
            ["mnemon/recall", { workspace: "file:///w", query: "q" }],
            ["mnemon/forget", { workspace: "file:///w", spaceId: "default", id: "abc" }],
        ]);
    });
});

describe("settings", () => {
    it("nests runtimeMemory, drops null/empty dataDir and expands paths", () => {
        const values: Record<string, unknown> = {
            storageScope: "custom",
            dataDir: "${workspaceFolder}/.mem",
            runtimeUserScope: "storage",
            "runtimeMemory.userLimitBytes": 4096,
            "runtimeMemory.memoryLimitBytes": 20480,
            detachedHeadPolicy: "show",
            worktreeSharing: "separate",
            wakeBudgetChars: 65536,
            interpreter: ["python3"],
        };
        assert.deepEqual(buildServerSettings((k) => values[k], { workspaceFolder: "/w", userHome: "/h" }), {
            storageScope: "custom",
            dataDir: "/w/.mem",
            runtimeUserScope: "storage",
            runtimeMemory: { userLimitBytes: 4096, memoryLimitBytes: 20480 },
            detachedHeadPolicy: "show",
            worktreeSharing: "separate",
            wakeBudgetChars: 65536,
        });
        assert.deepEqual(buildServerSettings((k) => (k === "dataDir" ? "  " : undefined)), {});
        assert.deepEqual(buildServerSettings((k) => (k === "dataDir" ? null : undefined)), {});
    });

    it("expands ~ and ${userHome} only at the right places", () => {
        assert.equal(expandPath("~/x", { userHome: "/h" }), "/h/x");
        assert.equal(expandPath("~", { userHome: "/h" }), "/h");
        assert.equal(expandPath("/a/~b", { userHome: "/h" }), "/a/~b");
        assert.equal(expandPath("${userHome}/m", { userHome: "/h" }), "/h/m");
        assert.equal(expandPath("${workspaceFolder}/m", {}), "${workspaceFolder}/m");
    });

    it("builds the server argv from mnemon.interpreter", () => {
        assert.deepEqual(interpreterSetting(["~/venv/bin/python", "", "-X", "utf8"], { userHome: "/h" }), ["/h/venv/bin/python", "-X", "utf8"]);
        assert.deepEqual(interpreterSetting("python3"), []);
        assert.deepEqual(serverArgs(["/py", "-X", "utf8"]), { command: "/py", args: ["-X", "utf8", "-m", "mnemon_ls", "serve"] });
    });
});

describe("format", () => {
    it("status bar text shows branch and MEMORY.md usage", () => {
        assert.equal(statusBarText(row()), "$(bookmark) main · MEMORY 10%");
        assert.equal(statusBarText(row({ branch: null, detached: true })), "$(bookmark) (detached) · MEMORY 10%");
        assert.equal(statusBarText(row({ problems: ["x"] })), "$(warning) main · MEMORY 10%");
        assert.equal(statusBarText(undefined), "$(bookmark) mnemon");
        assert.match(statusTooltip(row(), "0.1.0"), /MEMORY\.md: 2 entries, 1 KiB of 10 KiB \(10%\)/);
    });

    it("receipt and error messages", () => {
        const receipt = {
            success: true as const,
            message: "Entry added.",
            target: "memory" as const,
            entryCount: 1,
            usage: { used: 12, limit: 10240 },
            revision: "r",
            changed: true,
            workspace: "file:///w",
        };
        assert.equal(receiptMessage(receipt, ["main"]), "Mnemon: Entry added. MEMORY.md for branch main: 1 entry, 12 B of 10 KiB.");
        const error = { code: "runtime-capacity", rpcCode: -32010, message: "MEMORY.md is full", data: { used: 10000, projected: 10300, limit: 10240 } };
        const text = errorMessage("not remembered", error);
        assert.equal(text, "Mnemon: not remembered: MEMORY.md is full: this change would make it 10.1 KiB of 10 KiB (now 9.8 KiB). [runtime-capacity]");
        const barely = errorMessage("not remembered", { ...error, data: { used: 10000, projected: 10250, limit: 10240 } });
        assert.equal(barely, "Mnemon: not remembered: MEMORY.md is full: this change would make it 10250 B of 10240 B (now 9.8 KiB). [runtime-capacity]");
        const wide = errorMessage("not remembered", { ...error, data: { used: 9000, projected: 12000, limit: 10240 } });
        assert.equal(wide, "Mnemon: not remembered: MEMORY.md is full: this change would make it 11.7 KiB of 10 KiB (now 8.8 KiB). [runtime-capacity]");
        assert.doesNotMatch(text, /MEMORY\.md is full.*MEMORY\.md is full/);
    });

    it("status report flags a protocol mismatch", () => {
        const report = statusReport({ version: "9", protocolVersion: 2, workspaces: [row()] }, 1);
        assert.match(report, /speaks protocol 1/);
        assert.match(report, /## proj/);
    });

    it("search hits as QuickPick items: title, score, one-line excerpt", () => {
        const hit = { title: "デプロイ手順", score: 3.14159, matched: "title", status: "active", excerpt: "本番へ\n\n  金曜は…" } as SearchHit;
        assert.deepEqual(searchPickItem(hit), { label: "デプロイ手順", description: "score 3.14", detail: "本番へ 金曜は…" });
        assert.equal(searchPickItem({ ...hit, matched: "all", score: 1 }).description, "");
        assert.equal(searchPickItem({ ...hit, status: "archived" }).description, "score 3.14 · archived");
        assert.equal(searchTitle({ query: "deploy", total: 20, matches: 34 }), "Mnemon: 20 of 34 documents for “deploy”");
        assert.equal(searchTitle({ query: "deploy", total: 1, matches: 1 }), "Mnemon: 1 document for “deploy”");
        assert.equal(searchTitle({ query: "", total: 2, matches: 2 }), "Mnemon: 2 documents, newest first");
        assert.equal(noResultsMessage(" 検索 ", "proj"), "Mnemon: no document in proj matches “検索”.");
        assert.equal(noResultsMessage("", "proj"), "Mnemon: proj has no documents yet.");
        assert.equal(noticesMessage(["a missing"]), "Mnemon: a missing");
        assert.equal(noticesMessage(["a", "b"]), "Mnemon: 2 notices: a; b");
    });

    it("created-document message names the title, the managed file and the source", () => {
        assert.equal(
            createdMessage({ title: "Cache design", relativePath: "documents/active/cache-design-1a2b3c4d.md", sourcePaths: ["notes/cache.md"] }),
            "Mnemon: created document “Cache design” (documents/active/cache-design-1a2b3c4d.md) from notes/cache.md.",
        );
    });

    it("update-from-file message says what the server did: updated, unchanged, or a hand edit adopted", () => {
        const answer = (action: "updated" | "unchanged" | "adopted") => ({ action, document: { revision: 3 } });
        assert.equal(updatedFromFileMessage("Design", "notes/design.md", answer("updated")),
            'Mnemon: updated "Design" from notes/design.md (revision 3).');
        assert.equal(updatedFromFileMessage("Design", "notes/design.md", answer("unchanged")),
            'Mnemon: "Design" already matches notes/design.md: no change; revision 3 kept.');
        // adopted: the managed file, edited by hand, already held the file's text; it was not "updated from" it
        assert.equal(updatedFromFileMessage("Design", "notes/design.md", answer("adopted")),
            'Mnemon: "Design" already held the text of notes/design.md through a hand edit of its managed file; '
            + "adopted that hand edit as revision 3.");
    });

    it("recall hits as QuickPick items: first line clipped, space · score · tier, category/tags/created/branch", () => {
        const item: RecallItem = {
            spaceId: "default",
            spaceName: "Notes",
            providerId: "mnemon-native",
            id: "1",
            content: "\n  first   line\nsecond line",
            score: 0.8765,
            tier: "high",
            category: "fact",
            importance: 3,
            tags: ["x", "branch:main"],
            createdAt: "2026-01-01T00:00:00Z",
            branchLabel: "other-branch",
        };
        assert.deepEqual(recallPickItem(item), {
            label: "first line",
            description: "Notes · 0.88 · high",
            detail: "fact · tags: x, branch:main · created 2026-01-01T00:00:00Z · other-branch",
        });
        assert.equal(recallPickItem({ ...item, score: null, tags: [], createdAt: null, branchLabel: undefined }).description, "Notes · unscored · high");
        assert.equal(recallPickItem({ ...item, score: null, tags: [], createdAt: null, branchLabel: undefined }).detail, "fact");
        assert.equal(firstLine("a".repeat(100), 10), `${"a".repeat(9)}…`);
        assert.equal(firstLine("接龙".repeat(10), 5), "接龙接龙…");
        const hidden = { otherBranch: 2, detachedHead: 0 };
        assert.equal(recallTitle({ query: "q", results: [item], hidden, truncated: 0 }), "Mnemon: 1 memory for “q” (2 hidden on other branches)");
        assert.equal(
            recallEmptyMessage({ query: "q", hint: "nothing matched", hidden }, "proj"),
            "Mnemon: nothing recalled in proj for “q”: nothing matched (2 branch-scoped memories hidden).",
        );
        assert.equal(
            spaceReceiptMessage({ status: "committed", message: "Remembered in Notes.", spaceName: "Notes", id: "1", activated: true, activeSpaces: [{ id: "n", name: "Notes" }] }, "main"),
            "Mnemon: Remembered in Notes. (branch main) Notes was inactive and is now active: recall reads it.",
        );
        assert.equal(
            spaceReceiptMessage({ status: "committed", message: "Remembered in Team.", spaceName: "Team", id: "1", activated: true, activeSpaces: [{ id: "default", name: "Default" }, { id: "t", name: "Team" }] }),
            "Mnemon: Remembered in Team. Team was inactive and is now active: recall reads it. 2 spaces are active (Default, Team), so a remember that names no space (an assistant's mnemon_remember, mnemon-ls remember) must name one.",
        );
        assert.equal(spaceReceiptMessage({ status: "committed", message: "Remembered in Team.", spaceName: "Team", id: "1", activated: false }), "Mnemon: Remembered in Team.");
    });

    it("the Remember Selection target rows: active spaces first, each marked as it was before the write", () => {
        const space = (id: string, name: string, active: boolean): SpaceView => ({
            id, name, description: id === "t" ? "What the team agreed" : "", active, providerId: "mnemon-native", providerLabel: "mnemon-native", kind: "native",
            location: { dataDir: "/d", store: id, path: "/d/x" }, capabilities: null, available: true, createdAt: "", updatedAt: "",
        });
        const rows = rememberTargetRows([space("t", "Team", false), space("default", "Default", true)], " for branch main");
        assert.deepEqual(rows.map((r) => [r.group, r.label, r.description, r.detail]), [
            ["active", "Default", "active · mnemon-native for branch main", undefined],
            ["inactive", "Team", "inactive: remembering here makes it active · mnemon-native for branch main", "What the team agreed"],
        ]);
        assert.equal(rows[1].space.id, "t");
    });

    it("one byte formatter: B below 1 KiB, then KiB, MiB, GiB; usage never reads as two equal numbers", () => {
        assert.deepEqual([0, 512, 1023, 1024, 8294, 10240, 102400, 1048575, 10485760, 1572864 * 1024].map(formatBytes),
            ["0 B", "512 B", "1023 B", "1 KiB", "8.1 KiB", "10 KiB", "100 KiB", "1 MiB", "10 MiB", "1.5 GiB"]);
        assert.equal(formatUsage(4096, 10485760), "4 KiB of 10 MiB");
        assert.equal(formatUsage(9728, 10240), "9.5 KiB of 10 KiB");
        assert.equal(formatUsage(10240, 10240), "10 KiB of 10 KiB");
        assert.equal(formatUsage(10250, 10240), "10250 B of 10240 B");
    });
});

describe("hand edits", () => {
    it("shows the import result, and what was not applied, in one line", () => {
        assert.equal(
            handEditMessage({ handEdit: { status: "imported", message: "2 entries added from your edit of MEMORY.md", added: ["a", "b"] } }),
            "$(check) Mnemon: 2 entries added from your edit of MEMORY.md",
        );
        assert.equal(
            handEditMessage({ handEdit: { status: "rejected", message: "your edit of MEMORY.md was not applied:\nMEMORY.md item 2: content: too long" } }),
            "$(warning) Mnemon: your edit of MEMORY.md was not applied: MEMORY.md item 2: content: too long",
        );
        assert.equal(handEditMessage({ handEdit: { status: "leftover", message: "MEMORY.md is empty" } }), "$(info) Mnemon: MEMORY.md is empty");
    });

    it("says nothing for a line-ending change or a plain repair", () => {
        assert.equal(handEditMessage({ handEdit: { status: "format", message: "MEMORY.md differs only in line endings" } }), undefined);
        assert.equal(handEditMessage({}), undefined);
    });
});

describe("proposals (Review Proposals)", () => {
    const record = {
        id: "memory:agent:fact:abc", scope: "project" as const, scopeKey: "k", type: "fact", title: "  Port\n of the   dev server ",
        content: "x ".repeat(150), tags: [], createdAt: 1, updatedAt: 1, status: "active",
        governance: { origin: "model-suggested", verification: "unverified", revision: 1, sourceRefs: [] },
    };
    it("a proposal is one line of title, scope and type, and the content", () => {
        const item = proposalPickItem(record);
        assert.equal(item.label, "Port of the dev server");
        assert.equal(item.description, "project · fact");
        assert.equal(item.detail.length, 200);
        assert.ok(item.detail.endsWith("…"));
    });
    it("verdicts come in the order Verify, Reject and say what happened", () => {
        assert.deepEqual(VERDICT_ITEMS.map((v) => v.verdict), ["verify", "reject"]);
        const receipt = { status: "skipped" as const, id: record.id, scope: "project", message: "", record, workspace: "file:///w" };
        assert.equal(verdictMessage("reject", receipt), 'Mnemon: rejected "Port of the dev server" (it already was).');
        assert.equal(noProposalsMessage("repo"), "Mnemon: no proposals wait for review in repo.");
    });
});

describe("language-model tools: one request, the server's text", () => {
    /** A sender that records each request and answers `answer`. */
    function recorder(answer: unknown) {
        const sent: { method: string; params: any }[] = [];
        return { sent, sender: { sendRequest: async (method: string, params: unknown) => (sent.push({ method, params }), answer) } };
    }

    it("a tool sends mnemon/tool with its name and arguments and returns the server's text as it is", async () => {
        const recalled = recorder({ text: "withheld: 3 results found by meaning alone with low confidence (not sent)\nNo memory matched.", workspace: "file:///w" });
        const text = await invokeTool(recalled.sender, "mnemon_recall", "file:///w", { query: "kubernetes helm chart", limit: 3 });
        assert.deepEqual(recalled.sent, [{ method: TOOL_REQUEST, params: { workspace: "file:///w", name: "mnemon_recall", arguments: { query: "kubernetes helm chart", limit: 3 } } }]);
        assert.equal(text, "withheld: 3 results found by meaning alone with low confidence (not sent)\nNo memory matched.");
        const none = recorder({ text: "0 result(s)" });
        await invokeTool(none.sender, "mnemon_document_search", undefined, undefined);
        assert.deepEqual(none.sent[0].params, { name: "mnemon_document_search", arguments: {} });
    });
});
