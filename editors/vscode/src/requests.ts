/**
 * Typed helpers for the mnemon-ls `mnemon/*` protocol (protocol version 1).
 *
 * This module is pure: it does not import `vscode` or `vscode-languageclient`, only needs something
 * that can send a JSON-RPC request. The extension passes its `LanguageClient`; the contract test
 * passes a `vscode-jsonrpc` `MessageConnection` talking to the real server. Both therefore exercise
 * the exact method names and parameter shapes used here.
 *
 * Server source of truth: the operation layer (`mnemon_ls/ops/`, generated into src/protocol.generated.ts),
 * `mnemon_ls/lsp/protocol.py` and `mnemon_ls/lsp/server.py`.
 *
 * This module holds the method table, the error codes, Runtime memory, status, server commands and
 * errors; the other tiers live in src/requestsDocuments.ts, src/requestsSpaces.ts,
 * src/requestsProviders.ts and src/requestsPacks.ts and are re-exported from here.
 */

import { ErrorCode, ServerCommandId } from "./protocol.generated";
import { compact, request, RequestSender } from "./rpc";
import { DocumentMethod, DocumentMutation } from "./requestsDocuments";
import { ProviderMethod } from "./requestsProviders";
import { SpaceMethod, WriteReceipt } from "./requestsSpaces";

export type { RequestSender } from "./rpc";
export * from "./requestsDocuments";
export * from "./requestsSpaces";
export * from "./requestsProviders";
export * from "./requestsPacks";

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
    ...DocumentMethod,
    ...SpaceMethod,
    ...ProviderMethod,
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
 * (see {@link createDocumentFromFile}). The ids are the server's, generated into
 * src/protocol.generated.ts (`ServerCommandId`, from mnemon_ls/ops/command_ids.py); no `mnemon.server.*`
 * literal is allowed elsewhere in src/ (scripts/check-manifest.mjs): never contributed, never registered,
 * never run through `vscode.commands.executeCommand`.
 */
export const ServerCommand = {
    createDocumentFromFile: ServerCommandId.createDocumentFromFile,
    rememberSelection: ServerCommandId.rememberSelection,
} as const;

/** Stable `data.code` of an error response -> its JSON-RPC numeric code (generated from the server's table). */
export { ErrorCode };

export type MnemonErrorCode = keyof typeof ErrorCode;

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

/** Argument object of `mnemon.server.rememberSelection` (mnemon_ls/ops/command_args.py `RememberArgs`). */
export interface RememberSelectionArgs {
    /** The document's `file:` URI (its folder is the workspace). */
    uri: string;
    /** The selected text, exactly as selected. */
    text: string;
    /** Where it was selected (LSP range, 0-based): the memory cites those lines when the file is saved as shown. */
    range?: { start: { line: number; character: number }; end: { line: number; character: number } };
    /** The document's language id: a selection that is a comment loses that language's comment markers. */
    languageId?: string;
    /** MEMORY.md only: scope the entry to these branches. Into a space: at most one, a `branch:<name>` tag. */
    branches?: string[];
    /** Remember in this Memory Space instead of MEMORY.md (a committed write into an inactive one activates it). */
    spaceId?: string;
    importance?: Importance;
}

/** A refused server command, shaped like a refused request so that {@link asMnemonError} decodes it. */
export class ServerCommandError extends Error {
    constructor(
        readonly code: number,
        message: string,
        readonly data: Record<string, unknown>,
    ) {
        super(message);
    }
}

type CommandResult<R> = (R & { success: true }) | { success: false; error: { code: string; message: string; [key: string]: unknown } };

async function rememberSelectionCommand<R>(sender: RequestSender, args: RememberSelectionArgs): Promise<R> {
    const result = await executeServerCommand<CommandResult<R>>(sender, ServerCommand.rememberSelection, [compact({ ...args, quiet: true })]);
    if (result.success === false) {
        const { code, message, ...data } = result.error;
        throw new ServerCommandError(ErrorCode[code as keyof typeof ErrorCode] ?? -32603, message, { code, ...data });
    }
    return result;
}

/**
 * "Remember Selection", single-sourced in the server (the command Neovim and the server's code actions
 * run too): `mnemon.server.rememberSelection` takes a selected comment without its comment markers (by
 * `languageId`) and adds it to MEMORY.md (`branches` scopes it). Sent with `quiet: true`: the extension
 * shows the receipt itself. Rejects with a {@link ServerCommandError} (e.g. `runtime-capacity`).
 */
export function rememberSelectionInMemory(sender: RequestSender, args: Omit<RememberSelectionArgs, "spaceId">): Promise<Receipt & { workspace: string }> {
    return rememberSelectionCommand(sender, args);
}

/** The same command with `spaceId`: the selection becomes an item of that Memory Space. */
export function rememberSelectionInSpace(sender: RequestSender, args: RememberSelectionArgs & { spaceId: string }): Promise<WriteReceipt> {
    return rememberSelectionCommand(sender, args);
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
