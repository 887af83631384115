/**
 * The Mnemon view's trees as plain data (pure: no `vscode` import), built from the server's results:
 * `mnemon/runtime/snapshot` + `mnemon/status` (Runtime memory), `mnemon/documents/list` (Documents),
 * `mnemon/spaces/list` (Memory Spaces), `mnemon/recall` (Recall results) and `mnemon/records/list`
 * (Record proposals). src/views.ts turns each {@link Node} into a `vscode.TreeItem`; the node unit
 * tests (src/test/trees.test.ts) check labels, descriptions and context values here.
 *
 * Context values (`contextValue`, used by package.json `view/item/context` menus):
 * `mnemon.folder`, `mnemon.target.user|memory[.full]`, `mnemon.entry.user|memory[.branch]`,
 * `mnemon.capacity`, `mnemon.documents.group`, `mnemon.document.active|archived`, `mnemon.space.active|inactive`,
 * `mnemon.recallItem[.keep]` (`.keep`: its space cannot forget), `mnemon.proposal`, `mnemon.message`,
 * `mnemon.review.memory[.noedit]` and `mnemon.review.cite` (the Needs Review view, src/review.ts),
 * `mnemon.space.active|inactive[.nosearch]` (`.nosearch`: its provider cannot recall), and
 * `mnemon.provider.<state>` for the Memory Providers view (see {@link providerContext}).
 */

import type { MemoryRecordView } from "./proposals";
import type { CitedMemory } from "./citations";
import type {
    CatalogEntry,
    DocumentCatalog,
    ProviderCapabilities,
    ProviderConnection,
    ProviderHealth,
    ProviderView,
    RecallItem,
    RecallResult,
    RuntimeEntry,
    RuntimeSnapshot,
    SpaceView,
    Target,
    Usage,
    WorkspaceStatus,
} from "./requests";
import { formatBytes, formatUsage } from "./units";

/** Every `contextValue` a node can have (scripts/check-manifest.mjs checks the menus' `viewItem` against it). */
export const CONTEXT_VALUES = [
    "mnemon.folder",
    "mnemon.target.memory",
    "mnemon.target.memory.full",
    "mnemon.target.user",
    "mnemon.target.user.full",
    "mnemon.entry.memory",
    "mnemon.entry.memory.branch",
    "mnemon.entry.user",
    "mnemon.capacity",
    "mnemon.documents.group",
    "mnemon.document.active",
    "mnemon.document.active.source",
    "mnemon.document.archived",
    "mnemon.document.archived.source",
    "mnemon.space.active",
    "mnemon.space.inactive",
    "mnemon.space.active.nosearch",
    "mnemon.space.inactive.nosearch",
    "mnemon.recallItem",
    "mnemon.recallItem.keep",
    "mnemon.provider.missing",
    "mnemon.provider.broken",
    "mnemon.provider.available",
    "mnemon.provider.disabled",
    "mnemon.provider.enabled",
    "mnemon.provider.enabled.discover",
    "mnemon.provider.enabled.create",
    "mnemon.provider.enabled.discover.create",
    "mnemon.provider.detail",
    "mnemon.provider.group",
    "mnemon.proposal",
    "mnemon.review.memory",
    "mnemon.review.memory.noedit",
    "mnemon.review.cite",
    "mnemon.message",
] as const;

/** Usage at or above this share of the limit is shown as nearly full (the status bar uses the same). */
export const NEARLY_FULL_RATIO = 0.9;
/** Characters of an entry's content shown as its label. */
export const LABEL_CHARS = 80;

export interface Node {
    /** Stable within one render: `<kind>:<workspace>:<key>`. */
    id: string;
    label: string;
    description?: string;
    /** Markdown. */
    tooltip?: string;
    /** A codicon id (`vscode.ThemeIcon`). */
    icon?: string;
    /** A theme color id for the icon, e.g. `list.warningForeground`. */
    iconColor?: string;
    contextValue: string;
    /** Children are shown expanded (true), collapsed (false), or there are none (undefined). */
    expanded?: boolean;
    children?: Node[];
    /** The command a click runs: id and arguments. */
    command?: { command: string; title: string; arguments?: unknown[] };
    /** What the node is about (passed to the menu commands). */
    ref?: NodeRef;
}

