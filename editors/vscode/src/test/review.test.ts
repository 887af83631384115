/**
 * Unit tests of src/review.ts (the Needs Review view's nodes and the requests its actions send). No VS Code,
 * no server: the inputs have the shapes `mnemon/citations/review` answers (the contract test drives the real
 * server with the same helpers).
 */

import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { CitedMemory } from "../citations";
import { canEdit, citationLabel, editRequest, reanchoredMessage, removeRequest, reviewTree } from "../review";
import { CONTEXT_VALUES } from "../trees";

const W = "file:///work/repo";
const cite = { path: "src/lib.py", startLine: 3, endLine: 4, sha256: "a".repeat(64) };

function memory(source: CitedMemory["source"], extra: Partial<CitedMemory> = {}): CitedMemory {
    return {
        source, key: `${source}-key`, id: `${source}-id`, label: { runtime: "MEMORY.md", spaces: "Memory Space", documents: "Document", records: "Record" }[source],
        content: "parse splits words", preview: "parse splits words", age: "2d", cites: [{ ...cite, freshness: "changed" }], ...extra,
    };
}

describe("needs review", () => {
    it("one node per memory: preview, Source · age · what changed, a child per citation; a space item offers no Edit", () => {
        const nodes = reviewTree({ workspace: W, count: 2, memories: [
            memory("runtime", { cites: [{ ...cite, freshness: "changed" }, { ...cite, path: "old.py", freshness: "gone" }] }),
            memory("spaces", { spaceId: "default", cites: [{ ...cite, freshness: "gone" }] }),
        ] });
        assert.deepEqual(nodes.map((n) => [n.label, n.description, n.contextValue, n.icon]), [
            ["parse splits words", "MEMORY.md · 2d · code changed or gone", "mnemon.review.memory", "error"],
            ["parse splits words", "Memory Space · 2d · code gone", "mnemon.review.memory.noedit", "error"],
        ]);
        assert.deepEqual(nodes[0].children?.map((c) => [c.label, c.contextValue]), [
            ["src/lib.py:3-4 (changed)", "mnemon.review.cite"], ["old.py:3-4 (gone)", "mnemon.review.cite"]]);
        for (const node of [...nodes, ...nodes.flatMap((n) => n.children ?? [])]) {
            assert.ok((CONTEXT_VALUES as readonly string[]).includes(node.contextValue), node.contextValue);
        }
        assert.match(nodes[0].tooltip ?? "", /`src\/lib.py:3-4 \(changed\)`/);
    });

    it("a memory due for review says so, with its age and when it was last confirmed; a USER.md entry is named so", () => {
        const nodes = reviewTree({ workspace: W, count: 2, memories: [
            memory("runtime", { target: "user", age: "120d", cites: [], reasons: ["review-due"], reviewedAt: "2026-08-01T00:00:00+00:00", reviewDueSince: "2026-10-30T00:00:00+00:00" }),
            memory("records", { scope: "project", age: "95d", reasons: ["changed", "review-due"] }),
        ] });
        assert.deepEqual(nodes.map((n) => [n.description, n.contextValue, n.icon, n.children?.length]), [
            ["USER.md · 120d · review due", "mnemon.review.memory", "history", 0],
            ["Record · 95d · code changed, review due", "mnemon.review.memory", "warning", 1],
        ]);
        assert.match(nodes[1].tooltip ?? "", /Not updated or confirmed for 95d\./);
        assert.match(nodes[0].tooltip ?? "", /Not updated or confirmed for 120d \(last confirmed 2026-08-01\): due for review since 2026-10-30\./);
        assert.match(nodes[0].tooltip ?? "", /Still true\? Confirm it\./);
        assert.deepEqual(editRequest(W, (nodes[0].ref as { memory: CitedMemory }).memory, "new"), { method: "mnemon/runtime/mutate", params: { workspace: W, action: "replace", target: "user", key: "runtime-key", content: "new" } });
        assert.deepEqual(removeRequest(W, (nodes[0].ref as { memory: CitedMemory }).memory), { method: "mnemon/runtime/mutate", params: { workspace: W, action: "remove", target: "user", key: "runtime-key" } });
    });

    it("nothing to review is one message", () => {
        assert.deepEqual(reviewTree({ workspace: W, count: 0, memories: [] }).map((n) => [n.label, n.contextValue]), [["No memory needs review", "mnemon.message"]]);
    });

    it("citation labels say where the lines moved", () => {
        assert.equal(citationLabel({ ...cite, freshness: "moved", movedTo: { startLine: 7, endLine: 8 } }), "src/lib.py:3-4 (moved to 7-8)");
        assert.equal(citationLabel({ ...cite, endLine: 3, symbol: "parse", freshness: "fresh" }), "src/lib.py:3 [parse] (fresh)");
        assert.equal(citationLabel({ ...cite, freshness: "renamed", renamedTo: "src/core.py" }), "src/lib.py:3-4 (renamed to src/core.py)");
        assert.equal(citationLabel({ ...cite, freshness: "changed", renamedTo: "src/core.py" }), "src/lib.py:3-4 (changed, renamed to src/core.py)");
    });

    it("Edit and Remove are each Source's own requests", () => {
        assert.deepEqual(editRequest(W, memory("runtime"), "new"), { method: "mnemon/runtime/mutate", params: { workspace: W, action: "replace", target: "memory", key: "runtime-key", content: "new" } });
        assert.deepEqual(editRequest(W, memory("records", { scope: "project" }), "new"), { method: "mnemon/records/edit", params: { workspace: W, id: "records-id", recordScope: "project", content: "new" } });
        assert.equal(editRequest(W, memory("documents"), "new"), null);
        assert.equal(canEdit(memory("spaces")), false);
        assert.deepEqual(removeRequest(W, memory("runtime")), { method: "mnemon/runtime/mutate", params: { workspace: W, action: "remove", target: "memory", key: "runtime-key" } });
        assert.deepEqual(removeRequest(W, memory("records", { scope: "user" })), { method: "mnemon/records/forget", params: { workspace: W, id: "records-id", recordScope: "user" } });
        assert.deepEqual(removeRequest(W, memory("documents")), { method: "mnemon/documents/archive", params: { workspace: W, id: "documents-id" } });
        assert.deepEqual(removeRequest(W, memory("spaces", { spaceId: "default" })), { method: "mnemon/forget", params: { workspace: W, spaceId: "default", id: "spaces-id" } });
    });

    it("the re-anchor message counts what moved and names what was left", () => {
        const base = { source: "runtime" as const, key: "k", cites: [{ ...cite, freshness: "fresh" as const }], workspace: W };
        assert.equal(reanchoredMessage({ ...base, reanchored: 2, left: [] }), "Mnemon: re-anchored 2 citations to the current code.");
        assert.equal(reanchoredMessage({ ...base, reanchored: 0, left: [{ ...cite, freshness: "gone" }] }),
            "Mnemon: re-anchored 0 citations to the current code. 1 left as it is (src/lib.py:3-4 (gone)): edit or remove the memory.");
        assert.equal(reanchoredMessage({ ...base, cites: [], reanchored: 0, left: [], nextReviewDays: 90 }), "Mnemon: confirmed still true. Next review in 90 days.");
        assert.equal(reanchoredMessage({ ...base, reanchored: 1, left: [], nextReviewDays: 90 }), "Mnemon: re-anchored 1 citation to the current code. Next review in 90 days.");
        assert.equal(reanchoredMessage({ ...base, cites: [], reanchored: 0, left: [], nextReviewDays: 90, keptDamaged: "/r/state/citations/quarantine/x-reviewed.json" }),
            "Mnemon: confirmed still true. Next review in 90 days. The damaged confirmation file was kept at /r/state/citations/quarantine/x-reviewed.json.");
    });
});
