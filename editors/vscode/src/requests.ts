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
} as const;

/** Server -> client notification names. */
export const Notification = {
    branchChanged: "mnemon/branchChanged",
    projectionRepaired: "mnemon/projectionRepaired",
} as const;

/**
 * `workspace/executeCommand` ids the *server* advertises. vscode-languageclient registers these as
 * VS Code commands itself, so the extension must never contribute or register them (lsp-anchors 4.4).
 */
export const SERVER_COMMAND_PREFIX = "mnemon.server.";

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

/** Params of `mnemon/projectionRepaired`. */
export interface ProjectionRepairedParams {
    workspace: string;
    file: string;
    preservedAs: string | null;
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
