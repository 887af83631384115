/**
 * Unit tests of the maintenance notice texts (no VS Code, no server).
 */

import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { announcedByServer, CompactionReceipt, compactionChanges, entryItem, mergedDefault, numberEntries } from "../compaction";
import { compactPrompt, maintenanceCompletedMessage, USER_FULL_MESSAGE } from "../maintenanceText";

describe("maintenance notices", () => {
    it("a completed maintenance is one short line", () => {
        const text = maintenanceCompletedMessage({
            workspace: "file:///w", kind: "document-cold-archive", receipt: {},
            summary: "Cold-archived 1 document into Memory Space Project\n(2797 bytes freed).",
        });
        assert.equal(text, "Mnemon: Cold-archived 1 document into Memory Space Project (2797 bytes freed).");
        const long = maintenanceCompletedMessage({ workspace: "", kind: "k", receipt: {}, summary: "x".repeat(400) });
        assert.equal(long.length, 200);
        assert.ok(long.endsWith("\u2026"));
        assert.equal(maintenanceCompletedMessage({ workspace: "", kind: "local-compaction", receipt: {}, summary: "" }),
            "Mnemon: local-compaction finished");
    });

    it("the USER.md prompt carries the revision, the budget and every numbered entry", () => {
        const prompt = compactPrompt({
            workspace: "file:///w", target: "user", file: "/r/runtime/USER.md", message: USER_FULL_MESSAGE,
            plan: {
                kind: "local-compaction", method: "mnemon/runtime/compact", file: "USER.md", target: "user",
                revision: "abc", budgetBytes: 60, limit: 120, pending: { action: "add", content: "new" },
                rules: ["every index 1..2 in exactly one entry's sourceIndexes (integers)"],
                entries: [
                    { index: 1, content: "tabs", importance: "normal", bytes: 4 },
                    { index: 2, content: "no force-push", importance: "critical", bytes: 13 },
                ],
            },
        });
        assert.equal(prompt.split("\n")[0], "USER.md is full (120 bytes). Compact it: merge and shorten the numbered entries below into");
        assert.ok(prompt.includes('{"revision": "abc", "target": "user", "pending": {"action":"add","content":"new"},'));
        assert.ok(prompt.includes("at most 60 UTF-8 bytes"));
        assert.ok(prompt.endsWith("Entries:\n1. [importance=normal] tabs\n2. [importance=critical] no force-push"));
        assert.equal(USER_FULL_MESSAGE, "USER.md is full: compact it with your assistant, or open it");
    });

    const receipt: CompactionReceipt = {
        kind: "local-compaction", target: "user", summary: "Compacted USER.md: 2 entries replace 3, 1 dropped (46/120 bytes)",
        entries: [
            { content: "Go tabs; no force-push", importance: "critical", sourceIndexes: [1, 2] },
            { content: "short commit subjects", importance: "low", sourceIndexes: [4] },
            { content: "reads diffs first", importance: "normal", sourceIndexes: [5] },
        ],
        archived: [{ sourceIndex: 1 }, { sourceIndex: 2 }, { sourceIndex: 3 }, { sourceIndex: 4 }],
        dropped: [3], bytesBefore: 150, bytesAfter: 70,
    };

    it("a compaction's message says what was merged into what, what was dropped and the bytes", () => {
        assert.deepEqual(compactionChanges(receipt), ["merged 1, 2 into “Go tabs; no force-push”",
            "rewrote 4 as “short commit subjects”", "dropped 3", "150 → 70 bytes"]);
        assert.equal(maintenanceCompletedMessage({ workspace: "file:///w", kind: "local-compaction", summary: receipt.summary, receipt: { ...receipt } }),
            "Mnemon: USER.md compacted: merged 1, 2 into “Go tabs; no force-push”; rewrote 4 as “short commit subjects”; dropped 3; "
            + "150 → 70 bytes (the old text is kept in runtime/archived/).");
        // another maintenance keeps its summary
        assert.equal(maintenanceCompletedMessage({ workspace: "", kind: "mnemon-archive", summary: "Archived 2 entries.", receipt: { kind: "mnemon-archive" } }),
            "Mnemon: Archived 2 entries.");
    });

    it("the pick numbers the entries of one target as `runtime list` does, and proposes the texts joined", () => {
        const entries = numberEntries([
            { content: "memory fact", target: "memory" },
            { content: "prefers tabs", target: "user", importance: "normal" },
            { content: "never  force-push\nmain", target: "user", importance: "critical" },
            { content: "ünïcode", target: "user" },
        ], "user");
        assert.deepEqual(entries.map((e) => [e.index, e.content, e.importance, e.bytes]),
            [[1, "prefers tabs", "normal", 12], [2, "never  force-push\nmain", "critical", 22], [3, "ünïcode", "normal", 9]]);
        assert.deepEqual(entryItem(entries[1]), { label: "2. never force-push main", description: "22 bytes · critical" });
        assert.equal(mergedDefault(entries.slice(0, 2)), "prefers tabs; never force-push main");
    });

    it("a full USER.md's request error is left to the server's notice; other capacity errors are not", () => {
        const error = (data: Record<string, unknown>) => ({ code: "runtime-capacity", rpcCode: -32010, message: "full", data });
        assert.equal(announcedByServer(error({ target: "user", maintenance: { kind: "local-compaction" } })), true);
        assert.equal(announcedByServer(error({ target: "memory" })), false);
        assert.equal(announcedByServer({ code: "invalid-input", rpcCode: -32602, message: "x", data: { maintenance: {} } }), false);
        assert.equal(announcedByServer(undefined), false);
    });
});
