/**
 * Unit tests of src/trees.ts (the Mnemon view's trees as data) and the preview/log helpers of
 * src/format.ts. No VS Code, no server: the inputs have the shapes the server sends (the contract test
 * builds the same trees from the real server's results).
 */

import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { escapeMarkdown, frontmatterId, isManagedDocumentUri, normalExitLine, wakeMarkdown } from "../format";
import { MemoryRecordView } from "../proposals";
import { CatalogEntry, DocumentCatalog, ProviderCapabilities, ProviderView, RecallResult, RuntimeEntry, RuntimeSnapshot, SpaceView, WorkspaceStatus } from "../requests";
import {
    ageLabel,
    capabilityWords,
    capacityState,
    conflictMessage,
    CONTEXT_VALUES,
    documentsTree,
    entryStillThere,
    HealthReport,
    healthLabel,
    Node,
    perFolder,
    proposalsTree,
    providerContext,
    providersTree,
    recallTree,
    runtimeTree,
    shortLabel,
    spacesTree,
    visibleOn,
} from "../trees";

const NOW = Date.parse("2026-12-01T12:00:00.000Z");
const DAY = 86_400_000;
const WS = "file:///home/u/proj";

function iso(msAgo: number): string {
    return new Date(NOW - msAgo).toISOString();
}

function entry(content: string, overrides: Partial<RuntimeEntry> = {}): RuntimeEntry {
    return { content, created_at: iso(3 * DAY), updated_at: iso(2 * DAY), target: "memory", importance: "normal", ...overrides };
}

function snapshot(entries: RuntimeEntry[], usage = { user: { used: 0, limit: 4096 }, memory: { used: 100, limit: 10240 } }): RuntimeSnapshot {
    return { workspace: WS, revision: "r1", entries, usage, problems: [] };
}

function row(branch: string | null): WorkspaceStatus {
    return {
        uri: WS, name: "proj", root: "/r", userRoot: "/u", scope: "workspaces", branch, branchReason: branch ? null : "not a git repository",
        detached: false, entries: { user: 0, memory: 0 }, usage: { user: { used: 0, limit: 4096 }, memory: { used: 0, limit: 10240 } }, problems: [],
    };
}

describe("trees: labels", () => {
    it("ageLabel counts whole days like the wake, then months and years; future and unknown", () => {
        assert.equal(ageLabel(iso(5 * 60_000), NOW), "today");
        assert.equal(ageLabel(iso(DAY + 1), NOW), "1 day");
        assert.equal(ageLabel(iso(59 * DAY), NOW), "59 days");
        assert.equal(ageLabel(iso(90 * DAY), NOW), "3 months");
        assert.equal(ageLabel(iso(800 * DAY), NOW), "2 years");
        assert.equal(ageLabel(new Date(NOW + 2 * DAY).toISOString(), NOW), "future");
        assert.equal(ageLabel("not a date", NOW), "unknown");
        assert.equal(ageLabel(undefined, NOW), "unknown");
    });

    it("shortLabel takes the first non-empty line and cuts it with an ellipsis", () => {
        assert.equal(shortLabel("\n  first   line \nsecond"), "first line");
        assert.equal(shortLabel("x".repeat(100), 10), `${"x".repeat(9)}…`);
    });

    it("capacityState (over the limit, nearly full at 90 %)", () => {
        assert.equal(capacityState({ used: 100, limit: 1000 }), "ok");
        assert.equal(capacityState({ used: 900, limit: 1000 }), "nearly-full");
        assert.equal(capacityState({ used: 1001, limit: 1000 }), "over");
    });
});