export type NodeRef =
    | { kind: "folder"; workspace: string }
    | { kind: "target"; workspace: string; target: Target }
    | { kind: "entry"; workspace: string; target: Target; entry: RuntimeEntry; revision: string }
    | { kind: "capacity"; workspace: string; target: Target }
    | { kind: "document"; workspace: string; document: CatalogEntry }
    | { kind: "space"; workspace: string; space: SpaceView }
    | { kind: "recallItem"; workspace: string; item: RecallItem }
    | { kind: "proposal"; workspace: string; record: MemoryRecordView }
    | { kind: "provider"; workspace: string; provider: ProviderView }
    | { kind: "review"; workspace: string; memory: CitedMemory };

/** The first line of `text`, whitespace collapsed, cut to `max` characters with `…`. */
export function shortLabel(text: string, max = LABEL_CHARS): string {
    const line = (text.split(/\r?\n/).find((l) => l.trim() !== "") ?? "").replace(/\s+/g, " ").trim();
    return line.length > max ? `${line.slice(0, max - 1)}…` : line;
}

/**
 * Age of an ISO timestamp at `now` (ms since the epoch), as the wake snapshot counts it: whole days,
 * shown as `today`, `1 day`, `N days`, then `N months` (30 days) and `N years` (365 days); `future`
 * for a time ahead of `now`, `unknown` for an unreadable one.
 */
export function ageLabel(iso: string | undefined, now: number): string {
    const at = iso ? Date.parse(iso) : NaN;
    if (Number.isNaN(at)) {
        return "unknown";
    }
    if (at > now + 60_000) {
        return "future";
    }
    const days = Math.floor(Math.max(0, now - at) / 86_400_000);
    if (days === 0) {
        return "today";
    }
    if (days < 60) {
        return days === 1 ? "1 day" : `${days} days`;
    }
    if (days < 730) {
        return `${Math.floor(days / 30)} months`;
    }
    return `${Math.floor(days / 365)} years`;
}

export function fileOf(target: Target): string {
    return target === "user" ? "USER.md" : "MEMORY.md";
}

/** Whether usage is over the limit (a lowered limit) or at least {@link NEARLY_FULL_RATIO} of it. */
export function capacityState(usage: Usage): "ok" | "nearly-full" | "over" {
    if (usage.used > usage.limit) {
        return "over";
    }
    return usage.limit > 0 && usage.used / usage.limit >= NEARLY_FULL_RATIO ? "nearly-full" : "ok";
}

/** Whether a Runtime entry shows in the wake on `branch` (null: no branch known, only unscoped entries show). */
export function visibleOn(entry: RuntimeEntry, branch: string | null): boolean {
    if (entry.target === "user" || !entry.branches || entry.branches.length === 0) {
        return true;
    }
    return branch !== null && entry.branches.includes(branch);
}

