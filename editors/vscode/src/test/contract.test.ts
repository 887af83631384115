/**
 * Protocol contract test: the real mnemon-ls server (`<python> -m mnemon_ls serve`, stdio), driven by
 * vscode-jsonrpc (the JSON-RPC layer vscode-languageclient uses) through the extension's own
 * src/requests.ts helpers and src/settings.ts. No VS Code is needed (lsp-anchors 4.5).
 *
 * Environment: MNEMON_PYTHON (default `python3`) must have mnemon-ls's dependencies; the repository
 * root is appended to PYTHONPATH so the server of this tree is the one tested. `git` must be on PATH.
 * The server gets MNEMON_DATA_DIR and HOME inside a temporary directory.
 */

import assert from "node:assert/strict";
import { ChildProcessWithoutNullStreams, execFileSync, spawn } from "node:child_process";
import { createHash } from "node:crypto";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { after, before, describe, it } from "node:test";
import { pathToFileURL } from "node:url";
import { createMessageConnection, MessageConnection, ResponseError, StreamMessageReader, StreamMessageWriter } from "vscode-jsonrpc/node";
import {
    activateSpace,
    archiveDocument,
    configureProvider,
    createSpace,
    listProviders,
    deactivateSpace,
    forgetInSpace,
    listSpaces,
    recall,
    rememberInSpace,
    rememberSelectionInMemory,
    rememberSelectionInSpace,
    asMnemonError,
    branchFor,
    BranchChangedParams,
    createDocument,
    createDocumentFromFile,
    DocumentView,
    documentPath,
    ErrorCode,
    exportedMessage,
    exportPack,
    forget,
    getDocument,
    inspectPack,
    listDocuments,
    mutate,
    Notification,
    PROTOCOL_VERSION,
    ProjectionRepairedParams,
    Receipt,
    remember,
    restoreDocument,
    runtimeSnapshot,
    searchDocuments,
    SERVER_COMMAND_PREFIX,
    status,
    turnBegin,
    turnEnd,
    updateDocument,
    wake,
} from "../requests";
import { editRequest, listReview, reanchor, reanchoredMessage, removeRequest, reviewTree } from "../review";
import { applyImports, approvalQuestion, importReceiptMessage, importRows, scanImports } from "../imports";
import { judgeRecord, listProposals, proposalPickItem, proposeRecord, RECORD_PROPOSED, verdictMessage } from "../proposals";
import { buildServerSettings, ServerSettings } from "../settings";
import { conflictMessage, CONTEXT_VALUES, documentsTree, entryStillThere, Node, proposalsTree, providersTree, runtimeTree, spacesTree } from "../trees";
import { errorMessage, spaceReceiptMessage } from "../format";
import { formatBytes, formatUsage } from "../units";
import { MemoryChangedParams } from "../requests";
import { invokeTool, TOOLS } from "../tools";
import { announcedByServer, compactRuntime, numberEntries } from "../compaction";
import { MaintenanceCompletedParams, maintenanceCompletedMessage, MaintenanceNotification, MaintenanceRequiredParams, USER_FULL_MESSAGE } from "../maintenanceText";

const EXTENSION_DIR = path.resolve(__dirname, "..", "..");
/** The repository root: the server under test is the one of this tree (after any PYTHONPATH given). */
const REPO_ROOT = path.resolve(EXTENSION_DIR, "..", "..");
const REQUEST_TIMEOUT_MS = 15_000;

interface Manifest {
    contributes: {
        commands: { command: string }[];
        configuration: { properties: Record<string, { default?: unknown }> };
    };
}

const manifest = JSON.parse(fs.readFileSync(path.join(EXTENSION_DIR, "package.json"), "utf8")) as Manifest;

/** The settings the extension would send with every setting at its contributed default. */
function defaultSettings(): ServerSettings {
    const properties = manifest.contributes.configuration.properties;
    return buildServerSettings((key) => properties[`mnemon.${key}`]?.default);
}

function withTimeout<T>(promise: Promise<T>, label: string, ms = REQUEST_TIMEOUT_MS): Promise<T> {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`${label}: no answer within ${ms} ms`)), ms);
    });
    return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

/** A promise for the next `method` notification matching `predicate`. */
function nextNotification<T>(waiters: Map<string, ((p: unknown) => boolean)[]>, method: string, predicate: (p: T) => boolean): Promise<T> {
    return new Promise((resolve) => {
        const list = waiters.get(method) ?? [];
        list.push((p) => {
            if (predicate(p as T)) {
                resolve(p as T);
                return true;
            }
            return false;
        });
        waiters.set(method, list);
    });
}

async function waitFor(condition: () => boolean, label: string, ms = 5_000): Promise<void> {
    const deadline = Date.now() + ms;
    while (!condition()) {
        if (Date.now() > deadline) {
            throw new Error(`${label}: not within ${ms} ms`);
        }
        await new Promise((resolve) => setTimeout(resolve, 20));
    }
}

function git(cwd: string, env: NodeJS.ProcessEnv, ...args: string[]): void {
    execFileSync("git", ["-c", "user.name=Mnemon Test", "-c", "user.email=test@example.invalid", "-c", "commit.gpgsign=false", ...args], {
        cwd,
        env,
        stdio: "pipe",
    });
}

async function expectMnemonError(promise: Promise<unknown>, code: keyof typeof ErrorCode): Promise<ResponseError<unknown>> {
    const error = await withTimeout(promise.then(
        () => assert.fail(`expected a ${code} error, the request succeeded`),
        (e: unknown) => e,
    ), code);
    assert.ok(error instanceof ResponseError, `expected a ResponseError, got ${String(error)}`);
    const decoded = asMnemonError(error);
    assert.equal(decoded?.code, code, `data.code of ${JSON.stringify(error.data)}`);
    assert.equal(error.code, ErrorCode[code]);
    assert.ok(!("traceback" in (decoded?.data ?? {})), "no traceback may reach the client");
    return error;
}