describe("trees: runtime memory", () => {
    it("USER.md then MEMORY.md (the wake's order), entries with importance, age and branches; hidden ones marked", () => {
        const tree = runtimeTree(
            snapshot([
                entry("Deploy with make release", { importance: "critical" }),
                entry("Feature flag X is on", { branches: ["feature"] }),
                entry("I prefer tabs", { target: "user", importance: "low" }),
            ]),
            row("main"),
            NOW,
        );
        assert.deepEqual(tree.map((n) => n.label), ["USER.md", "MEMORY.md"]);
        const [user, memory] = tree;
        assert.equal(memory.contextValue, "mnemon.target.memory");
        assert.match(memory.description ?? "", /^2 entries \(1 hidden on this branch\) · 100 B of 10 KiB \(1%\)$/);
        const [critical, scoped] = memory.children as Node[];
        assert.equal(critical.label, "Deploy with make release");
        assert.equal(critical.description, "critical · 2 days");
        assert.equal(critical.icon, "star-full");
        assert.equal(critical.contextValue, "mnemon.entry.memory");
        assert.equal(scoped.description, "normal · 2 days · ⎇ feature · hidden on main");
        assert.equal(scoped.icon, "eye-closed");
        assert.equal(scoped.contextValue, "mnemon.entry.memory.branch");
        assert.deepEqual(scoped.ref, { kind: "entry", workspace: WS, target: "memory", entry: entry("Feature flag X is on", { branches: ["feature"] }), revision: "r1" });
        assert.equal((user.children as Node[])[0].contextValue, "mnemon.entry.user");
        assert.equal((user.children as Node[])[0].description, "low · 2 days");
    });

    it("without a branch (no git repository) branch-scoped entries are hidden, unscoped ones shown", () => {
        const scoped = entry("only on main", { branches: ["main"] });
        assert.equal(visibleOn(scoped, null), false);
        assert.equal(visibleOn(entry("everywhere"), null), true);
        assert.equal(visibleOn(entry("me", { target: "user" }), null), true);
        const [, memory] = runtimeTree(snapshot([scoped]), row(null), NOW);
        assert.match((memory.children as Node[])[0].description ?? "", /hidden: no branch checked out$/);
    });

    it("a full or over-capacity target gets the capacity node first (context mnemon.capacity) and a .full context", () => {
        const [, memory] = runtimeTree(snapshot([entry("a")], { user: { used: 0, limit: 4096 }, memory: { used: 10300, limit: 10240 } }), row("main"), NOW);
        assert.equal(memory.contextValue, "mnemon.target.memory.full");
        assert.equal(memory.iconColor, "list.errorForeground");
        const first = (memory.children as Node[])[0];
        assert.equal(first.contextValue, "mnemon.capacity");
        assert.equal(first.label, "MEMORY.md is over capacity");
        assert.equal(first.description, "10.1 KiB of 10 KiB");
        assert.equal(first.tooltip, "MEMORY.md uses 10.1 KiB of 10 KiB. Remove or shorten entries, or raise the limit (mnemon.runtimeMemory.memoryLimitBytes).");
        const [, barely] = runtimeTree(snapshot([entry("a")], { user: { used: 0, limit: 4096 }, memory: { used: 10250, limit: 10240 } }), row("main"), NOW);
        assert.equal((barely.children as Node[])[0].description, "10250 B of 10240 B", "both would read 10 KiB");
        assert.deepEqual(first.ref, { kind: "capacity", workspace: WS, target: "memory" });
        const [, nearly] = runtimeTree(snapshot([entry("a")], { user: { used: 0, limit: 4096 }, memory: { used: 9300, limit: 10240 } }), row("main"), NOW);
        assert.equal((nearly.children as Node[])[0].label, "MEMORY.md is nearly full");
    });

    it("an empty target offers to add an entry: a click runs Add Entry for that file", () => {
        const [user, memory] = runtimeTree(snapshot([]), row("main"), NOW);
        const [empty] = memory.children as Node[];
        assert.equal(empty.contextValue, "mnemon.message");
        assert.equal(empty.description, "Add an entry to MEMORY.md…");
        assert.deepEqual(empty.command, { command: "mnemon.runtime.add", title: "Add Entry", arguments: [{ ref: { kind: "target", workspace: WS, target: "memory" } }] });
        assert.equal((user.children as Node[])[0].label, "No entries yet");
        assert.deepEqual((user.children as Node[])[0].command?.arguments, [{ ref: { kind: "target", workspace: WS, target: "user" } }]);
    });

    it("an entry's hover puts each part in its own Markdown paragraph (never 'created today Every branch')", () => {
        const [user, memory] = runtimeTree(snapshot([entry("Deploy with make release"), entry("main only", { branches: ["main"] }), entry("tabs", { target: "user" })]), row("main"), NOW);
        const [everywhere, scoped] = memory.children as Node[];
        const parts = (everywhere.tooltip ?? "").split("\n\n");
        assert.equal(parts.length, 4, everywhere.tooltip);
        assert.equal(parts[0], "Deploy with make release");
        assert.equal(parts[1], "---");
        assert.match(parts[2], /^\*\*MEMORY\.md\*\* · importance \*\*normal\*\* · updated 2 days \(.+\) · created 3 days$/);
        assert.equal(parts[3], "Shown on every branch");
        assert.equal((scoped.tooltip ?? "").split("\n\n")[3], "Branches: `main`");
        assert.equal(((user.children as Node[])[0].tooltip ?? "").split("\n\n").length, 3, "USER.md entries have no branch part");
    });

    it("entryStillThere: an entry removed or changed by another editor is a conflict (no substring match)", () => {
        const fresh = snapshot([entry("Deploy with make release now")]);
        assert.equal(entryStillThere(fresh, "memory", "Deploy with make release now"), true);
        assert.equal(entryStillThere(fresh, "memory", "Deploy with make release"), false);
        assert.equal(entryStillThere(fresh, "user", "Deploy with make release now"), false);
        assert.match(conflictMessage("memory", "Deploy with make release"), /^Mnemon: MEMORY\.md changed since the view was drawn .* nothing was changed\.$/);
    });

    it("perFolder: one folder's children directly, several folders as folder nodes", () => {
        const a = [{ id: "x", label: "x", contextValue: "mnemon.message" }];
        assert.deepEqual(perFolder([{ workspace: WS, name: "proj", children: a }]), a);
        const two = perFolder([{ workspace: WS, name: "proj", children: a }, { workspace: "file:///b", name: "b", children: [] }]);
        assert.deepEqual(two.map((n) => [n.label, n.contextValue]), [["proj", "mnemon.folder"], ["b", "mnemon.folder"]]);
    });
});

