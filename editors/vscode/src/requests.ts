/**
 * Typed helpers for the mnemon-ls `mnemon/*` protocol (protocol version 1).
 *
 * This module is pure: it does not import `vscode` or `vscode-languageclient`, only needs something
 * that can send a JSON-RPC request. The extension passes its `LanguageClient`; the contract test
 * passes a `vscode-jsonrpc` `MessageConnection` talking to the real server. Both therefore exercise
 * the exact method names and parameter shapes used here.
 *
 * Server source of truth: `mnemon_ls/lsp/protocol.py` and `mnemon_ls/lsp/server.py`.
 */

/** Version of the `mnemon/*` surface this extension speaks; compared with `mnemon/status`. */
export const PROTOCOL_VERSION = 1;

/** Request method names. */
export const Method = {
    runtimeMutate: "mnemon/runtime/mutate",
    runtimeSnapshot: "mnemon/runtime/snapshot",
    wake: "mnemon/wake",
    turnBegin: "mnemon/turn/begin",
    turnEnd: "mnemon/turn/end",
    status: "mnemon/status",
    documentsCreate: "mnemon/documents/create",
    documentsUpdate: "mnemon/documents/update",
    documentsGet: "mnemon/documents/get",
    documentsList: "mnemon/documents/list",
    documentsSearch: "mnemon/documents/search",
    documentsArchive: "mnemon/documents/archive",
    documentsRestore: "mnemon/documents/restore",
    spacesList: "mnemon/spaces/list",
    spacesCreate: "mnemon/spaces/create",
    spacesUpdate: "mnemon/spaces/update",
    spacesActivate: "mnemon/spaces/activate",
    spacesDeactivate: "mnemon/spaces/deactivate",
    spacesDelete: "mnemon/spaces/delete",
    spacesMerge: "mnemon/spaces/merge",
    spacesStatus: "mnemon/spaces/status",
    remember: "mnemon/remember",
    recall: "mnemon/recall",
    related: "mnemon/related",
    link: "mnemon/link",
    forget: "mnemon/forget",
    /** Standard LSP request; used only with the ids in {@link ServerCommand}. */
    executeCommand: "workspace/executeCommand",
} as const;

/** Server -> client notification names. */
export const Notification = {
    branchChanged: "mnemon/branchChanged",
    projectionRepaired: "mnemon/projectionRepaired",
    /** `{workspace, source: runtime|documents|spaces|records}`: a Source's truth changed (mnemon_ls/lsp/views.py). */
    memoryChanged: "mnemon/memoryChanged",
} as const;

/** Params of `mnemon/memoryChanged`. */
export interface MemoryChangedParams {
    workspace: string;
    source: "runtime" | "documents" | "spaces" | "records";
}

/**
 * `workspace/executeCommand` ids the *server* advertises. vscode-languageclient registers these as
 * VS Code commands itself, so the extension must never contribute or register them (lsp-anchors 4.4).
 */
export const SERVER_COMMAND_PREFIX = "mnemon.server.";

/**
 * The server commands this extension sends itself, as a plain `workspace/executeCommand` request
 * (see {@link createDocumentFromFile}). These are the only `mnemon.server.*` ids allowed in src/
 * (scripts/check-manifest.mjs): never contributed, never registered, never run through
 * `vscode.commands.executeCommand`.
 */
export const ServerCommand = {
    createDocumentFromFile: "mnemon.server.createDocumentFromFile",
} as const;