function entryNode(workspace: string, entry: RuntimeEntry, index: number, revision: string, branch: string | null, now: number): Node {
    const target = (entry.target === "user" ? "user" : "memory") as Target;
    const importance = entry.importance ?? "normal";
    const branches = entry.branches ?? [];
    const visible = visibleOn(entry, branch);
    const age = ageLabel(entry.updated_at as string | undefined, now);
    const parts = [importance, age];
    if (branches.length > 0) {
        parts.push(`⎇ ${branches.join(", ")}`);
    }
    if (!visible) {
        parts.push(branch === null ? "hidden: no branch checked out" : `hidden on ${branch}`);
    }
    // Markdown: each part its own paragraph (a single line break would run "created today" and
    // "Every branch" together into one line).
    const scope = branches.length > 0
        ? `Branches: ${branches.map((b) => `\`${b}\``).join(", ")}${visible ? "" : " (not shown in the wake on this branch)"}`
        : target === "memory"
          ? "Shown on every branch"
          : "";
    const tooltip = [
        entry.content.replace(/\n/g, "  \n"),
        "---",
        `**${fileOf(target)}** · importance **${importance}** · updated ${age} (${String(entry.updated_at ?? "?")}) · created ${ageLabel(entry.created_at as string | undefined, now)}`,
        scope,
    ]
        .filter((part) => part !== "")
        .join("\n\n");
    return {
        id: `entry:${workspace}:${target}:${index}:${entry.content.length}`,
        label: shortLabel(entry.content),
        description: parts.join(" · "),
        tooltip,
        icon: !visible ? "eye-closed" : importance === "critical" ? "star-full" : importance === "low" ? "circle-small" : "circle-filled",
        iconColor: importance === "critical" && visible ? "charts.yellow" : undefined,
        contextValue: `mnemon.entry.${target}${branches.length > 0 ? ".branch" : ""}`,
        ref: { kind: "entry", workspace, target, entry, revision },
    };
}

/**
 * The Runtime memory tree of one folder: `USER.md` then `MEMORY.md` (the wake's order: the small profile
 * stays in sight above a long MEMORY.md), each with its usage and its entries in stored order; a target at or over capacity gets a first child (`mnemon.capacity`) with
 * the capacity actions. `branch` is the folder's checked-out branch (from `mnemon/status`).
 */
export function runtimeTree(snapshot: RuntimeSnapshot, row: WorkspaceStatus | undefined, now: number): Node[] {
    const workspace = snapshot.workspace;
    const branch = row?.branch ?? null;
    return (["user", "memory"] as Target[]).map((target) => {
        const usage = snapshot.usage[target];
        const entries = snapshot.entries
            .map((entry, index) => ({ entry, index }))
            .filter(({ entry }) => (entry.target === "user" ? "user" : "memory") === target);
        const state = capacityState(usage);
        const hidden = entries.filter(({ entry }) => !visibleOn(entry, branch)).length;
        const children: Node[] = [];
        if (state !== "ok") {
            children.push({
                id: `capacity:${workspace}:${target}`,
                label: state === "over" ? `${fileOf(target)} is over capacity` : `${fileOf(target)} is nearly full`,
                description: formatUsage(usage.used, usage.limit),
                tooltip: `${fileOf(target)} uses ${formatUsage(usage.used, usage.limit)}. Remove or shorten entries, or raise the limit (mnemon.runtimeMemory.${target}LimitBytes).`,
                icon: "warning",
                iconColor: state === "over" ? "list.errorForeground" : "list.warningForeground",
                contextValue: "mnemon.capacity",
                ref: { kind: "capacity", workspace, target },
            });
        }
        children.push(...entries.map(({ entry, index }) => entryNode(workspace, entry, index, snapshot.revision, branch, now)));
        if (entries.length === 0) {
            // The empty state offers what fills it: a click adds an entry to this file.
            children.push({
                ...message(`empty:${workspace}:${target}`, "No entries yet", target === "memory" ? "Select text and run 'Mnemon: Remember Selection', or add one here." : "Facts about you: add one here.", "add"),
                description: `Add an entry to ${fileOf(target)}…`,
                command: { command: "mnemon.runtime.add", title: "Add Entry", arguments: [{ ref: { kind: "target", workspace, target } }] },
            });
        }
        const percent = usage.limit > 0 ? Math.round((usage.used / usage.limit) * 100) : 0;
        const counts = `${entries.length} ${entries.length === 1 ? "entry" : "entries"}${hidden > 0 ? ` (${hidden} hidden on this branch)` : ""}`;
        return {
            id: `target:${workspace}:${target}`,
            label: fileOf(target),
            description: `${counts} · ${formatUsage(usage.used, usage.limit)} (${percent}%)`,
            tooltip: target === "memory"
                ? `MEMORY.md: this workspace's working reference${branch ? `, shown for branch ${branch}` : ""}.`
                : "USER.md: durable facts about you.",
            icon: target === "memory" ? "notebook" : "account",
            iconColor: state === "over" ? "list.errorForeground" : state === "nearly-full" ? "list.warningForeground" : undefined,
            contextValue: `mnemon.target.${target}${state === "ok" ? "" : ".full"}`,
            expanded: true,
            children,
            ref: { kind: "target", workspace, target },
        };
    });
}

/**
 * A leaf that says something (empty states, errors, the server being down); with `command`, a click runs
 * it (an empty state's way to create what is missing).
 */
export function message(id: string, label: string, tooltip?: string, icon = "info", command?: Node["command"]): Node {
    return { id: `message:${id}`, label, tooltip, icon, contextValue: "mnemon.message", command };
}