function doc(id: string, status: "active" | "archived", overrides: Partial<CatalogEntry> = {}): CatalogEntry {
    return {
        id, title: `Doc ${id}`, description: "", status, filename: `doc-${id}.md`, relativePath: `documents/${status}/doc-${id}.md`,
        sourcePaths: [], sessionIds: [], createdAt: iso(10 * DAY), updatedAt: iso(DAY), lastAccessedAt: iso(DAY), revision: 1,
        contentHash: "0".repeat(64), sizeBytes: 2048, memoryBodyIds: [], healthy: true, ...overrides,
    };
}

describe("trees: documents, spaces, recall, proposals", () => {
    it("documents: Active (expanded, newest first) and Archived (collapsed); click opens the preview", () => {
        const catalog: DocumentCatalog = {
            workspace: WS, revision: "r", generatedAt: iso(0), total: 3, problem: null, notices: [],
            activeBytes: 4096, activeCount: 2, archivedCount: 1, limitBytes: 10485760,
            documents: [
                doc("a", "active", { updatedAt: iso(3 * DAY) }),
                doc("b", "active", { sourcePaths: ["docs/design.md"] }),
                doc("c", "archived", { archivedAt: iso(DAY) }),
            ],
        };
        const [active, archived] = documentsTree(catalog, NOW);
        assert.equal(active.label, "Active");
        assert.equal(active.description, "2 · 4 KiB of 10 MiB", "one unit rule for every size (was 10240 KiB)");
        assert.equal(active.expanded, true);
        assert.deepEqual((active.children as Node[]).map((n) => n.label), ["Doc b", "Doc a"]);
        const b = (active.children as Node[])[0];
        assert.equal(b.contextValue, "mnemon.document.active.source");
        assert.equal(b.description, "updated 1 day · 2 KiB · from docs/design.md");
        assert.deepEqual(b.command, { command: "mnemon.openDocument", title: "Open Preview", arguments: [{ workspace: WS, id: "b", title: "Doc b" }] });
        assert.equal(archived.expanded, false);
        assert.equal((archived.children as Node[])[0].contextValue, "mnemon.document.archived");
        assert.equal((archived.children as Node[])[0].description, "archived 1 day · 2 KiB");
    });

    it("spaces: active first, context by state; an empty list says how to start", () => {
        const space = (id: string, name: string, active: boolean): SpaceView => ({
            id, name, description: "", active, providerId: "mnemon-native", providerLabel: "Mnemon", kind: "native",
            location: { dataDir: "/d", store: id, path: "/d/x" }, capabilities: null, available: true, createdAt: iso(0), updatedAt: iso(0),
        });
        const nodes = spacesTree(WS, [space("b", "Zeta", false), space("default", "Alpha", true)]);
        assert.deepEqual(nodes.map((n) => [n.label, n.contextValue, n.description]), [
            ["Alpha", "mnemon.space.active", "active · Mnemon"],
            ["Zeta", "mnemon.space.inactive", "inactive · Mnemon"],
        ]);
        const [empty] = spacesTree(WS, []);
        assert.equal(empty.label, "No Memory Spaces yet: create one…");
        assert.deepEqual(empty.command, { command: "mnemon.spaces.create", title: "Create Memory Space", arguments: [{ ref: { kind: "folder", workspace: WS } }] });
    });

    it("recall: items with space, tier and branches; hidden ones counted; no result says why", () => {
        const result: RecallResult = {
            query: "deploy", mode: "smart", limit: 8, candidateLimit: 50, policy: { id: "strict-v1", fallbackFrom: null },
            results: [{ spaceId: "default", spaceName: "Team", providerId: "mnemon-native", id: "i1", content: "Deploy on Fridays never", score: 3.2, tier: "high", category: "fact", importance: 3, tags: [], createdAt: null, branches: ["main"] }],
            sources: [], hidden: { otherBranch: 2, detachedHead: 0 }, branch: { name: "main", recall: "filter", detachedHeadPolicy: "hide" },
            truncated: 0, hint: null, notices: [], workspace: WS,
        };
        const nodes = recallTree(result);
        assert.equal(nodes[0].label, "Deploy on Fridays never");
        assert.equal(nodes[0].description, "Team · high · ⎇ main");
        assert.equal(nodes[0].contextValue, "mnemon.recallItem");
        assert.equal(nodes[1].label, "2 hidden by branch scope");
        assert.equal(recallTree({ ...result, results: [], hint: "no active space" })[0].label, "Nothing recalled: no active space");
    });

    it("proposals: title, scope and type; context mnemon.proposal", () => {
        const record = {
            id: "r1", scope: "project", scopeKey: "k", type: "convention", title: "Run tests with -n 2", content: "pytest -n 2", tags: [],
            createdAt: 1, updatedAt: 1, status: "active", governance: { origin: "model-suggested", verification: "unverified", revision: 1, sourceRefs: [] },
        } as MemoryRecordView;
        const [node] = proposalsTree(WS, [record]);
        assert.deepEqual([node.label, node.description, node.contextValue], ["Run tests with -n 2", "project · convention", "mnemon.proposal"]);
        assert.equal(proposalsTree(WS, [])[0].contextValue, "mnemon.message");
    });
});