/** Stable `data.code` of an error response -> its JSON-RPC numeric code. */
export const ErrorCode = {
    "invalid-input": -32602,
    "runtime-capacity": -32010,
    "revision-conflict": -32011,
    "ambiguous-match": -32012,
    "no-match": -32013,
    "not-found": -32014,
    "unreadable-store": -32015,
    "not-in-workspace": -32016,
    "store-busy": -32017,
    "document-capacity": -32018,
    "document-status": -32019,
    "provider-unavailable": -32020,
    "provider-failed": -32021,
    "space-read-only": -32022,
    "space-refused": -32023,
    "storage-error": -32030,
    "storage-full": -32031,
    "storage-readonly": -32032,
    "storage-denied": -32033,
    "storage-unreadable": -32034,
    "storage-unsafe": -32035,
    "store-too-large": -32024,
    "confirmation-required": -32025,
    "internal-error": -32603,
} as const;

export type MnemonErrorCode = keyof typeof ErrorCode;

/** The one thing the helpers need: `LanguageClient` and vscode-jsonrpc's `MessageConnection` both fit. */
export interface RequestSender {
    sendRequest(method: string, params: unknown): Promise<unknown>;
}

export type Target = "user" | "memory";
export type Importance = "critical" | "normal" | "low";

export interface Usage {
    /** UTF-8 bytes of the target now. */
    used: number;
    /** Capacity of the target in bytes. */
    limit: number;
}

/** Result of `mnemon/runtime/mutate`. */
export interface Receipt {
    success: true;
    /** e.g. "Entry added.", "Entry already exists.", "Entry removed." */
    message: string;
    target: Target;
    /** Entries of the mutated target after the change. */
    entryCount: number;
    usage: Usage;
    revision: string;
    /** false for a no-op (e.g. the entry already existed). */
    changed: boolean;
    added?: string;
    removed?: string;
    replaced?: { from: string; to: string };
    kept?: string[];
    dropped?: string[];
    archived?: number;
    preserved?: Record<string, string>;
    /** Folder URI the request resolved to. */
    workspace: string;
}

/** Result of `mnemon/wake`. */
export interface WakeSnapshot {
    text: string;
    revision: string;
    branch: string | null;
    branchReason: string | null;
    hidden: number;
    omitted: number;
    chars: number;
    notices: string[];
    workspace: string;
}

export interface RuntimeEntry {
    content: string;
    importance?: Importance;
    branches?: string[];
    [key: string]: unknown;
}

/** Result of `mnemon/runtime/snapshot`. */
export interface RuntimeSnapshot {
    workspace: string;
    revision: string;
    entries: RuntimeEntry[];
    usage: Record<Target, Usage>;
    problems: string[];
}

/** One row of `mnemon/status`. */
export interface WorkspaceStatus {
    /** Folder URI, as the client sent it in `initialize` / `didChangeWorkspaceFolders`. */
    uri: string;
    name: string;
    /** Storage root (absolute path). */
    root: string;
    userRoot: string;
    scope: string;
    branch: string | null;
    branchReason: string | null;
    detached: boolean;
    entries: Record<Target, number>;
    usage: Record<Target, Usage>;
    problems: string[];
}

/** Result of `mnemon/status`. */
export interface StatusResult {
    version: string;
    protocolVersion: number;
    workspaces: WorkspaceStatus[];
}

export interface TurnBeginResult {
    viewId: string;
    wake: WakeSnapshot;
    revisions: Record<string, string>;
    parentViewId: string | null;
}

export interface TurnEndResult {
    viewId: string;
    ended: true;
}

/** Params of `mnemon/branchChanged`. */
export interface BranchChangedParams {
    workspace: string;
    branch: string | null;
    detached: boolean;
    reason: string | null;
    previous: string | null;
}

/**
 * What became of a USER.md / MEMORY.md that differed from memories.json (`handEdit` of
 * `mnemon/projectionRepaired`): `imported` (adds/replaces/removes committed), `rejected` (a rule was
 * broken: `problems` name the item and rule; nothing applied), `conflict` (a write came first),
 * `leftover` (a crash leftover, rebuilt), `format` (line endings or a BOM only; not an edit).
 */