/** One folder node per workspace when several folders are open; the only folder's children otherwise. */
export function perFolder(folders: { workspace: string; name: string; children: Node[] }[]): Node[] {
    if (folders.length === 1) {
        return folders[0].children;
    }
    return folders.map((f) => ({
        id: `folder:${f.workspace}`,
        label: f.name,
        icon: "root-folder",
        contextValue: "mnemon.folder",
        expanded: true,
        children: f.children,
        ref: { kind: "folder", workspace: f.workspace },
    }));
}

// ------------------------------------------------------------------------------------------ documents

function documentNode(workspace: string, doc: CatalogEntry, now: number): Node {
    const archived = doc.status === "archived";
    const sources = doc.sourcePaths.length > 0 ? ` · from ${doc.sourcePaths.join(", ")}` : "";
    return {
        id: `document:${workspace}:${doc.id}`,
        label: doc.title,
        description: `${archived ? `archived ${ageLabel(doc.archivedAt, now)}` : `updated ${ageLabel(doc.updatedAt, now)}`} · ${formatBytes(doc.sizeBytes)}${sources}`,
        tooltip: [
            `**${doc.title}**${doc.description ? ` — ${doc.description}` : ""}`,
            "",
            `revision ${doc.revision} · ${doc.status}${doc.archiveSummary ? ` · ${doc.archiveSummary}` : ""}`,
            doc.healthy ? "" : `⚠ ${doc.problem ?? "the managed file is missing or unreadable"}`,
        ].filter(Boolean).join("\n"),
        icon: !doc.healthy ? "warning" : archived ? "archive" : "markdown",
        contextValue: `mnemon.document.${archived ? "archived" : "active"}${doc.sourcePaths.length > 0 ? ".source" : ""}`,
        command: { command: "mnemon.openDocument", title: "Open Preview", arguments: [{ workspace, id: doc.id, title: doc.title }] },
        ref: { kind: "document", workspace, document: doc },
    };
}

/** `Active` and `Archived` groups of one folder's catalog (archived collapsed), newest update first. */
export function documentsTree(catalog: DocumentCatalog, now: number): Node[] {
    const workspace = catalog.workspace;
    const byUpdate = (a: CatalogEntry, b: CatalogEntry) => (a.updatedAt < b.updatedAt ? 1 : a.updatedAt > b.updatedAt ? -1 : 0);
    const active = catalog.documents.filter((d) => d.status === "active").sort(byUpdate);
    const archived = catalog.documents.filter((d) => d.status === "archived").sort(byUpdate);
    const nodes: Node[] = [];
    if (catalog.problem) {
        nodes.push(message(`problem:${workspace}`, catalog.problem, undefined, "warning"));
    }
    nodes.push(
        {
            id: `documents:${workspace}:active`,
            label: "Active",
            description: `${active.length} · ${formatUsage(catalog.activeBytes, catalog.limitBytes)}`,
            icon: "files",
            contextValue: "mnemon.documents.group",
            expanded: true,
            children: active.length > 0
                ? active.map((d) => documentNode(workspace, d, now))
                : [message(`nodocs:${workspace}`, "No documents yet: create one from a file…", "Right-click a file: 'Mnemon: Create Document from File', or click here to pick one.", "add",
                    { command: "mnemon.createDocumentFromFile", title: "Create Document from File" })],
        },
        {
            id: `documents:${workspace}:archived`,
            label: "Archived",
            description: `${archived.length}`,
            icon: "archive",
            contextValue: "mnemon.documents.group",
            expanded: false,
            children: archived.map((d) => documentNode(workspace, d, now)),
        },
    );
    return nodes;
}

// ------------------------------------------------------------------------------------------ spaces

/** One node per space: active ones first, then by name. */
export function spacesTree(workspace: string, spaces: SpaceView[]): Node[] {
    if (spaces.length === 0) {
        return [message(`nospaces:${workspace}`, "No Memory Spaces yet: create one…", "A space keeps long-term facts that recall finds later. Click to create one.", "add",
            { command: "mnemon.spaces.create", title: "Create Memory Space", arguments: [{ ref: { kind: "folder", workspace } }] })];
    }
    const sorted = [...spaces].sort((a, b) => Number(b.active) - Number(a.active) || a.name.localeCompare(b.name));
    return sorted.map((space) => ({
        id: `space:${workspace}:${space.id}`,
        label: space.name,
        description: `${space.active ? "active" : "inactive"} · ${space.providerLabel}${space.available ? "" : " · unavailable"}`,
        tooltip: `**${space.name}** (\`${space.id}\`)${space.description ? `\n\n${space.description}` : ""}\n\n${space.active ? "Active: recall reads it." : "Inactive: recall skips it."}`,
        icon: !space.available ? "warning" : space.active ? "database" : "circle-slash",
        // A provider that cannot search gets no "Recall from This Space" (seed 000: no pretending).
        contextValue: `mnemon.space.${space.active ? "active" : "inactive"}${space.capabilities && space.capabilities.search === false ? ".nosearch" : ""}`,
        ref: { kind: "space", workspace, space },
    }));
}

