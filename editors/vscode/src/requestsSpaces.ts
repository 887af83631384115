/**
 * Typed helpers for Memory Spaces: `mnemon/spaces/*`, remember, recall, related, link, forget
 * (pure: no `vscode` import; re-exported by src/requests.ts).
 */

import { OperationMethod } from "./protocol.generated";
import { request, RequestSender } from "./rpc";

/** Request method names of this tier (part of `Method` in src/requests.ts). */
export const SpaceMethod = {
    spacesList: OperationMethod["spaces.list"],
    spacesCreate: OperationMethod["spaces.create"],
    spacesUpdate: OperationMethod["spaces.update"],
    spacesActivate: OperationMethod["spaces.activate"],
    spacesDeactivate: OperationMethod["spaces.deactivate"],
    spacesDelete: OperationMethod["spaces.delete"],
    spacesMerge: OperationMethod["spaces.merge"],
    spacesStatus: OperationMethod["spaces.status"],
    remember: OperationMethod["spaces.remember"],
    recall: OperationMethod["spaces.recall"],
    related: OperationMethod["spaces.related"],
    link: OperationMethod["spaces.link"],
    forget: OperationMethod["spaces.forget"],
} as const;

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
    /** With `activated`: the spaces active after the write (a remember that names no space needs exactly one). */
    activeSpaces?: { id: string; name: string }[];
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
    /** Found by meaning alone: the cosine to the query and its `z` over the space (null without a spread). */
    similarity?: { cosine: number; z: number | null };
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
    policy: { id: string; fallbackFrom: string | null; setting?: string };
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
    /** Who the answer is for (the request's `audience`). */
    audience?: Audience;
    /** Results an `assistant` was not sent: tier low outside the ranking's head (0 for a person). */
    withheld?: { lowConfidence: number };
    workspace: string;
}

export interface SpaceCreateParams {
    workspace?: string;
    name: string;
    description: string;
    active?: boolean;
    /**
     * A third-party provider id whose capabilities include `createNamespace` (enabled first, with
     * `mnemon/providers/enable`): the space is a new namespace in that provider. Absent: a native space.
     */
    provider?: string;
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
    /**
     * Who reads the answer (server default `person`). `assistant` (the language-model tools): results found
     * by meaning alone with low confidence are not sent, only counted in `withheld.lowConfidence`.
     */
    audience?: Audience;
}

/** Who reads an answer of `mnemon/recall` or `mnemon/documents/search`. */
export type Audience = "person" | "assistant";

/** `mnemon/spaces/list`: every registered space, or only the active ones. */
export function listSpaces(sender: RequestSender, params: { workspace?: string; activeOnly?: boolean } = {}): Promise<SpaceList> {
    return request<SpaceList>(sender, SpaceMethod.spacesList, params);
}

/** `mnemon/spaces/create`: a new space, native or in `provider` (inactive unless `active`). */
export function createSpace(sender: RequestSender, params: SpaceCreateParams): Promise<SpaceResult> {
    return request<SpaceResult>(sender, SpaceMethod.spacesCreate, params);
}

/** `mnemon/spaces/activate`: let a space take part in reads. */
export function activateSpace(sender: RequestSender, params: { workspace?: string; spaceId: string }): Promise<SpaceResult> {
    return request<SpaceResult>(sender, SpaceMethod.spacesActivate, params);
}

/** `mnemon/spaces/deactivate`: keep a space out of reads. */
export function deactivateSpace(sender: RequestSender, params: { workspace?: string; spaceId: string }): Promise<SpaceResult> {
    return request<SpaceResult>(sender, SpaceMethod.spacesDeactivate, params);
}

/** `mnemon/remember`: one item into a Memory Space (a committed write into an inactive space activates it). */
export function rememberInSpace(sender: RequestSender, params: SpaceRememberParams): Promise<WriteReceipt> {
    return request<WriteReceipt>(sender, SpaceMethod.remember, params);
}

/** `mnemon/recall`: federated recall over the active spaces, with the folder's branch scope applied. */
export function recall(sender: RequestSender, params: RecallParams): Promise<RecallResult> {
    return request<RecallResult>(sender, SpaceMethod.recall, params);
}

/** `mnemon/forget`: soft-delete one item of a space by exact id. */
export function forgetInSpace(sender: RequestSender, params: { workspace?: string; spaceId: string; id: string }): Promise<WriteReceipt> {
    return request<WriteReceipt>(sender, SpaceMethod.forget, params);
}