export interface HandEditResult {
    status: "imported" | "rejected" | "conflict" | "leftover" | "format";
    message: string;
    reason?: string;
    savedAs?: string;
    added?: string[];
    replaced?: { from: string; to: string }[];
    removed?: string[];
    problems?: { item: number | null; field: string; rule: string; code: string; excerpt: string }[];
}

/** Params of `mnemon/projectionRepaired`. */
export interface ProjectionRepairedParams {
    workspace: string;
    file: string;
    preservedAs: string | null;
    handEdit?: HandEditResult;
}

export interface MutateParams {
    /** Folder URI, file URI inside a folder, or absolute path; optional with exactly one folder open. */
    workspace?: string;
    action: "add" | "replace" | "remove";
    target?: Target;
    content?: string;
    oldText?: string;
    importance?: Importance;
    branches?: string[];
}

export interface WakeParams {
    workspace?: string;
    branch?: string;
    budgetChars?: number;
    viewId?: string;
}

/** Drop `undefined` members so they are absent on the wire (the server forbids unknown/extra keys only). */
function compact<T extends object>(params: T): T {
    return Object.fromEntries(Object.entries(params).filter(([, v]) => v !== undefined)) as T;
}

async function request<R>(sender: RequestSender, method: string, params: object): Promise<R> {
    return (await sender.sendRequest(method, compact(params))) as R;
}

/** `mnemon/runtime/mutate` with any action. */
export function mutate(sender: RequestSender, params: MutateParams): Promise<Receipt> {
    return request<Receipt>(sender, Method.runtimeMutate, params);
}

/**
 * Remember `content` in MEMORY.md (`action: "add"`, `target: "memory"`). `content` is sent exactly
 * as given: the server normalizes and validates it (`§`, 8192 bytes, capacity).
 */
export function remember(
    sender: RequestSender,
    args: { workspace: string; content: string; branches?: string[]; importance?: Importance },
): Promise<Receipt> {
    return mutate(sender, {
        workspace: args.workspace,
        action: "add",
        target: "memory",
        content: args.content,
        importance: args.importance,
        branches: args.branches && args.branches.length > 0 ? args.branches : undefined,
    });
}

/** Remove the entry of `target` located by `oldText` (`no-match` / `ambiguous-match` errors otherwise). */
export function forget(
    sender: RequestSender,
    args: { workspace: string; oldText: string; target?: Target },
): Promise<Receipt> {
    return mutate(sender, { workspace: args.workspace, action: "remove", target: args.target ?? "memory", oldText: args.oldText });
}

/** `mnemon/runtime/snapshot`: the committed entries and usage of a folder. */
export function runtimeSnapshot(sender: RequestSender, workspace?: string): Promise<RuntimeSnapshot> {
    return request<RuntimeSnapshot>(sender, Method.runtimeSnapshot, { workspace });
}

/** `mnemon/wake`: the rendered wake snapshot of a folder (or of a pinned view with `viewId`). */
export function wake(sender: RequestSender, params: WakeParams): Promise<WakeSnapshot> {
    return request<WakeSnapshot>(sender, Method.wake, params);
}

/** `mnemon/turn/begin`: pin a view of the folder's wake. */
export function turnBegin(sender: RequestSender, params: { workspace?: string; parentViewId?: string }): Promise<TurnBeginResult> {
    return request<TurnBeginResult>(sender, Method.turnBegin, params);
}

/** `mnemon/turn/end`: release a pinned view. */
export function turnEnd(sender: RequestSender, viewId: string): Promise<TurnEndResult> {
    return request<TurnEndResult>(sender, Method.turnEnd, { viewId });
}

/** `mnemon/status`: server version, protocol version and one row per folder. */
export function status(sender: RequestSender): Promise<StatusResult> {
    return request<StatusResult>(sender, Method.status, {});
}

// ------------------------------------------------------------------------------------------------ documents

export type DocumentStatus = "active" | "archived";

/**
 * A document's `index.json` record (server: `mnemon_ls/documents/model.py`), with the effective
 * `lastAccessedAt`.
 */
