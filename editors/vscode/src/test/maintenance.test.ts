/**
 * Unit tests of the maintenance notice texts (no VS Code, no server).
 */

import assert from "node:assert/strict";
import { describe, it } from "node:test";
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
});
