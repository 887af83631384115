/**
 * The shapes of memories that cite code, as the server's `citations.*` operations answer them (issue 24): the
 * types the Needs Review view (`review.ts`, `reviewView.ts`) and the tree nodes (`trees.ts`) share.
 */

export type CitingSource = "runtime" | "spaces" | "documents" | "records";
export type Freshness = "fresh" | "moved" | "changed" | "gone" | "unknown";

export interface CitationView {
    path: string;
    startLine: number;
    endLine: number;
    sha256: string;
    symbol?: string;
    freshness: Freshness;
    movedTo?: { startLine: number; endLine: number };
}

/** A memory as `citations.review` answers it. */
export interface CitedMemory {
    source: CitingSource;
    key: string;
    id: string;
    label: string;
    title?: string;
    content: string;
    preview: string;
    updatedAt?: string | number;
    age: string;
    spaceId?: string;
    scope?: string;
    cites: CitationView[];
}

export interface ReviewResult {
    memories: CitedMemory[];
    count: number;
    workspace: string;
}

export interface ReanchorResult {
    source: CitingSource;
    key: string;
    cites: CitationView[];
    reanchored: number;
    left: CitationView[];
    workspace: string;
}