export interface DocumentRecord {
    /** UUID v4. */
    id: string;
    title: string;
    description: string;
    status: DocumentStatus;
    /** `<slug(title)>-<id[:8]>.md` (`document-<id[:8]>.md` for a CJK-only title). */
    filename: string;
    /** `documents/<status>/<filename>`, relative to the storage root (not to the workspace). */
    relativePath: string;
    /** Workspace-relative, `/`-separated paths of the files the document was written from. */
    sourcePaths: string[];
    sessionIds: string[];
    createdAt: string;
    updatedAt: string;
    lastAccessedAt: string;
    /** Document revision: 1 when created, + 1 on every update, archive and restore. */
    revision: number;
    /** sha256 hex of the body. */
    contentHash: string;
    /** UTF-8 bytes of the whole managed file (frontmatter included). */
    sizeBytes: number;
    archivedAt?: string;
    archiveSummary?: string;
    memoryBodyIds: string[];
}

/** A document with its body (`mnemon/documents/get`, and `document` of every mutation). */
export interface DocumentView extends DocumentRecord {
    /** The body, as stored (trimmed, without frontmatter). */
    content: string;
    /** Absolute path of the managed Markdown file. */
    path: string;
}

/** Active capacity of a store's documents. */
export interface DocumentUsage {
    activeBytes: number;
    activeCount: number;
    archivedCount: number;
    limitBytes: number;
}

/** Result of `mnemon/documents/{create,update,archive,restore}`. */
export interface DocumentMutation {
    success: true;
    action: "created" | "updated" | "archived" | "restored";
    document: DocumentView;
    /** Index revision after the commit: the next `expectedRevision`. */
    revision: string;
    usage: DocumentUsage;
    /** What was saved before being overwritten (e.g. an un-adopted hand edit) -> the copy's path. */
    preserved: Record<string, string>;
    notices: string[];
    /** Folder URI the request resolved to. */
    workspace: string;
}

/** Result of `mnemon/documents/get`. */
export interface DocumentGetResult extends DocumentView {
    workspace: string;
}

/** One entry of `mnemon/documents/list`. */
export interface CatalogEntry extends DocumentRecord {
    /** The managed file is present and readable. */
    healthy: boolean;
    problem?: string;
    excerpt?: string;
    /** Absolute path of the managed file (added by the server for editors). */
    path?: string;
}

/** Result of `mnemon/documents/list`. */
export interface DocumentCatalog extends DocumentUsage {
    revision: string;
    generatedAt: string;
    total: number;
    /** A damaged index (the entries are the recoverable ones), else null. */
    problem: string | null;
    notices: string[];
    documents: CatalogEntry[];
    workspace: string;
}

/** One hit of `mnemon/documents/search`. */
export interface SearchHit extends DocumentRecord {
    /** BM25F score rounded to 4 decimals (1 for an empty query). */
    score: number;
    /** `title` / `description`: the whole query is a phrase of it; `terms`: matched by terms; `all`: empty query. */
    matched: "title" | "description" | "terms" | "all";
    /** About 220 characters of the body around the best match, `…` where cut. */
    excerpt: string;
    /** The body, with `includeContent: true` only. */
    content?: string;
    /** Absolute path of the managed file (added by the server; older servers only give `relativePath`). */
    path?: string;
}

/** Result of `mnemon/documents/search`. */
export interface DocumentSearchResult {
    query: string;
    includeArchived: boolean;
    limit: number;
    /** `results.length`. */
    total: number;
    /** Documents that matched before the limit. */
    matches: number;
    generatedAt: string;
    revision: string;
    /** Documents left out (missing or unreadable file), a damaged index: show them as a warning. */
    notices: string[];
    results: SearchHit[];
    workspace: string;
}