// ------------------------------------------------------------------------------------------ providers

/** Holographic's capabilities as its package declares them (providers/holographic). */
const HOLO_CAPS: ProviderCapabilities = {
    search: true, browse: true, graph: false, entities: true, related: true, link: false, forget: true, merge: false,
    write: "exact", delete: "hard", normalizedScores: true, discover: true, createNamespace: true,
};

function provider(overrides: Partial<ProviderView> = {}): ProviderView {
    return {
        providerId: "holographic", label: "Holographic", kind: "local", installed: true, distribution: "mnemon-ls-provider-holographic 0.1.0",
        configured: false, enabled: false, usable: false, configuredFields: [], configuredSecrets: [], spaces: 0,
        capabilities: HOLO_CAPS, fields: { service: ["dataPath", "apiKey"], memory: ["bankId"], secret: ["apiKey"] }, ...overrides,
    };
}

const MISSING = provider({ providerId: "honcho", label: "Honcho", kind: "remote", installed: false, distribution: null, capabilities: null, fields: null });

describe("trees: Memory Providers", () => {
    it("the context value follows state and capabilities (what the menus offer)", () => {
        assert.equal(providerContext(MISSING), "mnemon.provider.missing");
        assert.equal(providerContext(provider({ capabilities: null })), "mnemon.provider.broken");
        assert.equal(providerContext(provider()), "mnemon.provider.available");
        assert.equal(providerContext(provider({ configured: true })), "mnemon.provider.disabled");
        assert.equal(providerContext(provider({ configured: true, enabled: true, usable: true })), "mnemon.provider.enabled.discover.create");
        const plain = { ...HOLO_CAPS, discover: undefined, createNamespace: undefined };
        assert.equal(providerContext(provider({ configured: true, enabled: true, capabilities: plain })), "mnemon.provider.enabled");
        assert.equal(providerContext(provider({ configured: true, enabled: true, capabilities: { ...HOLO_CAPS, discover: false } })), "mnemon.provider.enabled.create");
    });

    it("capabilityWords lists what it can do and, apart, what it cannot", () => {
        assert.deepEqual(capabilityWords(HOLO_CAPS), {
            can: ["recall", "browse", "entities", "related", "forget (hard delete)", "exact writes", "discover namespaces", "create namespaces"],
            cannot: ["graph", "link", "merge"],
        });
        const none = capabilityWords({ ...HOLO_CAPS, forget: true, delete: "unsupported", write: "async-extracting" });
        assert.ok(none.cannot.includes("forget") && !none.can.some((w) => w.startsWith("forget")), JSON.stringify(none));
        assert.ok(none.can.includes("async-extracting writes"));
    });

    it("installed providers first; state, health, capabilities and configured field names (never values)", () => {
        const enabled = provider({ configured: true, enabled: true, usable: true, spaces: 2, configuredFields: ["dataPath"], configuredSecrets: ["apiKey"] });
        const health = new Map<string, HealthReport>([["holographic", { health: { ok: true, engine: "hermes-agent 0.19.0", location: "/h/memory.db", items: 12, latencyMs: 3.4, message: "", details: {} }, at: NOW }]]);
        const nodes = providersTree(WS, [MISSING, enabled, { ...MISSING, providerId: "mem0", label: "Mem0" }], health);
        // The providers that are not installed are one collapsed row, not one row each in every folder.
        assert.deepEqual(nodes.map((n) => [n.label, n.description, n.contextValue, n.expanded]), [
            ["Holographic", "enabled · 2 spaces · healthy", "mnemon.provider.enabled.discover.create", false],
            ["Not installed", "2 more providers: Honcho, Mem0", "mnemon.provider.group", false],
        ]);
        const missing = nodes[1].children as Node[];
        assert.deepEqual(missing.map((n) => [n.label, n.description, n.contextValue]), [
            ["Honcho", "not installed", "mnemon.provider.missing"],
            ["Mem0", "not installed", "mnemon.provider.missing"],
        ]);
        assert.equal(missing[0].children, undefined, "a provider that is not installed has nothing to show or do");
        assert.equal(providersTree(WS, [enabled], health).length, 1, "no group when every provider is installed");
        const details = Object.fromEntries((nodes[0].children as Node[]).map((n) => [n.label, n.description]));
        assert.deepEqual(details, {
            Package: "mnemon-ls-provider-holographic 0.1.0",
            Health: "ok · hermes-agent 0.19.0 · 12 items · 3 ms",
            Can: "recall, browse, entities, related, forget (hard delete), exact writes, discover namespaces, create namespaces",
            Cannot: "graph, link, merge",
            Configured: "dataPath, apiKey (secret, stored by the server)",
        });
        for (const n of nodes[0].children as Node[]) assert.equal(n.contextValue, "mnemon.provider.detail");
    });

    it("health: untested, failed and unhealthy reports read as such", () => {
        assert.equal(healthLabel(undefined), "not tested in this window");
        assert.equal(healthLabel({ error: "provider-unavailable: the engine failed to open", at: NOW }), "failed: provider-unavailable: the engine failed to open");
        const sick: HealthReport = { health: { ok: false, engine: "x", location: null, items: null, latencyMs: null, message: "locked", details: {} }, at: NOW };
        assert.equal(healthLabel(sick), "not ok: locked · x");
        const [node] = providersTree(WS, [provider({ configured: true })], new Map([["holographic", sick]]));
        assert.equal(node.description, "configured, disabled · unhealthy");
        assert.equal(node.icon, "debug-disconnect");
        const [fresh] = providersTree(WS, [provider()], new Map());
        assert.equal((fresh.children as Node[]).find((n) => n.label === "Configured")?.description, "not yet");
    });

    it("a configured PostgreSQL shows its connection state from the list: connected, or unreachable and why", () => {
        const pg = (connection: ProviderView["connection"], enabled = true) => provider({
            providerId: "postgres", label: "PostgreSQL", kind: "remote", distribution: "mnemon-ls-provider-postgres 0.1.0",
            configured: true, enabled, usable: enabled, spaces: 1, configuredFields: [], configuredSecrets: ["dsn"], connection,
        });
        const up = pg({ state: "connected", location: "postgresql db.internal:5432/memory as mnemon", message: "PostgreSQL 16.2 as role mnemon; schema mnemon at version 3", latencyMs: 4.2 });
        const [node] = providersTree(WS, [up], new Map());
        assert.deepEqual([node.description, node.icon, node.iconColor], ["enabled · 1 space · connected", "plug", undefined]);
        const row = (node.children as Node[]).find((n) => n.label === "Connection");
        assert.equal(row?.description, "connected · PostgreSQL 16.2 as role mnemon; schema mnemon at version 3");
        assert.match(String(row?.tooltip), /Location: postgresql db\.internal:5432\/memory as mnemon/);
        assert.equal(row?.contextValue, "mnemon.provider.detail");
        const reason = "connection failed: connection to server at \"db.internal\" (10.0.0.5), port 5432 failed: Connection refused";
        const down = pg({ state: "unreachable", location: "postgresql db.internal:5432/memory as mnemon", message: reason, latencyMs: 1 });
        const [sick] = providersTree(WS, [down], new Map());
        assert.deepEqual([sick.description, sick.icon, sick.iconColor], ["enabled · 1 space · unreachable", "warning", "list.warningForeground"]);
        assert.equal((sick.children as Node[]).find((n) => n.label === "Connection")?.description, `unreachable: ${reason}`);
        // the list's check is newer than a Test of this window: it speaks first
        const tested = new Map<string, HealthReport>([["postgres", { health: { ok: true, engine: "PostgreSQL 16.2", location: null, items: 3, latencyMs: 2, message: "", details: {} }, at: NOW }]]);
        assert.equal(providersTree(WS, [down], tested)[0].description, "enabled · 1 space · unreachable");
        const [disabled] = providersTree(WS, [pg(down.connection, false)], new Map());
        assert.deepEqual([disabled.description, disabled.icon], ["configured, disabled · unreachable", "warning"]);
        // no connection in the view (not configured, or a provider without a server): no row
        const [plain] = providersTree(WS, [provider({ configured: true, enabled: true })], new Map());
        assert.equal((plain.children as Node[]).some((n) => n.label === "Connection"), false);
    });

    it("spaces and recall items hide what their provider cannot do", () => {
        const base: SpaceView = {
            id: "h1", name: "Bank", description: "", active: true, providerId: "holographic", providerLabel: "Holographic", kind: "third-party",
            location: { externalId: "bank", connectionFields: [] }, capabilities: { ...HOLO_CAPS, search: false } as Record<string, unknown>, available: true, createdAt: iso(0), updatedAt: iso(0),
        };
        assert.equal(spacesTree(WS, [base])[0].contextValue, "mnemon.space.active.nosearch");
        assert.equal(spacesTree(WS, [{ ...base, capabilities: { ...HOLO_CAPS } as Record<string, unknown> }])[0].contextValue, "mnemon.space.active");
        const result: RecallResult = {
            query: "q", mode: "smart", limit: 8, candidateLimit: 50, policy: { id: "strict-v1", fallbackFrom: null },
            results: [
                { spaceId: "h1", spaceName: "Bank", providerId: "holographic", id: "1", content: "kept", score: 1, tier: "high", category: "fact", importance: 3, tags: [], createdAt: null },
                { spaceId: "default", spaceName: "Team", providerId: "mnemon-native", id: "2", content: "forgettable", score: 1, tier: "high", category: "fact", importance: 3, tags: [], createdAt: null },
            ],
            sources: [], hidden: { otherBranch: 0, detachedHead: 0 }, branch: { name: "main", recall: "filter", detachedHeadPolicy: "hide" },
            truncated: 0, hint: null, notices: [], workspace: WS,
        };
        assert.deepEqual(recallTree(result, (id) => id !== "h1").map((n) => n.contextValue), ["mnemon.recallItem.keep", "mnemon.recallItem"]);
    });
});