/**
 * The recall results: one node per item (score tier, space, branches), or a message why there are none.
 * `canForget(spaceId)` says whether the item's space can forget (its provider's `forget` capability); an
 * item whose space cannot is `mnemon.recallItem.keep`, which offers no "Forget Item". Default: all can.
 */
export function recallTree(result: RecallResult, canForget: (spaceId: string) => boolean = () => true): Node[] {
    const workspace = result.workspace;
    if (result.results.length === 0) {
        return [message(`norecall:${workspace}`, result.hint ? `Nothing recalled: ${result.hint}` : `Nothing recalled for "${result.query}"`)];
    }
    const hidden = result.hidden.otherBranch + result.hidden.detachedHead;
    const nodes: Node[] = result.results.map((item, i) => ({
        id: `recall:${workspace}:${item.spaceId}:${item.id}:${i}`,
        label: shortLabel(item.content),
        description: [item.spaceName, item.tier, item.branches && item.branches.length > 0 ? `⎇ ${item.branches.join(", ")}` : "", item.branchLabel ?? ""]
            .filter(Boolean)
            .join(" · "),
        tooltip: `${item.content}\n\n---\n${item.spaceName} · item \`${item.id}\` · score ${item.score ?? "?"} (${item.tier})`,
        icon: item.tier === "high" ? "pass-filled" : item.tier === "medium" ? "pass" : "circle-outline",
        contextValue: canForget(item.spaceId) ? "mnemon.recallItem" : "mnemon.recallItem.keep",
        ref: { kind: "recallItem", workspace, item },
    }));
    if (hidden > 0 || result.truncated > 0) {
        nodes.push(message(`recallhidden:${workspace}`, [hidden > 0 ? `${hidden} hidden by branch scope` : "", result.truncated > 0 ? `${result.truncated} cut` : ""].filter(Boolean).join(" · ")));
    }
    return nodes;
}

/** Pending proposals (origin model-suggested, unverified), newest first as the server lists them. */
export function proposalsTree(workspace: string, records: MemoryRecordView[]): Node[] {
    if (records.length === 0) {
        return [message(`noproposals:${workspace}`, "No proposals wait for review", "Assistants propose records with mnemon/records/propose; they show here until you verify or reject them.")];
    }
    return records.map((record) => ({
        id: `proposal:${workspace}:${record.scope}:${record.id}`,
        label: shortLabel(record.title),
        description: `${record.scope} · ${record.type}`,
        tooltip: `**${record.title}**\n\n${record.content}\n\n---\n${record.scope} · ${record.type} · ${record.governance.origin}`,
        icon: "lightbulb",
        contextValue: "mnemon.proposal",
        ref: { kind: "proposal", workspace, record },
    }));
}

/**
 * Whether `entry` (as drawn from an older snapshot) still exists, exactly, in `snapshot`: the guard the
 * view runs before an edit or remove, so that an entry another editor removed or changed meanwhile is
 * reported as a conflict instead of matching some other entry by substring.
 */
export function entryStillThere(snapshot: RuntimeSnapshot, target: Target, content: string): boolean {
    return snapshot.entries.some((e) => (e.target === "user" ? "user" : "memory") === target && e.content === content);
}

/** The message when {@link entryStillThere} is false. */
export function conflictMessage(target: Target, content: string): string {
    return `Mnemon: ${fileOf(target)} changed since the view was drawn (another editor, window or the CLI): "${shortLabel(content, 60)}" is no longer there. The view now shows the current entries; nothing was changed.`;
}

// ------------------------------------------------------------------------------------------ providers