export interface DocumentCreateParams {
    workspace?: string;
    /** Required; whitespace collapsed, at most 160 characters. */
    title: string;
    /** The body (required, non-empty after trimming). */
    content: string;
    description?: string;
    /** Workspace files it was written from (absolute or workspace-relative; stored workspace-relative). */
    sourcePaths?: string[];
    /** Index revision the caller saw (64 hex); a stale one is `revision-conflict`. */
    expectedRevision?: string;
}

export interface DocumentUpdateParams {
    workspace?: string;
    id: string;
    title?: string;
    content?: string;
    description?: string;
    sourcePaths?: string[];
    /** The document revision the caller saw; a stale one is `revision-conflict`. */
    documentRevision?: number;
    expectedRevision?: string;
}

export interface DocumentSearchParams {
    workspace?: string;
    /** At most 2000 characters; empty lists every eligible document, newest first. */
    query: string;
    includeArchived?: boolean;
    /** 1..50 (server default 20). */
    limit?: number;
    includeContent?: boolean;
}

export interface DocumentArchiveParams {
    workspace?: string;
    id: string;
    /** Required: the document revision the caller saw (`revision-conflict` when stale). */
    documentRevision: number;
    /** At most 1000 characters (server default "Archived locally by the user."). */
    summary?: string;
    expectedRevision?: string;
}

export interface DocumentRestoreParams {
    workspace?: string;
    id: string;
    documentRevision?: number;
    expectedRevision?: string;
}

/** `mnemon/documents/create`: a new active document (revision 1). */
export function createDocument(sender: RequestSender, params: DocumentCreateParams): Promise<DocumentMutation> {
    return request<DocumentMutation>(sender, Method.documentsCreate, params);
}

/** `mnemon/documents/update` (active documents only; an archived one is `document-status`). */
export function updateDocument(sender: RequestSender, params: DocumentUpdateParams): Promise<DocumentMutation> {
    return request<DocumentMutation>(sender, Method.documentsUpdate, params);
}

/** `mnemon/documents/get`: one document with its body (`not-found` for an unknown id). */
export function getDocument(sender: RequestSender, params: { workspace?: string; id: string }): Promise<DocumentGetResult> {
    return request<DocumentGetResult>(sender, Method.documentsGet, params);
}

/** `mnemon/documents/list`: the catalog (all documents, or those of one status). */
export function listDocuments(sender: RequestSender, params: { workspace?: string; status?: DocumentStatus } = {}): Promise<DocumentCatalog> {
    return request<DocumentCatalog>(sender, Method.documentsList, params);
}

/** `mnemon/documents/search`: ranked search over title, description and body (CJK included). */
export function searchDocuments(sender: RequestSender, params: DocumentSearchParams): Promise<DocumentSearchResult> {
    return request<DocumentSearchResult>(sender, Method.documentsSearch, params);
}

/** `mnemon/documents/archive`: move an active document to `archived/` (revision + 1). */
export function archiveDocument(sender: RequestSender, params: DocumentArchiveParams): Promise<DocumentMutation> {
    return request<DocumentMutation>(sender, Method.documentsArchive, params);
}

/** `mnemon/documents/restore`: bring an archived document back (revision + 1). */
export function restoreDocument(sender: RequestSender, params: DocumentRestoreParams): Promise<DocumentMutation> {
    return request<DocumentMutation>(sender, Method.documentsRestore, params);
}

/**
 * Absolute path of a document's managed file: the `path` the server gives, else `relativePath`
 * (relative to the storage root) joined to `root`, the `mnemon/status` row's storage root.
 */
export function documentPath(doc: { path?: string; relativePath: string }, root?: string): string | undefined {
    if (doc.path) {
        return doc.path;
    }
    if (!root) {
        return undefined;
    }
    const separator = root.includes("\\") && !root.includes("/") ? "\\" : "/";
    const relative = separator === "/" ? doc.relativePath : doc.relativePath.split("/").join("\\");
    return root.endsWith(separator) ? `${root}${relative}` : `${root}${separator}${relative}`;
}