describe("trees: context values", () => {
    it("every node of every tree has a context value from CONTEXT_VALUES (the menus are checked against it)", () => {
        const all = (nodes: Node[]): Node[] => nodes.flatMap((n) => [n, ...all(n.children ?? [])]);
        const nodes = all([
            ...runtimeTree(snapshot([entry("a"), entry("b", { branches: ["x"] }), entry("c", { target: "user" })], { user: { used: 4000, limit: 4096 }, memory: { used: 10300, limit: 10240 } }), row("main"), NOW),
            ...runtimeTree(snapshot([]), row("main"), NOW),
            ...documentsTree({ workspace: WS, revision: "r", generatedAt: "", total: 4, problem: "damaged", notices: [], activeBytes: 0, activeCount: 2, archivedCount: 2, limitBytes: 1,
                documents: [doc("a", "active"), doc("b", "active", { sourcePaths: ["x.md"] }), doc("c", "archived"), doc("d", "archived", { sourcePaths: ["y.md"] })] }, NOW),
            ...perFolder([{ workspace: WS, name: "a", children: [] }, { workspace: "file:///b", name: "b", children: [] }]),
            ...providersTree(WS, [MISSING, provider(), provider({ configured: true }), provider({ configured: true, enabled: true }), provider({ capabilities: null })], new Map()),
        ]);
        const seen = new Set(nodes.map((n) => n.contextValue));
        for (const value of seen) {
            assert.ok((CONTEXT_VALUES as readonly string[]).includes(value), `${value} is not in CONTEXT_VALUES`);
        }
        for (const value of ["mnemon.entry.memory.branch", "mnemon.target.user.full", "mnemon.document.archived.source", "mnemon.capacity", "mnemon.folder",
            "mnemon.provider.missing", "mnemon.provider.available", "mnemon.provider.disabled", "mnemon.provider.enabled.discover.create", "mnemon.provider.broken", "mnemon.provider.detail"]) {
            assert.ok(seen.has(value), `${value} was produced`);
        }
    });
});