/** The last `mnemon/providers/test` (or enable) answer of a provider in this window, or its error text. */
export type HealthReport = { health: ProviderHealth; at: number } | { error: string; at: number };

/**
 * Context value of a provider node, which gates its menu (package.json `view/item/context`): `missing`
 * (not installed: nothing to do here), `broken` (installed, its package cannot be loaded), `available`
 * (installed, not configured: configure, enable), `disabled` (configured: configure, enable, test),
 * `enabled[.discover][.create]` (configure, disable, test; discover and "Create Space" only when the
 * provider declares `discover` / `createNamespace`).
 */
export function providerContext(p: ProviderView): string {
    if (!p.installed) {
        return "mnemon.provider.missing";
    }
    if (!p.capabilities) {
        return "mnemon.provider.broken";
    }
    if (!p.configured) {
        return "mnemon.provider.available";
    }
    if (!p.enabled) {
        return "mnemon.provider.disabled";
    }
    return `mnemon.provider.enabled${p.capabilities.discover ? ".discover" : ""}${p.capabilities.createNamespace ? ".create" : ""}`;
}

/** `installed, not configured`, `enabled · 2 spaces`, ...: the state words of a provider. */
export function providerState(p: ProviderView): string {
    if (!p.installed) {
        return "not installed";
    }
    if (!p.capabilities) {
        return "installed, cannot be loaded";
    }
    if (!p.configured) {
        return "installed, not configured";
    }
    const spaces = `${p.spaces} ${p.spaces === 1 ? "space" : "spaces"}`;
    return p.enabled ? `enabled · ${spaces}` : "configured, disabled";
}

/** What a provider can do, in words, and what it cannot (capabilities that are false or `unsupported`). */
export function capabilityWords(c: ProviderCapabilities): { can: string[]; cannot: string[] } {
    const can: string[] = [];
    const cannot: string[] = [];
    const flag = (on: boolean | undefined, word: string) => (on ? can : cannot).push(word);
    flag(c.search, "recall");
    flag(c.browse, "browse");
    flag(c.entities, "entities");
    flag(c.related, "related");
    flag(c.graph, "graph");
    flag(c.link, "link");
    if (c.forget && c.delete !== "unsupported") {
        can.push(`forget (${c.delete} delete)`);
    } else {
        cannot.push("forget");
    }
    flag(c.merge, "merge");
    can.push(c.write === "exact" ? "exact writes" : `${c.write} writes`);
    flag(c.discover, "discover namespaces");
    flag(c.createNamespace, "create namespaces");
    return { can, cannot };
}

/** `ok · hermes-agent 0.19.0 · 12 items · 3 ms` / `failed: <message>`. */
export function healthLabel(report: HealthReport | undefined): string {
    if (!report) {
        return "not tested in this window";
    }
    if ("error" in report) {
        return `failed: ${report.error}`;
    }
    const h = report.health;
    const parts = [h.ok ? "ok" : `not ok${h.message ? `: ${h.message}` : ""}`, h.engine];
    if (h.items !== null && h.items !== undefined) {
        parts.push(`${h.items} ${h.items === 1 ? "item" : "items"}`);
    }
    if (h.latencyMs !== null && h.latencyMs !== undefined) {
        parts.push(`${Math.round(h.latencyMs)} ms`);
    }
    return parts.filter(Boolean).join(" · ");
}

function detail(id: string, label: string, description?: string, icon = "dash", tooltip?: string): Node {
    return { id, label, description, icon, tooltip, contextValue: "mnemon.provider.detail" };
}

/**
 * The Memory Providers tree of one folder (`mnemon/providers/list`): the installed providers, in server
 * order, then one collapsed row `Not installed` (`mnemon.provider.group`) leading to the reference's other
 * providers (not installed in the server's Python environment), so that they do not fill every folder's
 * view. An installed provider's children are
 * its package, its connection state (`connection` of the list: a configured provider with a server to reach,
 * checked by the list without opening an engine), health (`health`: keyed by provider id, from Test or Enable
 * in this window; the server's list opens no engine), what it can and cannot do, and its configured field
 * *names* (never a value).
 */