// ------------------------------------------------------------------------------------------------ memory spaces

/** A Memory Space as the server lists it (server: `SpaceView.to_dict`, mnemon_ls/spaces/service.py). */
export interface SpaceView {
    /** `default` for the first native space of a root, later ones UUIDs. */
    id: string;
    name: string;
    description: string;
    /** Active spaces take part in reads (recall, related, status). */
    active: boolean;
    providerId: string;
    providerLabel: string;
    kind: "native" | "third-party";
    driver?: "embedded" | "cli" | null;
    location: { dataDir: string; store: string; path: string } | { externalId: string; connectionFields: string[] };
    capabilities: Record<string, unknown> | null;
    available: boolean;
    createdAt: string;
    updatedAt: string;
    metadataSource?: string;
    placement?: unknown;
    [key: string]: unknown;
}

/** Result of `mnemon/spaces/list`. */
export interface SpaceList {
    spaces: SpaceView[];
    workspace: string;
}

/** Result of `mnemon/spaces/{create,update,activate,deactivate}`: the space, with the folder. */
export type SpaceResult = SpaceView & { workspace: string };

/**
 * Result of `mnemon/remember`, `mnemon/forget` and `mnemon/link` (server: `WriteReceipt.to_dict`):
 * `status` `committed` (durably written), `skipped` (exact duplicate: `id`/`duplicateOf` name the
 * existing item), or a provider mapping (`accepted`, `candidate`, `partial`, `failed`, `unknown`).
 */
export interface WriteReceipt {
    status: "committed" | "skipped" | "accepted" | "candidate" | "partial" | "failed" | "unknown";
    /** `added`, `skipped`, `linked`, `deleted`, `merged`. */
    action: string;
    spaceId: string;
    spaceName: string;
    /** The item's id (the existing one for `skipped`). */
    id: string | null;
    message: string;
    /** True when this write activated an inactive space. */
    activated: boolean;
    edgesCreated?: Record<string, unknown>;
    entities?: string[];
    tags?: string[];
    createdAt?: string | null;
    duplicateOf?: string;
    workspace: string;
    [key: string]: unknown;
}

export type RecallTier = "high" | "medium" | "low" | "unknown";

/** One hit of `mnemon/recall`. */
export interface RecallItem {
    spaceId: string;
    spaceName: string;
    providerId: string;
    id: string;
    content: string;
    score: number | null;
    normalizedScore?: number | null;
    tier: RecallTier;
    category: string;
    importance: number;
    tags: string[];
    entities?: string[];
    source?: string;
    createdAt: string | null;
    matchedVia?: string;
    /** Branches of the item's `branch:<name>` tags. */
    branches?: string[];
    /** `other-branch` (branchRecall `label`) or `branch-unknown` (detached HEAD with policy `show`). */
    branchLabel?: string;
    federatedScore?: number;
}

/** One space queried by `mnemon/recall`. */
export interface RecallSource {
    spaceId: string;
    spaceName: string;
    providerId: string;
    status: "ready" | "empty" | "unavailable" | "unsupported";
    hint?: string | null;
    stats: Record<string, unknown> | null;
}

/** Result of `mnemon/recall` (server: `RecallResult`, mnemon_ls/spaces/service.py). */
export interface RecallResult {
    query: string;
    mode: "smart" | "keyword" | "basic";
    limit: number;
    candidateLimit: number;
    policy: { id: string; fallbackFrom: string | null };
    results: RecallItem[];
    sources: RecallSource[];
    /** Items left out by the branch scope: tagged for other branches, or branch-tagged on a detached HEAD. */
    hidden: { otherBranch: number; detachedHead: number };
    branch: { name: string | null; recall: string; detachedHeadPolicy: string };
    /** Results cut by the server's maximum (12). */
    truncated: number;
    /** Why there are no results (`no active space`, `nothing matched`, ...), null when there are. */
    hint: string | null;
    notices: string[];
    workspace: string;
}