describe("format: previews and log", () => {
    it("wakeMarkdown: heading, header list, sections, entries with italic annotations, § as rules, text escaped", () => {
        const text = [
            "MNEMON RUNTIME MEMORY SNAPSHOT",
            "Revision: abc",
            "Git branch: main",
            "Bracketed lines are annotations, not memory content.",
            "",
            "Contents of MEMORY.md (working reference; entries: 2; UTF-8 bytes: 42/10240)",
            '<runtime-memory-file name="MEMORY.md">',
            "[importance=normal; created=0d; updated=0d]",
            "Use *pytest* <b>now</b>",
            "§",
            "[importance=critical; created=1d; updated=1d; branches=main]",
            "# not a heading",
            "</runtime-memory-file>",
        ].join("\n");
        const md = wakeMarkdown(text);
        assert.match(md, /^# Mnemon runtime memory snapshot\n/);
        assert.match(md, /\n- \*\*Revision:\*\* abc\n- \*\*Git branch:\*\* main\n\nBracketed lines are annotations, not memory content\\\.\n/);
        assert.match(md, /\n## MEMORY\\\.md\n\n\*working reference; entries: 2; UTF\\-8 bytes: 42\/10240\*\n/);
        assert.match(md, /\*\\\[importance=normal; created=0d; updated=0d\\\]\*/);
        assert.match(md, /Use \\\*pytest\\\* &lt;b&gt;now&lt;\/b&gt;/);
        assert.match(md, /\n---\n/);
        assert.match(md, /\n\\# not a heading/);
        assert.doesNotMatch(md, /runtime-memory-file/);
    });

    it("escapeMarkdown leaves plain words alone", () => {
        assert.equal(escapeMarkdown("plain words 123"), "plain words 123");
        assert.equal(escapeMarkdown("a_b"), "a\\_b");
    });

    it("isManagedDocumentUri: managed documents of a storage root open as previews; other files do not", () => {
        assert.equal(isManagedDocumentUri("file:///home/u/.mnemon/workspaces/ab/documents/active/design-1234abcd.md"), true);
        assert.equal(isManagedDocumentUri("file:///r/documents/archived/x.md"), true);
        assert.equal(isManagedDocumentUri("file:///r/runtime/edits/MEMORY.md"), false);
        assert.equal(isManagedDocumentUri("file:///r/documents/active/sub/x.md"), false);
        assert.equal(isManagedDocumentUri("untitled:/documents/active/x.md"), false);
    });

    it("frontmatterId reads the id of a managed document's frontmatter only", () => {
        assert.equal(frontmatterId('---\nid: "a9f0e035-c981-44ea-b9b8-706cc989d84b"\ntitle: "Design"\n---\n\n# Design\n'), "a9f0e035-c981-44ea-b9b8-706cc989d84b");
        assert.equal(frontmatterId("# Design\nid: x\n"), undefined);
        assert.equal(frontmatterId('---\ntitle: "t"\n---\nid: "a9f0e035-c981-44ea-b9b8-706cc989d84b"\n'), undefined);
    });

    it("normalExitLine: the client's code-0 exit line becomes info; a crash stays an error", () => {
        assert.equal(normalExitLine("[Error - 10:00:00 AM] Server process exited with code 0."), "mnemon-ls exited normally (code 0)");
        assert.equal(normalExitLine("[Error - 10:00:00] Server process exited with code 1."), undefined);
        assert.equal(normalExitLine("[Error - 10:00:00] Server process exited with signal SIGKILL."), undefined);
        assert.equal(normalExitLine("[Info  - 10:00:00] something"), undefined);
        const closed = "[Error - 10:00:00] Connection to server got closed. Server will not be restarted.";
        assert.equal(normalExitLine(closed, true), "connection to mnemon-ls closed (stop or restart)");
        assert.equal(normalExitLine(closed, false), undefined, "a crash stays an error");
        const killed = "[Error - 10:00:00] Server process exited with signal SIGKILL.";
        assert.equal(normalExitLine(killed, true), "mnemon-ls did not exit in time when stopped and was ended (SIGKILL)");
        assert.equal(normalExitLine(killed, false), undefined);
    });
});