export function providersTree(workspace: string, providers: ProviderView[], health: ReadonlyMap<string, HealthReport>): Node[] {
    const missing = providers.filter((p) => !p.installed);
    const nodes = providers.filter((p) => p.installed).map((p) => providerNode(workspace, p, health));
    if (missing.length > 0) {
        nodes.push({
            id: `providers:${workspace}:missing`,
            label: "Not installed",
            description: `${missing.length} more ${missing.length === 1 ? "provider" : "providers"}: ${missing.map((p) => p.label).join(", ")}`,
            tooltip: "Third-party engines a Memory Space can live in, not installed in the server's Python environment. A " +
                "provider's package (the distribution `mnemon-ls-provider-<id>`: the repository's providers/ folder holds " +
                "the ones that exist, docs/providers.md says how to install them) goes next to mnemon-ls; the provider " +
                "is then listed above, to configure and enable here.",
            icon: "extensions",
            contextValue: "mnemon.provider.group",
            expanded: false,
            children: missing.map((p) => providerNode(workspace, p, health)),
        });
    }
    return nodes;
}

/** `connected · PostgreSQL 16.2 as role mnemon; ...` / `unreachable: <reason>` (the list's check of the server). */
export function connectionLabel(c: ProviderConnection): string {
    return c.state === "connected" ? `connected · ${c.message}` : `unreachable: ${c.message}`;
}

/** One provider's row (and, installed, its detail rows). */
function providerNode(workspace: string, p: ProviderView, health: ReadonlyMap<string, HealthReport>): Node {
    const key = `provider:${workspace}:${p.providerId}`;
    const report = health.get(p.providerId);
    const link = p.installed ? p.connection : undefined;
    // The list's connection check is newer than a Test of this window: it speaks first.
    const sick = link ? link.state !== "connected" : !!report && ("error" in report || !report.health.ok);
    const words = link ? ` · ${link.state}` : report && p.installed ? ` · ${sick ? "unhealthy" : "healthy"}` : "";
    const base: Node = {
        id: key,
        label: p.label,
        description: `${providerState(p)}${words}`,
        icon: !p.installed ? "circle-outline" : !p.capabilities ? "warning" : sick && (p.enabled || link) ? "warning" : p.enabled ? "plug" : "debug-disconnect",
        iconColor: p.installed && sick ? "list.warningForeground" : undefined,
        contextValue: providerContext(p),
        ref: { kind: "provider", workspace, provider: p },
    };
    if (!p.installed) {
        base.tooltip = `**${p.label}** (\`${p.providerId}\`, ${p.kind}): not installed in the server's Python environment ` +
            `(its package would be the distribution \`mnemon-ls-provider-${p.providerId}\`). Nothing here uses it until it is installed and configured.`;
        return base;
    }
    const children: Node[] = [detail(`${key}:package`, "Package", p.distribution ?? "?", "package")];
    if (link) {
        children.push(detail(`${key}:connection`, "Connection", connectionLabel(link), link.state === "connected" ? "plug" : "debug-disconnect",
            `${link.location ? `Location: ${link.location}\n\n` : ""}Checked when the view was drawn (read-only; no engine opened).`));
    }
    if (p.capabilities) {
        children.push(detail(`${key}:health`, "Health", healthLabel(report), report && !("error" in report) && report.health.ok ? "pulse" : "circle-slash",
            report && !("error" in report) && report.health.location ? `Location: ${report.health.location}` : "Run Test Provider to open the engine and check it (writes nothing)."));
        const words = capabilityWords(p.capabilities);
        children.push(detail(`${key}:can`, "Can", words.can.join(", "), "check"));
        if (words.cannot.length > 0) {
            children.push(detail(`${key}:cannot`, "Cannot", words.cannot.join(", "), "close", "The view and the assistants offer none of these for this provider's spaces."));
        }
    }
    const configured = [...p.configuredFields, ...p.configuredSecrets.map((s) => `${s} (secret, stored by the server)`)];
    children.push(detail(`${key}:fields`, "Configured", p.configured ? (configured.length > 0 ? configured.join(", ") : "defaults") : "not yet", "settings-gear"));
    base.children = children;
    base.expanded = false;
    base.tooltip = `**${p.label}** (\`${p.providerId}\`, ${p.kind}) — ${providerState(p)}` +
        (p.capabilities?.createNamespace && p.enabled ? "\n\nCan create namespaces: use Create Space." : "");
    return base;
}