export interface SpaceCreateParams {
    workspace?: string;
    name: string;
    description: string;
    active?: boolean;
}

export interface SpaceRememberParams {
    workspace?: string;
    content: string;
    /** Required when not exactly one space is active. */
    spaceId?: string;
    category?: string;
    /** 1..5. */
    importance?: number;
    tags?: string[];
    entities?: string[];
    source?: string;
    /** Tag the item with the folder's current branch (`invalid-input` when none is checked out). */
    scopeToBranch?: boolean;
}

export interface RecallParams {
    workspace?: string;
    /** Non-empty. */
    query: string;
    /** Active space ids (default: every active space); an inactive one is `invalid-input` (`spaces[i]`). */
    spaces?: string[];
    /** 1..50. */
    limit?: number;
    mode?: "smart" | "keyword" | "basic";
    category?: string;
    source?: string;
    intent?: string;
}

/** `mnemon/spaces/list`: every registered space, or only the active ones. */
export function listSpaces(sender: RequestSender, params: { workspace?: string; activeOnly?: boolean } = {}): Promise<SpaceList> {
    return request<SpaceList>(sender, Method.spacesList, params);
}

/** `mnemon/spaces/create`: a new native space (inactive unless `active`). */
export function createSpace(sender: RequestSender, params: SpaceCreateParams): Promise<SpaceResult> {
    return request<SpaceResult>(sender, Method.spacesCreate, params);
}

/** `mnemon/spaces/activate`: let a space take part in reads. */
export function activateSpace(sender: RequestSender, params: { workspace?: string; spaceId: string }): Promise<SpaceResult> {
    return request<SpaceResult>(sender, Method.spacesActivate, params);
}

/** `mnemon/spaces/deactivate`: keep a space out of reads. */
export function deactivateSpace(sender: RequestSender, params: { workspace?: string; spaceId: string }): Promise<SpaceResult> {
    return request<SpaceResult>(sender, Method.spacesDeactivate, params);
}

/** `mnemon/remember`: one item into a Memory Space (a committed write into an inactive space activates it). */
export function rememberInSpace(sender: RequestSender, params: SpaceRememberParams): Promise<WriteReceipt> {
    return request<WriteReceipt>(sender, Method.remember, params);
}

/** `mnemon/recall`: federated recall over the active spaces, with the folder's branch scope applied. */
export function recall(sender: RequestSender, params: RecallParams): Promise<RecallResult> {
    return request<RecallResult>(sender, Method.recall, params);
}

/** `mnemon/forget`: soft-delete one item of a space by exact id. */
export function forgetInSpace(sender: RequestSender, params: { workspace?: string; spaceId: string; id: string }): Promise<WriteReceipt> {
    return request<WriteReceipt>(sender, Method.forget, params);
}

// ------------------------------------------------------------------------------------------------ server commands

/** Result of `mnemon.server.createDocumentFromFile` when the document was created. */
export interface CreateFromFileCreated extends Omit<DocumentMutation, "success"> {
    success: true;
    /** Absolute path of the new managed file (= `document.path`). */
    path: string;
    /** Its `file:` URI (what the server sent in `window/showDocument`). */
    uri: string;
    /** Whether the client opened it for the server (`window/showDocument` succeeded). */
    shown: boolean;
}

/** Result of `mnemon.server.createDocumentFromFile` when it refused (the server already showed the error). */
export interface CreateFromFileFailed {
    success: false;
    /** `{code, message, ...data}`: e.g. `not-in-workspace`, `invalid-input` (field `path`/`sourcePaths[0]`), `document-capacity`. */
    error: { code: string; message: string; [key: string]: unknown };
}

export type CreateFromFileResult = CreateFromFileCreated | CreateFromFileFailed;

