/**
 * Typed helpers for the Documents tier: `mnemon/documents/*` (pure: no `vscode` import; re-exported by
 * src/requests.ts).
 */

import { request, RequestSender } from "./rpc";

/** Request method names of this tier (part of `Method` in src/requests.ts). */
export const DocumentMethod = {
    documentsCreate: "mnemon/documents/create",
    documentsUpdate: "mnemon/documents/update",
    /** `{workspace?, file, id?, documentRevision?}`: the document made from a workspace file takes its text (what
     * the server's "Update document from file" command runs). */
    documentsUpdateFromFile: "mnemon/documents/updateFromFile",
    documentsGet: "mnemon/documents/get",
    documentsList: "mnemon/documents/list",
    documentsSearch: "mnemon/documents/search",
    documentsArchive: "mnemon/documents/archive",
    documentsRestore: "mnemon/documents/restore",
} as const;

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
    /** `adopted`: an update whose text a hand edit of the managed file already held (a new revision, `notices`). */
    action: "created" | "updated" | "unchanged" | "adopted" | "archived" | "restored";
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
    /** BM25F score rounded to 4 decimals (1 for an empty query); found by meaning alone: its relevance 0..0.55. */
    score: number;
    /**
     * `title` / `description`: the whole query is a phrase of it; `terms`: matched by terms; `all`: empty query;
     * `semantic` / `semantic-low`: found by meaning alone (low: listed last, never sent to an assistant).
     */
    matched: "title" | "description" | "terms" | "all" | "semantic" | "semantic-low";
    /** Found by meaning alone: its best chunk's cosine and `z`. */
    similarity?: { cosine: number; z: number | null };
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
    /** Who the answer is for (the request's `audience`). */
    audience?: "person" | "assistant";
    /** Documents an `assistant` was not sent (`semantic-low`; 0 for a person). */
    withheld?: { lowConfidence: number };
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
    /** `assistant` (the language-model tools): `semantic-low` documents are not sent, only counted in `withheld`. */
    audience?: "person" | "assistant";
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
    return request<DocumentMutation>(sender, DocumentMethod.documentsCreate, params);
}

/** `mnemon/documents/update` (active documents only; an archived one is `document-status`). */
export function updateDocument(sender: RequestSender, params: DocumentUpdateParams): Promise<DocumentMutation> {
    return request<DocumentMutation>(sender, DocumentMethod.documentsUpdate, params);
}

/** `mnemon/documents/get`: one document with its body (`not-found` for an unknown id). */
export function getDocument(sender: RequestSender, params: { workspace?: string; id: string }): Promise<DocumentGetResult> {
    return request<DocumentGetResult>(sender, DocumentMethod.documentsGet, params);
}

/** `mnemon/documents/list`: the catalog (all documents, or those of one status). */
export function listDocuments(sender: RequestSender, params: { workspace?: string; status?: DocumentStatus } = {}): Promise<DocumentCatalog> {
    return request<DocumentCatalog>(sender, DocumentMethod.documentsList, params);
}

/** `mnemon/documents/search`: ranked search over title, description and body (CJK included). */
export function searchDocuments(sender: RequestSender, params: DocumentSearchParams): Promise<DocumentSearchResult> {
    return request<DocumentSearchResult>(sender, DocumentMethod.documentsSearch, params);
}

/** `mnemon/documents/archive`: move an active document to `archived/` (revision + 1). */
export function archiveDocument(sender: RequestSender, params: DocumentArchiveParams): Promise<DocumentMutation> {
    return request<DocumentMutation>(sender, DocumentMethod.documentsArchive, params);
}

/** `mnemon/documents/restore`: bring an archived document back (revision + 1). */
export function restoreDocument(sender: RequestSender, params: DocumentRestoreParams): Promise<DocumentMutation> {
    return request<DocumentMutation>(sender, DocumentMethod.documentsRestore, params);
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
