/**
 * The shapes of memories that cite code, as the server's `citations.*` operations answer them (issue 24): the
 * types the Needs Review view (`review.ts`, `reviewView.ts`) and the tree nodes (`trees.ts`) share.
 */

export type CitingSource = "runtime" | "spaces" | "documents" | "records";
export type Freshness = "fresh" | "moved" | "renamed" | "changed" | "gone" | "unknown";

export interface CitationView {
    path: string;
    startLine: number;
    endLine: number;
    sha256: string;
    symbol?: string;
    freshness: Freshness;
    movedTo?: { startLine: number; endLine: number };
    /** Where git says the file went (`renamed`, or `changed` when the lines are not in the new file). */
    renamedTo?: string;
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
    /** A runtime entry's file: `user` (USER.md) or `memory` (MEMORY.md). */
    target?: "user" | "memory";
    cites: CitationView[];
    /** Why it is listed: `changed`/`gone` (a citation), `review-due` (not updated or confirmed for `reviewAfterDays`). */
    reasons?: ReviewReason[];
    /** When a person last confirmed it still true (ISO-8601 UTC). */
    reviewedAt?: string;
    /** When a memory listed as `review-due` became due (ISO-8601 UTC: its latest update, recall or confirmation plus `reviewAfterDays`). */
    reviewDueSince?: string;
}

export type ReviewReason = "changed" | "gone" | "review-due";

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
    /** When the memory was confirmed still true (ISO-8601 UTC), restarting its review clock. */
    reviewedAt?: string;
    /** Days until it is due for review again (the `reviewAfterDays` setting; 0: review is off). */
    nextReviewDays?: number;
    /** Where a damaged reviewed.json was kept before it was written anew (absent when it was whole). */
    keptDamaged?: string;
    workspace: string;
}