/** `workspace/executeCommand` with one of the server's command ids (only the ids of {@link ServerCommand}). */
export function executeServerCommand<R>(
    sender: RequestSender,
    command: (typeof ServerCommand)[keyof typeof ServerCommand],
    args: unknown[],
): Promise<R> {
    return request<R>(sender, Method.executeCommand, { command, arguments: args });
}

/**
 * "Create document from file", single-sourced in the server: `mnemon.server.createDocumentFromFile
 * {uri, title?}` reads the file from disk, takes the title from its first Markdown heading (else the
 * file name), stores the text as the body and the file as the only (workspace-relative) source path,
 * refusing files outside the workspace. It then asks the client to open the new document
 * (`window/showDocument`, reported as `shown`) and shows a message itself (success or error).
 *
 * Sent as a plain `workspace/executeCommand` request rather than through the VS Code command that
 * vscode-languageclient registers for the id, so that the result (path, shown) comes back typed and no
 * `mnemon.server.*` id is ever contributed, registered or executed as a VS Code command (lsp-anchors 4.4).
 */
export function createDocumentFromFile(sender: RequestSender, args: { uri: string; title?: string }): Promise<CreateFromFileResult> {
    return executeServerCommand<CreateFromFileResult>(sender, ServerCommand.createDocumentFromFile, [compact(args)]);
}

// ------------------------------------------------------------------------------------------------ errors

/** A `mnemon/*` error response, decoded. */
export interface MnemonError {
    /** Stable kebab-case id (`data.code`), e.g. `invalid-input`, `no-match`, `runtime-capacity`. */
    code: string;
    /** JSON-RPC numeric code. */
    rpcCode: number;
    message: string;
    /** The rest of `data` (`field`, `rule`, `used`, `limit`, ...). */
    data: Record<string, unknown>;
}

/**
 * Decode a rejected request: vscode-jsonrpc's `ResponseError` (what `LanguageClient.sendRequest` and
 * `MessageConnection.sendRequest` reject with) has `code`, `message` and `data`. Returns undefined
 * for anything that is not a JSON-RPC error response (e.g. the connection closed).
 */
export function asMnemonError(error: unknown): MnemonError | undefined {
    if (typeof error !== "object" || error === null) {
        return undefined;
    }
    const e = error as { code?: unknown; message?: unknown; data?: unknown };
    if (typeof e.code !== "number") {
        return undefined;
    }
    const data = typeof e.data === "object" && e.data !== null ? (e.data as Record<string, unknown>) : {};
    const code = typeof data.code === "string" ? data.code : `rpc${e.code}`;
    return { code, rpcCode: e.code, message: typeof e.message === "string" ? e.message : String(e.message), data };
}

// ------------------------------------------------------------------------------------------------ status helpers

function withSlash(uri: string): string {
    return uri.endsWith("/") ? uri : `${uri}/`;
}

function canonical(uri: string): string {
    try {
        return decodeURIComponent(uri).replace(/^file:\/\/localhost\//, "file:///");
    } catch {
        return uri;
    }
}

/**
 * The status row of the folder containing `uri` (a folder or file URI): the longest folder URI that
 * equals or prefixes it. URIs are compared percent-decoded, so `file:///c%3A/x` matches `file:///c:/x`.
 */
export function workspaceFor(result: StatusResult, uri: string): WorkspaceStatus | undefined {
    const target = canonical(uri);
    let best: WorkspaceStatus | undefined;
    for (const row of result.workspaces) {
        const folder = canonical(row.uri);
        if (target === folder || target.startsWith(withSlash(folder)) || withSlash(target) === withSlash(folder)) {
            if (!best || folder.length > canonical(best.uri).length) {
                best = row;
            }
        }
    }
    return best;
}

/** The checked-out branch of the folder containing `uri`, or undefined (detached HEAD, no git, unknown). */
export function branchFor(result: StatusResult, uri: string): string | undefined {
    return workspaceFor(result, uri)?.branch ?? undefined;
}