describe("contract with the real mnemon-ls server", () => {
    let tmp: string;
    let repo: string;
    let folderUri: string;
    let fileUri: string;
    let gitEnv: NodeJS.ProcessEnv;
    let proc: ChildProcessWithoutNullStreams;
    let connection: MessageConnection;
    let stderr = "";
    let exited: Promise<number | null>;
    let initializeResult: { capabilities: Record<string, any>; serverInfo?: { name: string; version?: string } };
    let configurationAsked: Promise<{ items: { scopeUri?: string; section?: string }[] }>;
    const shown: { type: number; message: string }[] = [];
    const waiters = new Map<string, ((p: unknown) => boolean)[]>();
    // Capacity errors are what these tests check: MEMORY.md overflow refuses instead of archiving (issue 9).
    const settings = { ...defaultSettings(), runtimeMemory: { ...defaultSettings().runtimeMemory, maintenance: "reject" } };
    let currentSettings: ServerSettings = settings;
    const configurationWaiters: ((params: unknown) => void)[] = [];
    let first: Receipt;
    /** `window/showDocument` requests, answered like VS Code (vscode-languageclient opens the file). */
    const showDocuments: { uri: string; takeFocus?: boolean }[] = [];
    let cjkDoc: DocumentView;
    let bodyDoc: DocumentView;

    before(async () => {
        tmp = fs.mkdtempSync(path.join(os.tmpdir(), "mnemon-vscode-contract-"));
        const home = path.join(tmp, "home");
        fs.mkdirSync(home);
        repo = path.join(tmp, "repo");
        fs.mkdirSync(repo);
        gitEnv = { ...process.env, HOME: home, GIT_CONFIG_NOSYSTEM: "1", GIT_TERMINAL_PROMPT: "0" };
        git(repo, gitEnv, "init", "-q", "-b", "main");
        fs.writeFileSync(path.join(repo, "app.py"), "print('hello')\n");
        git(repo, gitEnv, "add", "app.py");
        git(repo, gitEnv, "commit", "-q", "-m", "initial");
        folderUri = pathToFileURL(repo).href;
        fileUri = pathToFileURL(path.join(repo, "app.py")).href;

        const python = process.env.MNEMON_PYTHON || "python3";
        proc = spawn(python, ["-m", "mnemon_ls", "serve"], {
            cwd: repo,
            env: {
                ...process.env,
                MNEMON_DATA_DIR: path.join(tmp, "data"),
                HOME: home,
                PYTHONUTF8: "1",
                PYTHONPATH: [process.env.PYTHONPATH, REPO_ROOT].filter(Boolean).join(path.delimiter),
            },
            stdio: ["pipe", "pipe", "pipe"],
        });
        proc.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
        exited = new Promise((resolve) => proc.on("exit", (code) => resolve(code)));

        connection = createMessageConnection(new StreamMessageReader(proc.stdout), new StreamMessageWriter(proc.stdin));
        configurationAsked = new Promise((resolve) => {
            connection.onRequest("workspace/configuration", (params: { items: { scopeUri?: string; section?: string }[] }) => {
                resolve(params);
                for (const waiter of configurationWaiters.splice(0)) {
                    waiter(params);
                }
                // What the extension's configuration middleware answers.
                return params.items.map((item) => (item.section === "mnemon" ? currentSettings : null));
            });
        });
        connection.onRequest("client/registerCapability", () => null);
        connection.onRequest("window/workDoneProgress/create", () => null);
        connection.onNotification("window/showMessage", (p: { type: number; message: string }) => shown.push(p));
        connection.onRequest("window/showDocument", (p: { uri: string; takeFocus?: boolean }) => {
            showDocuments.push(p);
            return { success: true };
        });
        connection.onNotification((method: string, params: unknown) => {
            const list = waiters.get(method) ?? [];
            waiters.set(method, list.filter((waiter) => !waiter(params)));
        });
        connection.listen();

        initializeResult = await withTimeout(
            connection.sendRequest("initialize", {
                processId: process.pid,
                clientInfo: { name: "mnemon-vscode-contract-test" },
                rootUri: folderUri,
                workspaceFolders: [{ uri: folderUri, name: "repo" }],
                initializationOptions: { mnemon: settings },
                capabilities: {
                    workspace: {
                        configuration: true,
                        workspaceFolders: true,
                        didChangeConfiguration: { dynamicRegistration: true },
                        didChangeWatchedFiles: { dynamicRegistration: true },
                        executeCommand: { dynamicRegistration: true },
                    },
                    window: { showDocument: { support: true }, workDoneProgress: true },
                    textDocument: { codeAction: { dynamicRegistration: true } },
                },
            }),
            "initialize",
        );
        await connection.sendNotification("initialized", {});
    });

    after(async () => {
        connection?.dispose();
        if (proc && proc.exitCode === null && proc.signalCode === null) {
            proc.kill();
        }
        if (tmp) {
            fs.rmSync(tmp, { recursive: true, force: true });
        }
    });

    it("initialize: server commands are namespaced and never collide with contributed commands", () => {
        assert.equal(initializeResult.serverInfo?.name, "mnemon-ls");
        const serverCommands: string[] = initializeResult.capabilities.executeCommandProvider?.commands ?? [];
        assert.ok(serverCommands.length > 0, "the server advertises its code-action commands");
        for (const id of serverCommands) {
            assert.ok(id.startsWith(SERVER_COMMAND_PREFIX), `${id} is outside ${SERVER_COMMAND_PREFIX}*`);
        }
        const contributed = manifest.contributes.commands.map((c) => c.command);
        assert.deepEqual(contributed.filter((id) => serverCommands.includes(id)), []);
    });

    it("initialize: workspace folder changes are supported (one client per window, multi-root)", () => {
        const folders = initializeResult.capabilities.workspace?.workspaceFolders;
        assert.equal(folders?.supported, true);
        assert.ok(folders?.changeNotifications === true || typeof folders?.changeNotifications === "string");
    });

    it("pulls workspace/configuration section mnemon for the folder", async () => {
        const params = await withTimeout(configurationAsked, "workspace/configuration");
        assert.deepEqual(params.items, [{ scopeUri: folderUri, section: "mnemon" }]);
    });

    it("remember (add) returns a receipt for the folder", async () => {
        const content = "Run the tests with `pytest -n auto`; never with plain unittest.";
        first = await withTimeout(remember(connection, { workspace: fileUri, content }), "remember");
        assert.equal(first.success, true);
        assert.equal(first.message, "Entry added.");
        assert.equal(first.target, "memory");
        assert.equal(first.entryCount, 1);
        assert.equal(first.changed, true);
        assert.equal(first.added, content);
        assert.equal(first.workspace, folderUri);
        assert.equal(first.usage.limit, settings.runtimeMemory?.memoryLimitBytes);
        assert.equal(first.usage.used, Buffer.byteLength(content, "utf8"));
        assert.match(first.revision, /^[0-9a-f]{64}$/);
    });

    it("remembering the same text again is an unchanged receipt", async () => {
        const again = await withTimeout(remember(connection, { workspace: fileUri, content: first.added! }), "remember again");
        assert.equal(again.changed, false);
        assert.equal(again.entryCount, 1);
        assert.equal(again.revision, first.revision);
    });

    it("status: protocol version and the folder's branch", async () => {
        const result = await withTimeout(status(connection), "status");
        assert.equal(result.protocolVersion, PROTOCOL_VERSION);
        assert.equal(result.workspaces.length, 1);
        const row = result.workspaces[0];
        assert.equal(row.uri, folderUri);
        assert.equal(row.branch, "main");
        assert.equal(row.detached, false);
        assert.equal(branchFor(result, fileUri), "main");
        assert.deepEqual(row.entries, { user: 0, memory: 1 });
        assert.deepEqual(row.usage.memory, first.usage);
        assert.deepEqual(row.problems, []);
    });

    it("the package.json defaults resolve the per-folder root outside the repository, USER.md from the global root", async () => {
        assert.equal(settings.storageScope, "workspaces");
        assert.equal(settings.runtimeUserScope, "global");
        const row = (await withTimeout(status(connection), "status")).workspaces[0] as { root: string; userRoot: string; scope: string };
        const digest = createHash("sha256").update(fs.realpathSync(repo)).digest("hex");
        assert.equal(row.scope, "workspaces");
        assert.equal(row.root, path.join(tmp, "data", "workspaces", digest), "<global>/workspaces/<sha256 of the folder path>");
        assert.equal(row.userRoot, path.join(tmp, "data"));
        assert.ok(!fs.existsSync(path.join(repo, ".mnemon")), "nothing is written into the repository");
    });

    it("remember for this branch (branch from status) scopes the entry", async () => {
        const branch = branchFor(await withTimeout(status(connection), "status"), fileUri);
        assert.equal(branch, "main");
        const receipt = await withTimeout(
            remember(connection, { workspace: fileUri, content: "main: the release notes live in CHANGES.md", branches: [branch!] }),
            "remember for branch",
        );
        assert.equal(receipt.changed, true);
        assert.equal(receipt.entryCount, 2);
    });

    it("wake renders both entries for the folder", async () => {
        const snapshot = await withTimeout(wake(connection, { workspace: folderUri }), "wake");
        assert.ok(snapshot.text.includes(first.added!), snapshot.text);
        assert.ok(snapshot.text.includes("main: the release notes live in CHANGES.md"), snapshot.text);
        assert.equal(snapshot.branch, "main");
        assert.equal(snapshot.workspace, folderUri);
        assert.equal(snapshot.chars, [...snapshot.text].length);
    });

    it("runtime snapshot lists the committed entries", async () => {
        const snapshot = await withTimeout(runtimeSnapshot(connection, folderUri), "runtime snapshot");
        assert.deepEqual(
            snapshot.entries.map((e) => [e.content, e.branches ?? null]),
            [
                [first.added, null],
                ["main: the release notes live in CHANGES.md", ["main"]],
            ],
        );
        assert.equal(snapshot.usage.memory.limit, settings.runtimeMemory?.memoryLimitBytes);
    });

    it("an assistant's proposal is announced, listed as a proposal, and a person verifies or rejects it", async () => {
        const announced = nextNotification<{ id: string; pending: number }>(waiters, RECORD_PROPOSED, () => true);
        const first = await withTimeout(proposeRecord(connection, { workspace: folderUri, title: "Tests", content: "Run pytest -n 2", type: "convention" }), "propose");
        assert.equal(first.record.governance.origin, "model-suggested");
        const note = await withTimeout(announced, "recordProposed");
        assert.equal(note.id, first.id);
        assert.equal(note.pending, 1);
        const second = await withTimeout(proposeRecord(connection, { workspace: folderUri, title: "Port", content: "8080" }), "propose 2");
        const pending = await withTimeout(listProposals(connection, folderUri), "list proposals");
        assert.deepEqual(pending.map((r) => r.id), [second.id, first.id]);
        assert.deepEqual(proposalPickItem(pending[1]), { label: "Tests", description: "project · convention", detail: "Run pytest -n 2" });
        const verified = await withTimeout(judgeRecord(connection, folderUri, pending[1], "verify"), "verify");
        assert.equal(verified.record.governance.verification, "verified");
        assert.equal(verdictMessage("verify", verified), 'Mnemon: verified "Tests".');
        const rejected = await withTimeout(judgeRecord(connection, folderUri, pending[0], "reject"), "reject");
        assert.equal(rejected.record.governance.verification, "rejected");
        assert.deepEqual(await withTimeout(listProposals(connection, folderUri), "list again"), []);
        await expectMnemonError(proposeRecord(connection, { workspace: folderUri, title: "x", content: "y", recordScope: "shared-project" }), "confirmation-required");
    });

    it("turn begin pins a view whose wake is served by viewId; turn end ends it", async () => {
        const view = await withTimeout(turnBegin(connection, { workspace: folderUri }), "turn begin");
        assert.ok(view.viewId);
        const pinned = await withTimeout(wake(connection, { viewId: view.viewId }), "wake by view");
        assert.equal(pinned.text, view.wake.text);
        assert.deepEqual(await withTimeout(turnEnd(connection, view.viewId), "turn end"), { viewId: view.viewId, ended: true });
        await expectMnemonError(wake(connection, { viewId: "no-such-view" }), "not-found");
    });

    it("an invalid add (content with §) is a ResponseError with data.code invalid-input", async () => {
        const error = await expectMnemonError(remember(connection, { workspace: fileUri, content: "a § b" }), "invalid-input");
        assert.equal((error.data as { field?: string }).field, "content");
    });

    it("a remove without a match is a ResponseError with data.code no-match", async () => {
        await expectMnemonError(forget(connection, { workspace: fileUri, oldText: "nothing like this was ever remembered" }), "no-match");
    });

    it("unknown params and files outside the folder are rejected with stable codes", async () => {
        await expectMnemonError(mutate(connection, { workspace: fileUri, action: "add", content: "x", ...({ bogus: 1 } as object) }), "invalid-input");
        await expectMnemonError(
            remember(connection, { workspace: pathToFileURL(path.join(tmp, "elsewhere.txt")).href, content: "x" }),
            "not-in-workspace",
        );
    });

    it("a hand edit of MEMORY.md is imported: mnemon/projectionRepaired carries the result and the wake shows it", async () => {
        const digest = createHash("sha256").update(fs.realpathSync(repo)).digest("hex");
        const memoryFile = path.join(tmp, "data", "workspaces", digest, "runtime", "MEMORY.md");
        assert.ok(fs.existsSync(memoryFile), `${memoryFile} exists (the folder's root under MNEMON_DATA_DIR/workspaces)`);
        const repaired = nextNotification<ProjectionRepairedParams>(waiters, Notification.projectionRepaired, (p) => p.file === memoryFile);
        fs.chmodSync(memoryFile, 0o644);
        fs.appendFileSync(memoryFile, "\u00a7\na line typed by hand\n");
        // Either the server's watcher or this wake notices the edit first; both must repair and notify.
        const snapshot = await withTimeout(wake(connection, { workspace: folderUri }), "wake after a hand edit").catch((error: unknown) => {
            throw new Error(`mnemon/wake failed after a hand edit: ${String(error)}; server stderr:\n${stderr.slice(-1500)}`);
        });
        assert.ok(snapshot.text.includes(first.added!));
        const params = await withTimeout(repaired, "mnemon/projectionRepaired", 10_000).catch((error: Error) => {
            throw new Error(`${error.message}; server stderr:\n${stderr.slice(-1500)}`);
        });
        assert.equal(params.workspace, folderUri);
        assert.ok(params.preservedAs && fs.readFileSync(params.preservedAs, "utf8").includes("a line typed by hand"));
        assert.equal(params.handEdit?.status, "imported");
        assert.deepEqual(params.handEdit?.added, ["a line typed by hand"]);
        assert.equal(params.handEdit?.message, "1 entry added from your edit of MEMORY.md");
        assert.ok(fs.readFileSync(memoryFile, "utf8").includes("a line typed by hand"));
        const after = await withTimeout(wake(connection, { workspace: folderUri }), "wake after the import");
        assert.ok(after.text.includes("a line typed by hand"));
    });

    it("a checkout sends mnemon/branchChanged and the branch-scoped entry leaves the wake", async () => {
        const changed = nextNotification<BranchChangedParams>(waiters, Notification.branchChanged, (p) => p.branch === "feature");
        git(repo, gitEnv, "checkout", "-q", "-b", "feature");
        const params = await withTimeout(changed, "mnemon/branchChanged", 10_000).catch((error: Error) => {
            throw new Error(`${error.message} (the status bar and wake documents refresh on it); server stderr:\n${stderr.slice(-2000)}`);
        });
        assert.deepEqual(params, { workspace: folderUri, branch: "feature", detached: false, reason: params.reason, previous: "main" });
        assert.equal(branchFor(await withTimeout(status(connection), "status"), fileUri), "feature");
        const snapshot = await withTimeout(wake(connection, { workspace: folderUri }), "wake on feature");
        assert.ok(snapshot.text.includes(first.added!));
        assert.ok(!snapshot.text.includes("main: the release notes live in CHANGES.md"), snapshot.text);
    });

    it("a settings change (didChangeConfiguration) is pulled again and applied without a restart", async () => {
        const asked = new Promise((resolve) => configurationWaiters.push(resolve));
        currentSettings = { ...settings, runtimeMemory: { ...settings.runtimeMemory, memoryLimitBytes: 20480 } };
        // What vscode-languageclient sends for synchronize.configurationSection = "mnemon".
        await connection.sendNotification("workspace/didChangeConfiguration", { settings: { mnemon: { ...currentSettings, interpreter: [], trace: { server: "off" } } } });
        await withTimeout(asked, "workspace/configuration after didChangeConfiguration");
        let limit = 0;
        for (let i = 0; i < 50 && limit !== 20480; i++) {
            limit = (await withTimeout(status(connection), "status")).workspaces[0].usage.memory.limit;
            if (limit !== 20480) {
                await new Promise((resolve) => setTimeout(resolve, 100));
            }
        }
        assert.equal(limit, 20480);
    });

    it("the extension's settings were accepted (no settings warning, no error shown)", () => {
        // Type 1 = Error, 2 = Warning. A repaired projection legitimately warns (previous test).
        const problems = shown.filter((m) => m.type === 1 || (m.type === 2 && /setting|workspace folder/i.test(m.message)));
        assert.deepEqual(problems, []);
    });

    // ------------------------------------------------------------------ documents (mnemon/documents/*)
    // After the settings check above: the refused create-from-file below makes the server show an error.

    it("documents: create with a CJK title returns the created document, its path under the storage root and the usage", async () => {
        const row = (await withTimeout(status(connection), "status")).workspaces[0];
        const content = "  本番環境へのデプロイは金曜日に行わない。\n\nロールバック手順は runbook.md にある。\n";
        const result = await withTimeout(
            createDocument(connection, { workspace: folderUri, title: "デプロイ  手順書", content, description: "本番の決まり", sourcePaths: ["app.py"] }),
            "documents/create",
        );
        assert.equal(result.success, true);
        assert.equal(result.action, "created");
        assert.equal(result.workspace, folderUri);
        assert.match(result.revision, /^[0-9a-f]{64}$/);
        assert.deepEqual(result.notices, []);
        const doc = result.document;
        assert.match(doc.id, /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
        assert.equal(doc.title, "デプロイ 手順書", "whitespace runs collapse");
        assert.equal(doc.description, "本番の決まり");
        assert.equal(doc.status, "active");
        assert.equal(doc.revision, 1);
        assert.equal(doc.filename, `document-${doc.id.slice(0, 8)}.md`, "a CJK-only title has the slug 'document'");
        assert.equal(doc.relativePath, `documents/active/${doc.filename}`);
        assert.deepEqual(doc.sourcePaths, ["app.py"]);
        assert.equal(doc.content, content.trim());
        assert.equal(doc.contentHash, createHash("sha256").update(content.trim(), "utf8").digest("hex"));
        assert.equal(doc.path, path.join(row.root, doc.relativePath));
        assert.equal(documentPath({ relativePath: doc.relativePath }, row.root), doc.path, "relativePath is relative to the status row's root");
        assert.equal(fs.statSync(doc.path).size, doc.sizeBytes);
        assert.deepEqual(result.usage, { activeBytes: doc.sizeBytes, activeCount: 1, archivedCount: 0, limitBytes: settings.documents?.activeLimitBytes });
        cjkDoc = doc;

        const got = await withTimeout(getDocument(connection, { workspace: folderUri, id: doc.id }), "documents/get");
        assert.equal(got.content, doc.content);
        assert.equal(got.path, doc.path);
        assert.equal(got.workspace, folderUri);
        const catalog = await withTimeout(listDocuments(connection, { workspace: folderUri, status: "active" }), "documents/list");
        // Entries and hits may carry `path` (newer servers); the extension falls back to root + relativePath.
        assert.deepEqual(catalog.documents.map((d) => [d.id, d.healthy, documentPath(d, row.root)]), [[doc.id, true, doc.path]]);
        assert.equal(catalog.total, 1);
        assert.equal(catalog.problem, null);
        await expectMnemonError(getDocument(connection, { workspace: folderUri, id: "no-such-document" }), "not-found");
    });

    it("documents: a CJK query finds the document (title and body), with the absolute path of its file", async () => {
        const root = (await withTimeout(status(connection), "status")).workspaces[0].root;
        for (const query of ["手順書", "デプロイ", "ロールバック"]) {
            const result = await withTimeout(searchDocuments(connection, { workspace: folderUri, query, limit: 20 }), `search ${query}`);
            assert.equal(result.workspace, folderUri);
            // a server without the [semantic] extra says once that search is keyword-only: not what this checks
            assert.deepEqual(result.notices.filter((notice) => !notice.startsWith("semantic recall is off")), []);
            assert.ok(result.total >= 1, `${query}: ${JSON.stringify(result)}`);
            const hit = result.results[0];
            assert.equal(hit.id, cjkDoc.id, query);
            assert.equal(hit.title, cjkDoc.title);
            assert.equal(documentPath(hit, root), cjkDoc.path, "what the extension opens");
            assert.ok(hit.path === undefined || hit.path === cjkDoc.path);
            assert.ok(hit.score > 0);
            assert.ok(hit.excerpt.length > 0);
            assert.equal("content" in hit, false, "no body unless includeContent");
        }
        const titled = await withTimeout(searchDocuments(connection, { workspace: folderUri, query: "手順書" }), "search title");
        assert.equal(titled.results[0].matched, "title");
        const none = await withTimeout(searchDocuments(connection, { workspace: folderUri, query: "存在しない言葉" }), "search nothing");
        assert.deepEqual([none.total, none.results], [0, []]);
    });

    it("documents: an English title hit ranks above a body hit", async () => {
        const body = await withTimeout(
            createDocument(connection, {
                workspace: folderUri,
                title: "Team notes",
                content: "Weekly sync. The deployment checklist is reviewed before every release; ask in #ops.",
            }),
            "create body doc",
        );
        const titled = await withTimeout(
            createDocument(connection, { workspace: folderUri, title: "Deployment checklist", content: "Build, tag, push, then watch the dashboards." }),
            "create title doc",
        );
        bodyDoc = body.document;
        const result = await withTimeout(searchDocuments(connection, { workspace: folderUri, query: "deployment checklist", limit: 20 }), "search");
        const ids = result.results.map((h) => h.id);
        assert.ok(ids.includes(titled.document.id) && ids.includes(bodyDoc.id), JSON.stringify(result.results));
        assert.ok(ids.indexOf(titled.document.id) < ids.indexOf(bodyDoc.id), `title hit first: ${JSON.stringify(result.results.map((h) => [h.title, h.score, h.matched]))}`);
        assert.equal(result.results[0].matched, "title");
        assert.equal(result.matches, result.total);
        await expectMnemonError(searchDocuments(connection, { workspace: folderUri, query: "x", limit: 0 }), "invalid-input");
    });

    it("documents: a stale documentRevision is revision-conflict; an archived document cannot be updated (document-status)", async () => {
        const updated = await withTimeout(
            updateDocument(connection, { workspace: folderUri, id: bodyDoc.id, content: `${bodyDoc.content}\nMoved to Thursdays.`, documentRevision: 1 }),
            "update",
        );
        assert.equal(updated.action, "updated");
        assert.equal(updated.document.revision, 2);
        const conflict = await expectMnemonError(
            archiveDocument(connection, { workspace: folderUri, id: bodyDoc.id, documentRevision: 1 }),
            "revision-conflict",
        );
        assert.deepEqual([(conflict.data as { expected?: number }).expected, (conflict.data as { actual?: number }).actual], [1, 2]);
        assert.equal((await withTimeout(getDocument(connection, { workspace: folderUri, id: bodyDoc.id }), "get")).status, "active", "nothing changed");

        const archived = await withTimeout(
            archiveDocument(connection, { workspace: folderUri, id: bodyDoc.id, documentRevision: 2, summary: "Superseded by the checklist." }),
            "archive",
        );
        assert.equal(archived.action, "archived");
        assert.equal(archived.document.status, "archived");
        assert.equal(archived.document.revision, 3);
        assert.equal(archived.document.archiveSummary, "Superseded by the checklist.");
        assert.equal(archived.document.relativePath, `documents/archived/${bodyDoc.filename}`);
        assert.ok(fs.existsSync(archived.document.path) && !fs.existsSync(updated.document.path));
        assert.equal(archived.usage.archivedCount, 1);

        const statusError = await expectMnemonError(
            updateDocument(connection, { workspace: folderUri, id: bodyDoc.id, title: "Team notes (edited)" }),
            "document-status",
        );
        assert.deepEqual([(statusError.data as { status?: string }).status, (statusError.data as { required?: string }).required], ["archived", "active"]);

        const search = await withTimeout(searchDocuments(connection, { workspace: folderUri, query: "Thursdays" }), "search active only");
        assert.equal(search.total, 0, "archived documents are left out by default");
        const withArchived = await withTimeout(searchDocuments(connection, { workspace: folderUri, query: "Thursdays", includeArchived: true }), "search archived");
        assert.deepEqual(withArchived.results.map((h) => [h.id, h.status]), [[bodyDoc.id, "archived"]]);

        const restored = await withTimeout(restoreDocument(connection, { workspace: folderUri, id: bodyDoc.id, documentRevision: 3 }), "restore");
        assert.deepEqual([restored.action, restored.document.status, restored.document.revision], ["restored", "active", 4]);
        await expectMnemonError(restoreDocument(connection, { workspace: folderUri, id: bodyDoc.id }), "document-status");
    });

    it("documents: mnemon.server.createDocumentFromFile (workspace/executeCommand) creates from a workspace file, shown once", async () => {
        const relative = "notes/設計 メモ.md";
        const file = path.join(repo, ...relative.split("/"));
        fs.mkdirSync(path.dirname(file), { recursive: true });
        const text = "Intro line.\n\n# Cache design 設計\n\nEntries expire after 10 minutes.\n";
        fs.writeFileSync(file, text);
        const uri = pathToFileURL(file).href;
        const before = showDocuments.length;
        const result = await withTimeout(createDocumentFromFile(connection, { uri }), "createDocumentFromFile");
        assert.ok(result.success, JSON.stringify(result));
        assert.equal(result.action, "created");
        assert.equal(result.workspace, folderUri);
        assert.equal(result.document.title, "Cache design 設計", "title from the first Markdown heading");
        assert.equal(result.document.content, text.trim(), "content = the file text");
        assert.deepEqual(result.document.sourcePaths, [relative], "the one source path, workspace-relative");
        assert.equal(result.path, result.document.path);
        assert.equal(result.uri, pathToFileURL(result.path).href);
        assert.equal(result.shown, true, "the client supports window/showDocument, so the server opened it");
        assert.deepEqual(showDocuments.slice(before).map((p) => p.uri), [result.uri], "opened exactly once, by the server");
        assert.equal(fs.readFileSync(file, "utf8"), text, "the source file is never modified");

        const root = (await withTimeout(status(connection), "status")).workspaces[0].root;
        const index = JSON.parse(fs.readFileSync(path.join(root, "documents", "index.json"), "utf8")) as { documents: { id: string; sourcePaths: string[]; title: string }[] };
        const record = index.documents.find((d) => d.id === result.document.id);
        assert.deepEqual(record && [record.title, record.sourcePaths], ["Cache design 設計", [relative]]);

        // No heading: the title is the file name without its extension.
        fs.writeFileSync(path.join(repo, "plain.txt"), "just text\n");
        const plain = await withTimeout(createDocumentFromFile(connection, { uri: pathToFileURL(path.join(repo, "plain.txt")).href }), "plain");
        assert.ok(plain.success && plain.document.title === "plain", JSON.stringify(plain));
    });

    it("documents: createDocumentFromFile on a file outside the workspace is success false with an error code (and the server says so)", async () => {
        const outside = path.join(tmp, "outside.md");
        fs.writeFileSync(outside, "# Outside\n\nnot in the workspace\n");
        const before = { shown: shown.length, documents: showDocuments.length };
        const result = await withTimeout(createDocumentFromFile(connection, { uri: pathToFileURL(outside).href }), "outside");
        assert.equal(result.success, false);
        assert.ok(!result.success);
        assert.equal(result.error.code, "not-in-workspace");
        assert.ok(result.error.message.length > 0);
        assert.equal(showDocuments.length, before.documents, "nothing to open");
        // The server shows the refusal itself (the extension only logs it, so it is not shown twice).
        await waitFor(() => shown.length > before.shown, "window/showMessage");
        assert.ok(shown.slice(before.shown).some((m) => m.type === 1 && m.message.includes("no document created")), JSON.stringify(shown.slice(before.shown)));

        const missing = await withTimeout(createDocumentFromFile(connection, { uri: pathToFileURL(path.join(repo, "missing.md")).href }), "missing");
        assert.ok(!missing.success && missing.error.code === "invalid-input" && missing.error.field === "path", JSON.stringify(missing));
        const catalog = await withTimeout(listDocuments(connection, { workspace: folderUri }), "list");
        assert.ok(catalog.documents.every((d) => d.title !== "Outside"), "nothing was created");
    });

    // ------------------------------------------------------------------------------ memory spaces

    let spaceId: string;
    let rememberedId: string;

    it("providers: the list names every reference provider with its state and no field values; the tree is built from it", async () => {
        const listed = await withTimeout(listProviders(connection, { workspace: folderUri }), "providers/list");
        assert.equal(listed.workspace, folderUri);
        const ids = listed.providers.map((p) => p.providerId);
        for (const id of ["openviking", "honcho", "mem0", "hindsight", "holographic", "retaindb", "byterover", "supermemory"]) {
            assert.ok(ids.includes(id), `${id} is listed: ${JSON.stringify(ids)}`);
        }
        for (const p of listed.providers) {
            assert.equal(typeof p.installed, "boolean");
            assert.equal(p.configured, false, `${p.providerId} is not configured in a fresh root`);
            assert.equal(p.enabled, false);
            assert.deepEqual(p.configuredSecrets, []);
            assert.equal(p.capabilities === null, !p.installed || p.capabilities === null);
        }
        const nodes = providersTree(folderUri, listed.providers, new Map());
        // The installed providers, then one "Not installed" row holding the others.
        const leaves = nodes.flatMap((n) => (n.contextValue === "mnemon.provider.group" ? (n.children ?? []) : [n]));
        assert.deepEqual(leaves.map((n) => n.label).sort(), listed.providers.map((p) => p.label).sort());
        assert.equal(nodes.filter((n) => n.contextValue === "mnemon.provider.group").length, listed.providers.some((p) => !p.installed) ? 1 : 0);
        for (const node of [...nodes, ...leaves]) assert.ok((CONTEXT_VALUES as readonly string[]).includes(node.contextValue), node.contextValue);
        const missing = listed.providers.find((p) => !p.installed);
        assert.ok(missing, "at least one reference provider is not installed here");
        // Configuring a provider whose package is not installed is refused and names it; nothing is stored.
        const error = await withTimeout(configureProvider(connection, { workspace: folderUri, providerId: missing.providerId, services: { endpoint: "http://127.0.0.1:1" } }).then(
            () => assert.fail("configure of a provider that is not installed succeeded"), (e: unknown) => e), "configure");
        assert.equal(asMnemonError(error)?.code, "provider-not-configured", JSON.stringify(error));
        assert.match(asMnemonError(error)?.message ?? "", new RegExp(`${missing.providerId} is not installed`));
        const again = await withTimeout(listProviders(connection, { workspace: folderUri }), "providers/list");
        assert.equal(again.providers.find((p) => p.providerId === missing.providerId)?.configured, false);
    });

    it("spaces: the first space created is `default`; it is listed, active only when activated", async () => {
        const before = await withTimeout(listSpaces(connection, { workspace: folderUri }), "list");
        assert.deepEqual(before.spaces, [], JSON.stringify(before));
        const created = await withTimeout(createSpace(connection, { workspace: folderUri, name: "Project notes", description: "Facts about this repo" }), "create");
        assert.equal(created.id, "default");
        assert.equal(created.name, "Project notes");
        assert.equal(created.active, false);
        assert.equal(created.kind, "native");
        assert.equal(created.workspace, folderUri);
        spaceId = created.id;
        assert.deepEqual((await withTimeout(listSpaces(connection, { workspace: folderUri, activeOnly: true }), "active")).spaces, []);
        const activated = await withTimeout(activateSpace(connection, { workspace: folderUri, spaceId }), "activate");
        assert.equal(activated.active, true);
        const active = await withTimeout(listSpaces(connection, { workspace: folderUri, activeOnly: true }), "active");
        assert.deepEqual(active.spaces.map((s) => s.id), ["default"]);
    });

    it("spaces: remember commits into the space and recall finds it (English and CJK)", async () => {
        const receipt = await withTimeout(rememberInSpace(connection, { workspace: folderUri, content: "The deploy script lives in tools/release.sh", spaceId }), "remember");
        assert.equal(receipt.status, "committed", JSON.stringify(receipt));
        assert.equal(receipt.spaceId, spaceId);
        assert.equal(receipt.spaceName, "Project notes");
        assert.ok(typeof receipt.id === "string" && receipt.id.length > 0);
        rememberedId = receipt.id!;
        const cjk = await withTimeout(rememberInSpace(connection, { workspace: folderUri, content: "今天玩成语接龙游戏", spaceId }), "remember cjk");
        assert.equal(cjk.status, "committed", JSON.stringify(cjk));

        const found = await withTimeout(recall(connection, { workspace: folderUri, query: "deploy script" }), "recall");
        assert.equal(found.workspace, folderUri);
        const hit = found.results.find((r) => r.id === rememberedId);
        assert.ok(hit, JSON.stringify(found));
        assert.equal(hit.spaceId, spaceId);
        assert.equal(hit.spaceName, "Project notes");
        assert.equal(hit.content, "The deploy script lives in tools/release.sh");
        assert.ok(["high", "medium", "low", "unknown"].includes(hit.tier));
        assert.ok(Array.isArray(hit.tags));
        assert.deepEqual(Object.keys(found.hidden).sort(), ["detachedHead", "otherBranch"]);
        assert.ok(Array.isArray(found.notices));

        const chinese = await withTimeout(recall(connection, { workspace: folderUri, query: "接龙" }), "recall cjk");
        assert.ok(chinese.results.some((r) => r.id === cjk.id && r.content === "今天玩成语接龙游戏"), JSON.stringify(chinese));
    });

    it("spaces: scopeToBranch tags the item for main; after checking out another branch recall hides it and counts it", async () => {
        git(repo, gitEnv, "checkout", "-q", "main");
        const receipt = await withTimeout(
            rememberInSpace(connection, { workspace: folderUri, content: "Main-only migration flag is ZEBRAFISH", spaceId, scopeToBranch: true }),
            "remember for branch",
        );
        assert.equal(receipt.status, "committed", JSON.stringify(receipt));
        assert.ok((receipt.tags ?? []).includes("branch:main"), JSON.stringify(receipt));
        const onMain = await withTimeout(recall(connection, { workspace: folderUri, query: "ZEBRAFISH migration flag" }), "recall on main");
        assert.ok(onMain.results.some((r) => r.id === receipt.id), JSON.stringify(onMain));
        assert.equal(onMain.branch.name, "main");

        git(repo, gitEnv, "checkout", "-q", "-b", "other");
        const onOther = await withTimeout(recall(connection, { workspace: folderUri, query: "ZEBRAFISH migration flag" }), "recall on other");
        assert.equal(onOther.branch.name, "other");
        assert.ok(!onOther.results.some((r) => r.id === receipt.id), JSON.stringify(onOther));
        assert.ok(onOther.hidden.otherBranch >= 1, JSON.stringify(onOther.hidden));
    });

    it("spaces: forget by id removes the item from recall", async () => {
        const receipt = await withTimeout(forgetInSpace(connection, { workspace: folderUri, spaceId, id: rememberedId }), "forget");
        assert.equal(receipt.status, "committed", JSON.stringify(receipt));
        assert.equal(receipt.action, "deleted");
        assert.equal(receipt.id, rememberedId);
        const after = await withTimeout(recall(connection, { workspace: folderUri, query: "deploy script" }), "recall after forget");
        assert.ok(!after.results.some((r) => r.id === rememberedId), JSON.stringify(after));
        // Forgetting it again is a missing match (no-match, exit 3 on the CLI) naming the field.
        const again = await expectMnemonError(forgetInSpace(connection, { workspace: folderUri, spaceId, id: rememberedId }), "no-match");
        assert.equal((again.data as { field?: string }).field, "id");
    });

    it("spaces: an empty query is invalid-input; naming an inactive space is invalid-input (spaces[0])", async () => {
        const empty = await expectMnemonError(recall(connection, { workspace: folderUri, query: "" }), "invalid-input");
        assert.equal((empty.data as { field?: string }).field, "query", JSON.stringify(empty.data));
        await expectMnemonError(recall(connection, { workspace: folderUri, query: "   " }), "invalid-input");

        const second = await withTimeout(createSpace(connection, { workspace: folderUri, name: "Scratch", description: "inactive" }), "create 2");
        assert.notEqual(second.id, "default");
        assert.equal(second.active, false);
        const inactive = await expectMnemonError(recall(connection, { workspace: folderUri, query: "anything", spaces: [second.id] }), "invalid-input");
        assert.equal((inactive.data as { field?: string }).field, "spaces[0]", JSON.stringify(inactive.data));
        await expectMnemonError(recall(connection, { workspace: folderUri, query: "anything", spaces: ["no-such-space"] }), "invalid-input");

        // With two active spaces, a write without a target is refused.
        await withTimeout(activateSpace(connection, { workspace: folderUri, spaceId: second.id }), "activate 2");
        const untargeted = await expectMnemonError(rememberInSpace(connection, { workspace: folderUri, content: "where does this go?" }), "invalid-input");
        assert.equal((untargeted.data as { field?: string }).field, "spaceId");
        await withTimeout(deactivateSpace(connection, { workspace: folderUri, spaceId: second.id }), "deactivate 2");
    });

    it("remember selection (the server's command): a selected comment loses its markers; into an inactive space the receipt says what activating it changed", async () => {
        fs.writeFileSync(path.join(repo, "deploy.py"), "# Deploy with make release\n# (needs the VPN)\nrelease()\n");
        const file = pathToFileURL(path.join(repo, "deploy.py")).href;
        const range = { start: { line: 0, character: 0 }, end: { line: 1, character: 17 } };
        const receipt = await withTimeout(rememberSelectionInMemory(connection, { uri: file, text: "# Deploy with make release\n# (needs the VPN)", range, languageId: "python" }), "remember selection");
        assert.equal(receipt.added, "Deploy with make release (needs the VPN)");
        // the selection's lines, cited as saved (the server hashes them)
        const cites = (receipt as unknown as { cites?: { path: string; startLine: number; endLine: number; freshness: string }[] }).cites;
        assert.deepEqual(cites?.map((c) => [c.path, c.startLine, c.endLine, c.freshness]), [["deploy.py", 1, 2, "fresh"]]);
        const spaces = (await withTimeout(listSpaces(connection, { workspace: folderUri }), "list")).spaces;
        const scratch = spaces.find((s) => s.name === "Scratch")!;
        assert.equal(scratch.active, false);
        const written = await withTimeout(rememberSelectionInSpace(connection, { uri: file, text: "// the cache is per tenant", languageId: "typescript", spaceId: scratch.id }), "into a space");
        assert.equal(written.activated, true, JSON.stringify(written));
        assert.deepEqual(written.activeSpaces, [{ id: "default", name: "Project notes" }, { id: scratch.id, name: "Scratch" }]);
        assert.equal(spaceReceiptMessage(written), "Mnemon: Remembered in Scratch. Scratch was inactive and is now active: recall reads it. 2 spaces are active " +
            "(Project notes, Scratch), so a remember that names no space (an assistant's mnemon_remember, mnemon-ls remember) must name one.");
        const found = await withTimeout(recall(connection, { workspace: folderUri, query: "cache per tenant", spaces: [scratch.id] }), "recall");
        assert.deepEqual(found.results.map((r) => r.content), ["the cache is per tenant"]);
        await withTimeout(deactivateSpace(connection, { workspace: folderUri, spaceId: scratch.id }), "deactivate");
        // Refused: the same error a request gets (code, number, data).
        const refused = await withTimeout(rememberSelectionInMemory(connection, { uri: file, text: "a § b" }).then(() => undefined, (e: unknown) => e), "refused");
        assert.equal(asMnemonError(refused)?.code, "invalid-input");
        assert.equal(asMnemonError(refused)?.rpcCode, ErrorCode["invalid-input"]);
        assert.equal(asMnemonError(refused)?.data.field, "content");
    });

    it("language-model tools: every contributed tool runs against the real server and answers text", async () => {
        const runtime = await withTimeout(invokeTool(connection, "mnemon_runtime_memory", folderUri,
            { action: "add", content: "LM tools reach the running server" }), "runtime tool");
        assert.match(runtime, /^Entry added\. MEMORY\.md: \d+ entries, \d+\/20480 UTF-8 bytes; revision [0-9a-f]{12}$/);
        const wakeText = await withTimeout(invokeTool(connection, "mnemon_wake", folderUri, {}), "wake tool");
        assert.ok(wakeText.startsWith("MNEMON RUNTIME MEMORY SNAPSHOT\n") && wakeText.includes("LM tools reach the running server"));
        // the tools pass citations through (issue 24 item 2): the memory cites the lines, hashed by the server
        fs.writeFileSync(path.join(repo, "quokka.py"), "ROLLOUT = 'quokka'\nSTAGES = 3\n");
        const remembered = await withTimeout(invokeTool(connection, "mnemon_remember", folderUri,
            { content: "The LM tool remembered the QUOKKA rollout", scope_to_branch: false,
              cites: [{ path: "quokka.py", startLine: 1, endLine: 2 }] }), "remember tool");
        assert.match(remembered, /^committed: Remembered in .+\.\nspace: .+ \(.+\)\nid: [0-9a-f-]{36}\ncites: quokka\.py:1-2 \(fresh\)$/);
        // every tool is one mnemon/tool request; the server answers the text (as an assistant: it withholds
        // what it found by meaning alone with low confidence)
        const asked: { method: string; params: any }[] = [];
        const spy = {
            sendRequest: async (method: string, params: unknown) => {
                asked.push({ method, params });
                return connection.sendRequest(method, params);
            },
        };
        const found = await withTimeout(invokeTool(spy, "mnemon_recall", folderUri, { query: "QUOKKA rollout", limit: 12 }), "recall tool");
        assert.ok(found.startsWith("1. The LM tool remembered the QUOKKA rollout\n   space: "), found);
        const docs = await withTimeout(invokeTool(spy, "mnemon_document_search", folderUri, { query: "数据库" }), "document tool");
        assert.match(docs, /\d+ result\(s\)$/);
        assert.deepEqual(asked.map((a) => [a.method, a.params.name]), [["mnemon/tool", "mnemon_recall"], ["mnemon/tool", "mnemon_document_search"]]);
        const tooMany = await withTimeout(invokeTool(connection, "mnemon_recall", folderUri, { query: "QUOKKA", limit: 50 }), "limit 50");
        assert.match(tooMany, /^Error: invalid-input: arguments\.limit: /);
        // A bad input comes back as text the model can act on, with the server's stable code.
        const bad = await withTimeout(invokeTool(connection, "mnemon_runtime_memory", folderUri, { action: "add", content: "a\n§\nb" }), "bad input");
        assert.match(bad, /^Error: invalid-input: content: /);
        await assert.rejects(invokeTool(connection, "mnemon_nope", folderUri, {}), /unknown Mnemon tool mnemon_nope/);
        for (const [name, spec] of Object.entries(TOOLS)) {
            assert.equal(spec.writes, Boolean(spec.confirm), `${name}: a write asks for confirmation, a read does not`);
        }
    });

    // ------------------------------------------------------------------ the Mnemon view (src/views.ts, src/trees.ts)

    const changedOf = (source: MemoryChangedParams["source"]) =>
        nextNotification<MemoryChangedParams>(waiters, Notification.memoryChanged, (p) => p.workspace === folderUri && p.source === source);

    const flatten = (nodes: Node[]): Node[] => nodes.flatMap((n) => [n, ...flatten(n.children ?? [])]);

    it("views: a write sends mnemon/memoryChanged (runtime); the runtime tree shows importance, age and branches", async () => {
        const row = (await withTimeout(status(connection), "status")).workspaces[0];
        assert.ok(row.branch, "a branch is checked out");
        const changed = changedOf("runtime");
        await withTimeout(mutate(connection, { workspace: folderUri, action: "add", content: "View: critical and scoped", importance: "critical", branches: [row.branch!] }), "add");
        assert.deepEqual(await withTimeout(changed, "mnemon/memoryChanged runtime", 10_000), { workspace: folderUri, source: "runtime" });
        const snapshot = await withTimeout(runtimeSnapshot(connection, folderUri), "snapshot");
        const tree = runtimeTree(snapshot, row, Date.now());
        assert.deepEqual(tree.map((n) => n.label), ["USER.md", "MEMORY.md"]);
        const node = flatten(tree).find((n) => n.label === "View: critical and scoped");
        assert.ok(node, JSON.stringify(tree.map((n) => n.description)));
        assert.equal(node.description, `critical · today · ⎇ ${row.branch}`);
        assert.equal(node.contextValue, "mnemon.entry.memory.branch");
        assert.match(tree[1].description ?? "", new RegExp(`^${snapshot.entries.filter((e) => e.target === "memory").length} entries`));
    });

    it("views: editing an entry to contain §, to 8 KiB + 1 or past capacity is refused and changes nothing", async () => {
        const before = await withTimeout(runtimeSnapshot(connection, folderUri), "snapshot");
        const oldText = "View: critical and scoped";
        const section = await expectMnemonError(mutate(connection, { workspace: folderUri, action: "replace", oldText, content: "one\n§\ntwo" }), "invalid-input");
        assert.equal((section.data as { field?: string }).field, "content");
        const big = await expectMnemonError(mutate(connection, { workspace: folderUri, action: "replace", oldText, content: "x".repeat(8193) }), "invalid-input");
        assert.equal((big.data as { field?: string }).field, "content");
        // Past capacity: fill MEMORY.md with 8000-, then 1000-, then 100-byte entries until none fits.
        const fillers: string[] = [];
        let capacity: ResponseError<unknown> | undefined;
        for (const size of [8000, 1000, 100]) {
            for (let i = 0; i < 200; i += 1) {
                const content = `${size}-${i} ${"filler ".repeat(Math.ceil(size / 7))}`.slice(0, size).trim();
                try {
                    await withTimeout(mutate(connection, { workspace: folderUri, action: "add", content }), "fill");
                    fillers.push(content);
                } catch (error) {
                    capacity = error as ResponseError<unknown>;
                    break;
                }
            }
        }
        assert.ok(capacity, "MEMORY.md filled up");
        const decoded = asMnemonError(capacity)!;
        assert.equal(decoded.code, "runtime-capacity");
        const full = await withTimeout(runtimeSnapshot(connection, folderUri), "full");
        const edit = await expectMnemonError(mutate(connection, { workspace: folderUri, action: "replace", oldText, content: "y".repeat(8000) }), "runtime-capacity");
        const text = errorMessage("not edited", asMnemonError(edit)!);
        const { used, projected, limit } = asMnemonError(edit)!.data as { used: number; projected: number; limit: number };
        assert.equal(text, `Mnemon: not edited: MEMORY.md is full: this change would make it ${formatUsage(projected, limit)} (now ${formatBytes(used)}). [runtime-capacity]`);
        assert.equal(text.split("full").length, 2, `said once: ${text}`);
        assert.equal((await withTimeout(runtimeSnapshot(connection, folderUri), "after")).revision, full.revision, "a refused edit changes nothing");
        // The tree shows the capacity state with its actions.
        const row = (await withTimeout(status(connection), "status")).workspaces[0];
        const memory = runtimeTree(full, row, Date.now())[1];
        assert.equal(memory.contextValue, "mnemon.target.memory.full");
        assert.equal((memory.children ?? [])[0].contextValue, "mnemon.capacity");
        for (const content of fillers) {
            await withTimeout(mutate(connection, { workspace: folderUri, action: "remove", oldText: content }), "unfill");
        }
        const after = await withTimeout(runtimeSnapshot(connection, folderUri), "unfilled");
        assert.deepEqual(after.entries.map((e) => e.content), before.entries.map((e) => e.content));
    });

    it("views: an entry another editor removed is a conflict, never a substring match of another entry", async () => {
        await withTimeout(mutate(connection, { workspace: folderUri, action: "add", content: "conflict alpha beta gamma" }), "add long");
        await withTimeout(mutate(connection, { workspace: folderUri, action: "add", content: "conflict alpha beta" }), "add short");
        const drawn = await withTimeout(runtimeSnapshot(connection, folderUri), "drawn");
        // Another editor (a second window, the CLI) removes the short one.
        await withTimeout(mutate(connection, { workspace: folderUri, action: "remove", oldText: "conflict alpha beta" }), "other editor");
        const fresh = await withTimeout(runtimeSnapshot(connection, folderUri), "fresh");
        assert.notEqual(fresh.revision, drawn.revision);
        assert.equal(entryStillThere(fresh, "memory", "conflict alpha beta"), false, "the view refuses, refreshes and says so");
        assert.match(conflictMessage("memory", "conflict alpha beta"), /no longer there.*nothing was changed/);
        // Why the guard: the server alone would match the other entry by substring.
        const plan = fresh.entries.filter((e) => e.content.includes("conflict alpha beta"));
        assert.deepEqual(plan.map((e) => e.content), ["conflict alpha beta gamma"]);
        await withTimeout(mutate(connection, { workspace: folderUri, action: "remove", oldText: "conflict alpha beta gamma" }), "cleanup");
    });

    it("views: documents active and archived, with mnemon/memoryChanged (documents)", async () => {
        const changed = changedOf("documents");
        const created = await withTimeout(createDocument(connection, { workspace: folderUri, title: "View handoff", content: "Body of the handoff" }), "create");
        await withTimeout(changed, "mnemon/memoryChanged documents", 10_000);
        await withTimeout(archiveDocument(connection, { workspace: folderUri, id: created.document.id, documentRevision: created.document.revision }), "archive");
        const tree = documentsTree(await withTimeout(listDocuments(connection, { workspace: folderUri }), "list"), Date.now());
        const archived = tree.find((n) => n.label === "Archived")!;
        const node = (archived.children ?? []).find((n) => n.label === "View handoff");
        assert.ok(node, JSON.stringify(archived));
        assert.equal(node.contextValue, "mnemon.document.archived");
        assert.deepEqual(node.command?.arguments, [{ workspace: folderUri, id: created.document.id, title: "View handoff" }]);
        await withTimeout(restoreDocument(connection, { workspace: folderUri, id: created.document.id, documentRevision: created.document.revision + 1 }), "restore");
        const again = documentsTree(await withTimeout(listDocuments(connection, { workspace: folderUri }), "list"), Date.now());
        assert.ok((again[0].children ?? []).some((n) => n.label === "View handoff" && n.contextValue === "mnemon.document.active"));
    });

    it("views: a space with an empty or 101-character name is refused (field name) and nothing is created", async () => {
        const before = await withTimeout(listSpaces(connection, { workspace: folderUri }), "list");
        for (const name of ["", "   ", "n".repeat(101)]) {
            const error = await expectMnemonError(createSpace(connection, { workspace: folderUri, name, description: "d" }), "invalid-input");
            assert.equal((error.data as { field?: string }).field, "name", JSON.stringify(error.data));
        }
        const after = await withTimeout(listSpaces(connection, { workspace: folderUri }), "list");
        assert.deepEqual(after.spaces.map((s) => s.id), before.spaces.map((s) => s.id));
        const changed = changedOf("spaces");
        const space = await withTimeout(createSpace(connection, { workspace: folderUri, name: "n".repeat(100), description: "ok" }), "create 100");
        await withTimeout(changed, "mnemon/memoryChanged spaces", 10_000);
        const nodes = spacesTree(folderUri, (await withTimeout(listSpaces(connection, { workspace: folderUri }), "list")).spaces);
        assert.ok(nodes.some((n) => n.contextValue === "mnemon.space.inactive" && n.label === space.name));
    });

    it("views: the proposals tree lists what an assistant proposed", async () => {
        await withTimeout(proposeRecord(connection, { workspace: folderUri, title: "View proposal", content: "Use the view" }), "propose");
        const nodes = proposalsTree(folderUri, await withTimeout(listProposals(connection, folderUri), "proposals"));
        assert.ok(nodes.some((n) => n.label === "View proposal" && n.contextValue === "mnemon.proposal"), JSON.stringify(nodes.map((n) => n.label)));
    });

    it("packs: export leaves USER.md entries out unless includeUserProfile, and the message counts them", async () => {
        await withTimeout(mutate(connection, { workspace: folderUri, action: "add", target: "user", content: "Prefers tabs over spaces" }), "add user entry");
        const user = (await withTimeout(runtimeSnapshot(connection, folderUri), "snapshot")).entries.filter((e) => e.target === "user");
        assert.ok(user.length >= 1);
        const out = path.join(tmp, "packs");
        fs.mkdirSync(out);
        const without = path.join(out, "without.zip");
        const left = await withTimeout(exportPack(connection, { workspace: folderUri, packScope: "runtime", path: without, includeUserProfile: false }), "export");
        assert.equal(left.path, without);
        assert.equal(fs.statSync(without).size, left.bytes);
        assert.deepEqual(left.userProfile, { carried: 0, leftOut: user.length });
        assert.ok(exportedMessage(left, without).includes(
            `to ${without} (${formatBytes(left.bytes)})`) && exportedMessage(left, without).includes(`USER.md: ${user.length} ${user.length === 1 ? "entry" : "entries"} left out`));
        const withProfile = path.join(out, "with.zip");
        const carried = await withTimeout(exportPack(connection, { workspace: folderUri, packScope: "full", path: withProfile, includeUserProfile: true }), "export");
        assert.deepEqual(carried.userProfile, { carried: user.length, leftOut: 0 });
        assert.deepEqual(carried.components, ["runtime", "documents", "memory-spaces"]);
        assert.match(exportedMessage(carried, withProfile), /USER\.md: carries \d+ entr(y|ies) \(your user profile\)/);
        const inspected = await withTimeout(inspectPack(connection, folderUri, withProfile), "inspect");
        assert.equal(inspected.userProfile, user.length);
        assert.equal((await withTimeout(inspectPack(connection, folderUri, without), "inspect")).userProfile, 0);
    });

    it("compaction: a full USER.md is announced with its plan; a person's merge and drop with its numbers commit the pending change, said once", async () => {
        const user = (await withTimeout(runtimeSnapshot(connection, folderUri), "user")).entries.filter((e) => e.target === "user");
        for (const e of user) { // start from an empty USER.md (the pack test above added to it)
            await withTimeout(mutate(connection, { workspace: folderUri, action: "remove", target: "user", oldText: e.content }), "empty");
        }
        const facts = ["alpha", "beta", "gamma"].map((w) => `${w}: ${Array.from({ length: 170 }, (_, i) => `${w}-${i}`).join(" ")}`);
        for (const content of facts.slice(0, 2)) {
            await withTimeout(mutate(connection, { workspace: folderUri, action: "add", target: "user", content }), "fill");
        }
        const required = nextNotification<MaintenanceRequiredParams>(waiters, MaintenanceNotification.required, () => true);
        const full = await expectMnemonError(mutate(connection, { workspace: folderUri, action: "add", target: "user", content: facts[2] }), "runtime-capacity");
        assert.ok(announcedByServer(asMnemonError(full)), "the request's error is left to the notice");
        const notice = await withTimeout(required, "maintenanceRequired");
        assert.equal(notice.message, USER_FULL_MESSAGE);
        const snapshot = await withTimeout(runtimeSnapshot(connection, folderUri), "snapshot");
        assert.deepEqual(notice.plan.entries, numberEntries(snapshot.entries, "user").map(({ branches, ...e }) => e),
            "the plan numbers the entries as the snapshot lists them (as `runtime list` prints them)");
        const completed = nextNotification<MaintenanceCompletedParams>(waiters, MaintenanceNotification.completed, () => true);
        const result = await withTimeout(compactRuntime(connection, { workspace: folderUri, target: "user", revision: notice.plan.revision,
            pending: notice.plan.pending, merge: [{ sourceIndexes: [1], content: "alpha: the short form" }], drop: [2] }), "compact");
        assert.deepEqual(result.maintenance.dropped, [2]);
        const done = await withTimeout(completed, "maintenanceCompleted");
        assert.equal(maintenanceCompletedMessage(done), `Mnemon: USER.md compacted: rewrote 1 as “alpha: the short form”; dropped 2; `
            + `${result.maintenance.bytesBefore} → ${result.maintenance.bytesAfter} bytes (the old text is kept in runtime/archived/).`);
        const after = (await withTimeout(runtimeSnapshot(connection, folderUri), "after")).entries.filter((e) => e.target === "user");
        assert.deepEqual(after.map((e) => e.content), ["alpha: the short form", facts[2]]);
        // a refused compaction changes nothing: entry 3 does not exist now
        const refused = await expectMnemonError(compactRuntime(connection, { workspace: folderUri, target: "user", drop: [3] }), "invalid-input");
        assert.equal(errorMessage("not compacted", asMnemonError(refused)!),
            "Mnemon: not compacted: drop[0]: entry 3 does not exist: USER.md has entries 1..2 [invalid-input]");
        for (const e of after) {
            await withTimeout(mutate(connection, { workspace: folderUri, action: "remove", target: "user", oldText: e.content }), "unfill");
        }
    });

    it("needs review: a memory whose cited code changed is listed, re-anchored (still true), edited and removed through each Source's request", async () => {
        const lib = path.join(repo, "cited_lib.py");
        fs.writeFileSync(lib, "def parse(text):\n    return text.split()\n");
        await withTimeout(connection.sendRequest("mnemon/runtime/mutate", { workspace: folderUri, action: "add", content: "Review: parse splits on whitespace",
            cites: [{ path: "cited_lib.py", startLine: 1, endLine: 2 }] }), "add citing");
        await withTimeout(connection.sendRequest("mnemon/records/create", { workspace: folderUri, title: "Parser", content: "parse returns a list",
            cites: [{ path: "cited_lib.py", startLine: 2 }] }), "record citing");
        assert.deepEqual((await withTimeout(listReview(connection, folderUri), "review")).memories, []);
        assert.deepEqual(reviewTree(await withTimeout(listReview(connection, folderUri), "review")).map((n) => n.label), ["No memory needs review"]);
        fs.writeFileSync(lib, "def parse(text):\n    return text.split(',')\n");
        // saved in the editor: VS Code sends didSave, which the server takes at once (a change made outside the
        // editor is seen when the server's cited-file watch reports it, tests/lsp/test_cited_lens.py)
        await connection.sendNotification("textDocument/didSave", { textDocument: { uri: pathToFileURL(lib).href } });
        const review = await withTimeout(listReview(connection, folderUri), "review after the change");
        assert.deepEqual(review.memories.map((m) => [m.source, m.preview, m.cites.map((c) => c.freshness)]), [
            ["runtime", "Review: parse splits on whitespace", ["changed"]],
            ["records", "Parser: parse returns a list", ["changed"]],
        ]);
        const nodes = reviewTree(review);
        assert.deepEqual(nodes.map((n) => [n.label, n.description, n.contextValue]), [
            ["Review: parse splits on whitespace", "MEMORY.md · 0d · code changed", "mnemon.review.memory"],
            ["Parser: parse returns a list", "Record · 0d · code changed", "mnemon.review.memory"],
        ]);
        assert.deepEqual(nodes[0].children?.map((c) => c.label), ["cited_lib.py:1-2 (changed)"]);
        for (const node of nodes) {
            assert.ok((CONTEXT_VALUES as readonly string[]).includes(node.contextValue));
        }
        const [entry, record] = review.memories;
        const done = await withTimeout(reanchor(connection, folderUri, entry), "reanchor");
        assert.equal(reanchoredMessage(done), "Mnemon: re-anchored 1 citation to the current code. Next review in 90 days.");
        assert.deepEqual(done.cites.map((c) => c.freshness), ["fresh"]);
        const edit = editRequest(folderUri, record, "parse returns a list of comma-separated fields")!;
        await withTimeout(connection.sendRequest(edit.method, edit.params), "edit record");
        const again = await withTimeout(listReview(connection, folderUri), "review after re-anchor and edit");
        assert.deepEqual(again.memories.map((m) => [m.source, m.content]), [["records", "parse returns a list of comma-separated fields"]]);
        const remove = removeRequest(folderUri, again.memories[0]);
        await withTimeout(connection.sendRequest(remove.method, remove.params), "forget record");
        assert.deepEqual((await withTimeout(listReview(connection, folderUri), "review after remove")).memories, []);
        const bad = await expectMnemonError(reanchor(connection, folderUri, { ...entry, key: "memory:nope" }), "invalid-input");
        assert.equal(asMnemonError(bad)!.data?.field, "key");
        const removeEntry = removeRequest(folderUri, entry);
        await withTimeout(connection.sendRequest(removeEntry.method, removeEntry.params), "remove entry");
    });

    it("import from other assistants: the scan's rows (picked but duplicates), the picked items imported, a changed file refused", async () => {
        const agents = path.join(repo, "AGENTS.md");
        fs.writeFileSync(agents, "# Agents\n\n- Import: the wiki lives in docs/wiki.\n- Import: I prefer short answers.\n- Import: the wiki lives in docs/wiki!\n");
        const scan = await withTimeout(scanImports(connection, folderUri), "scan");
        assert.deepEqual(scan.sources.map((s) => s.source), ["agents-md"]);
        const rows = importRows(scan, (p) => path.relative(repo, p));
        assert.deepEqual(rows.map((r) => [r.separator, r.label, r.description, r.picked]), [
            [true, "AGENTS.md", undefined, undefined],
            [false, "Import: the wiki lives in docs/wiki.", "MEMORY.md", true],
            [false, "Import: I prefer short answers.", "USER.md", true],
            [false, "Import: the wiki lives in docs/wiki!", "MEMORY.md · skipped: near duplicate", false],
        ]);
        assert.equal(rows[3].detail, "near duplicate of AGENTS.md: Agents; a project fact or convention (AGENTS.md: Agents)");
        assert.equal(rows[1].detail, "a project fact or convention (AGENTS.md: Agents)");
        const receipt = await withTimeout(applyImports(connection, folderUri, scan.fingerprint, [rows[1].id!]), "apply");
        assert.equal(importReceiptMessage(receipt), "Mnemon: imported 1 item (1 to MEMORY.md).");
        const snapshot = await withTimeout(runtimeSnapshot(connection, folderUri), "snapshot after import");
        assert.ok(snapshot.entries.some((e) => e.content === "Import: the wiki lives in docs/wiki."));
        assert.ok(!snapshot.entries.some((e) => e.content === "Import: I prefer short answers."));
        fs.appendFileSync(agents, "- Import: one more line.\n");
        const error = await expectMnemonError(applyImports(connection, folderUri, scan.fingerprint, [rows[2].id!]), "revision-conflict");
        assert.match(error.message, /^fingerprint: .*AGENTS\.md changed since the scan; nothing was imported: scan again/);
        const after = await withTimeout(runtimeSnapshot(connection, folderUri), "snapshot after the refusal");
        assert.equal(after.revision, snapshot.revision);
        fs.rmSync(agents);
        await withTimeout(connection.sendRequest("mnemon/runtime/mutate", { workspace: folderUri, action: "remove", target: "memory", oldText: "Import: the wiki lives in docs/wiki." }), "remove");
    });

    it("import: a file CLAUDE.md imports from the home directory waits for approval; allowOutside reads and imports it", async () => {
        const claude = path.join(repo, "CLAUDE.md");
        const team = path.join(String(gitEnv.HOME), "team.md");
        fs.writeFileSync(team, "- Outside: deploys go through staging first.\n");
        fs.writeFileSync(claude, "# Ibis\n\n- Outside: the build runs with make.\n\n@~/team.md\n");
        try {
            const scan = await withTimeout(scanImports(connection, folderUri), "scan");
            const relative = (p: string): string => path.relative(repo, p);
            assert.equal(approvalQuestion(scan, relative)?.message, "Mnemon: 1 imported file outside the repository was not read. Read it too?");
            assert.deepEqual(scan.sources[0].items.map((i) => i.text), ["Outside: the build runs with make."]);
            const allowed = await withTimeout(scanImports(connection, folderUri, true), "scan allowing outside files");
            assert.equal(approvalQuestion(allowed, relative), undefined);
            const items = allowed.sources[0].items;
            assert.deepEqual(items.map((i) => i.text), ["Outside: the build runs with make.", "Outside: deploys go through staging first."]);
            const outside = items.filter((i) => i.path === team).map((i) => i.id);
            const refused = await expectMnemonError(applyImports(connection, folderUri, allowed.fingerprint, outside), "invalid-input");
            assert.equal(asMnemonError(refused)!.data?.field, "fingerprint");  // without allowOutside the files differ
            const receipt = await withTimeout(applyImports(connection, folderUri, allowed.fingerprint, outside, true), "apply");
            assert.equal(importReceiptMessage(receipt), "Mnemon: imported 1 item (1 to MEMORY.md).");
            await withTimeout(connection.sendRequest("mnemon/runtime/mutate", { workspace: folderUri, action: "remove", target: "memory",
                oldText: "Outside: deploys go through staging first." }), "remove");
        } finally {
            fs.rmSync(claude);
            fs.rmSync(team);
        }
    });

    it("shutdown and exit end the server with exit code 0", async () => {
        await withTimeout(connection.sendRequest("shutdown"), "shutdown");
        await connection.sendNotification("exit");
        const code = await withTimeout(exited, "process exit", 10_000);
        assert.equal(code, 0, `exit code ${code}; stderr:\n${stderr}`);
    });
});
