/**
 * Workspace memory records (seed 002) for the "Mnemon: Review Proposals" command: the
 * `mnemon/records/*` requests it sends and the quick-pick items it shows (pure: no `vscode` import).
 *
 * A proposal is a record an assistant proposed (origin `model-suggested`, still `unverified`); a person
 * verifies or rejects it in two steps: pick the proposal, pick the verdict.
 */

import { RequestSender } from "./requests";

export const RecordsMethod = {
    list: "mnemon/records/list",
    propose: "mnemon/records/propose",
    verify: "mnemon/records/verify",
    reject: "mnemon/records/reject",
} as const;

/** Server -> client notification sent when an assistant proposed a record. */
export const RECORD_PROPOSED = "mnemon/recordProposed";

/** A record as the server sends it (seed 002 section 2, camelCase), plus `proposal` in lists. */
export interface MemoryRecordView {
    id: string;
    scope: "session" | "project" | "shared-project" | "user";
    scopeKey: string;
    type: string;
    title: string;
    content: string;
    tags: string[];
    createdAt: number;
    updatedAt: number;
    status: string;
    governance: { origin: string; verification: string; revision: number; sourceRefs: { kind: string; id: string }[] };
    proposal?: boolean;
}

export interface RecordReceipt {
    status: "committed" | "skipped";
    id: string;
    scope: string;
    message: string;
    record: MemoryRecordView;
    workspace: string;
}

export type Verdict = "verify" | "reject";

/** The pending proposals of one folder, newest first. */
export async function listProposals(client: RequestSender, workspace: string): Promise<MemoryRecordView[]> {
    const result = (await client.sendRequest(RecordsMethod.list, { workspace, proposals: true })) as { records: MemoryRecordView[] };
    return result.records;
}

/** Propose a record as an assistant would (`mnemon/records/propose`). */
export async function proposeRecord(
    client: RequestSender,
    params: { workspace: string; title: string; content: string; type?: string; recordScope?: string },
): Promise<RecordReceipt> {
    return (await client.sendRequest(RecordsMethod.propose, params)) as RecordReceipt;
}

/** Verify or reject one record; the receipt. */
export async function judgeRecord(client: RequestSender, workspace: string, record: MemoryRecordView, verdict: Verdict): Promise<RecordReceipt> {
    const method = verdict === "verify" ? RecordsMethod.verify : RecordsMethod.reject;
    return (await client.sendRequest(method, { workspace, id: record.id, recordScope: record.scope })) as RecordReceipt;
}

function oneLine(text: string, limit: number): string {
    const s = text.replace(/\s+/g, " ").trim();
    return s.length > limit ? `${s.slice(0, limit - 1)}…` : s;
}

/** Quick-pick item of one proposal: title, `scope · type`, the content on the detail line. */
export function proposalPickItem(record: MemoryRecordView): { label: string; description: string; detail: string } {
    return { label: oneLine(record.title, 80), description: `${record.scope} · ${record.type}`, detail: oneLine(record.content, 200) };
}

/** The verdict items, in order (the second pick). */
export const VERDICT_ITEMS: readonly { label: string; description: string; verdict: Verdict }[] = [
    { label: "$(check) Verify", description: "a person confirms it", verdict: "verify" },
    { label: "$(close) Reject", description: "it is not true or not worth keeping", verdict: "reject" },
];

/** The message after a verdict. */
export function verdictMessage(verdict: Verdict, receipt: RecordReceipt): string {
    const done = verdict === "verify" ? "verified" : "rejected";
    const already = receipt.status === "skipped" ? " (it already was)" : "";
    return `Mnemon: ${done} "${oneLine(receipt.record.title, 60)}"${already}.`;
}

/** The message when nothing waits for review. */
export function noProposalsMessage(folderName: string): string {
    return `Mnemon: no proposals wait for review in ${folderName}.`;
}
