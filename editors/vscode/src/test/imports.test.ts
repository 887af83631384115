/**
 * Unit tests of src/imports.ts (the rows of "Import Memory from Other Assistants…" and its messages). No VS
 * Code, no server: the inputs have the shapes `mnemon/import/scan` and `mnemon/import/apply` answer (the
 * contract test drives the real server with the same helpers).
 */

import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { approvalQuestion, ImportItem, ImportReceipt, ImportScan, importReceiptMessage, importRows, nothingFoundMessage, refusedLines, skipText } from "../imports";

function item(id: string, extra: Partial<ImportItem> = {}): ImportItem {
    return { id, path: "/ws/CLAUDE.md", title: "Project", destination: "memory", reason: "a project fact or convention", bytes: 10,
        text: `text ${id}`, preview: `text ${id}`, redacted: [], skip: null, ...extra };
}

const SCAN: ImportScan = {
    fingerprint: "f".repeat(64), workspace: "file:///ws", spaceId: null, spaceProblem: null, counts: {},
    sources: [
        { source: "claude-code", title: "Claude Code", files: [], refused: [], items: [
            item("a"),
            item("b", { destination: "user", reason: "a statement about the person (a profile or preference)", redacted: ["aws-access-key-id"] }),
            item("c", { skip: { why: "exact-duplicate", of: "MEMORY.md" } }),
        ] },
        { source: "cursor", title: "Cursor", files: [], refused: [{ path: "/ws/.cursor/rules/big.mdc", reason: "is binary (a NUL byte at offset 3)" }], items: [
            item("d", { path: "/ws/.cursor/rules/x.mdc", title: "Style rules", destination: "document", reason: "a headed section holding a code block or a table" }),
            item("e", { path: "/ws/.cursor/rules/x.mdc", title: "Style rules", skip: { why: "already-imported", of: "an earlier import" } }),
        ] },
        { source: "hermes", title: "Hermes", files: [], refused: [], items: [] },
    ],
};
const relative = (p: string): string => p.replace(/^\/ws\//, "");

describe("import from other assistants", () => {
    it("rows: a separator per source with items, then its items; picked unless skipped; where on the description, why on the detail", () => {
        const rows = importRows(SCAN, relative);
        assert.deepEqual(rows.map((r) => [r.separator, r.label, r.description, r.picked, r.id]), [
            [true, "Claude Code", undefined, undefined, undefined],
            [false, "text a", "MEMORY.md", true, "a"],
            [false, "text b", "USER.md", true, "b"],
            [false, "text c", "MEMORY.md · skipped: duplicate", false, "c"],
            [true, "Cursor (1 file refused)", undefined, undefined, undefined],
            [false, "text d", "Document", true, "d"],
            [false, "text e", "MEMORY.md · skipped: already imported", false, "e"],
        ]);
        assert.equal(rows[2].detail, "a statement about the person (a profile or preference) (CLAUDE.md: Project) · secrets redacted: aws-access-key-id");
        assert.equal(rows[3].detail, "duplicate of MEMORY.md; a project fact or convention (CLAUDE.md: Project)");
        assert.equal(rows[6].detail, "a project fact or convention (.cursor/rules/x.mdc: Style rules)");
        assert.equal(rows[5].detail, "a headed section holding a code block or a table (.cursor/rules/x.mdc: Style rules)");
        assert.deepEqual(refusedLines(SCAN, relative), [".cursor/rules/big.mdc: is binary (a NUL byte at offset 3)"]);
    });

    it("skip reasons in words", () => {
        assert.equal(skipText({ why: "near-duplicate", of: "AGENTS.md: Agents" }), "near duplicate of AGENTS.md: Agents");
        assert.equal(skipText({ why: "rejected-in-review", of: "an import proposal a person rejected" }), "rejected in review");
    });

    it("the receipt: what went where, and what was skipped and why", () => {
        const receipt: ImportReceipt = {
            workspace: "file:///ws", spaceId: null,
            applied: [], skipped: [
                { id: "c", source: "claude-code", path: "/ws/CLAUDE.md", title: "Project", why: "exact-duplicate", of: "MEMORY.md" },
                { id: "e", source: "cursor", path: "/ws/x.mdc", title: "Style", why: "exact-duplicate", of: "MEMORY.md" },
            ],
            counts: { written: 3, user: 1, memory: 2, document: 0, space: 0, skipped: 2 },
        };
        assert.equal(importReceiptMessage(receipt), "Mnemon: imported 3 items (2 to MEMORY.md, 1 to USER.md); skipped 2 (duplicate of MEMORY.md).");
        assert.equal(importReceiptMessage({ ...receipt, skipped: [], counts: { written: 1, user: 0, memory: 0, document: 1, space: 0, skipped: 0 } }),
            "Mnemon: imported 1 item (1 to Document).");
    });

    it("the receipt of a partial import names each refused item, where it was going and the rule", () => {
        const receipt: ImportReceipt = {
            workspace: "file:///ws", spaceId: null, status: "partly-imported",
            applied: [], skipped: [],
            refusedItems: [{ id: "p", source: "agents-md", path: "/ws/AGENTS.md", title: "Project > Fixture policy", destination: "document",
                code: "document-capacity", field: "documents.activeLimitBytes", rule: "the active documents would pass their limit 10485760" }],
            counts: { written: 2, user: 0, memory: 2, document: 0, space: 0, skipped: 0, refusedItems: 1 },
        };
        assert.equal(importReceiptMessage(receipt), "Mnemon: imported 2 items (2 to MEMORY.md); refused 1 (Fixture policy -> Document: "
            + "documents.activeLimitBytes: the active documents would pass their limit 10485760): importing again tries it again.");
        assert.equal(importReceiptMessage({ ...receipt, refusedItems: [] }), "Mnemon: imported 2 items (2 to MEMORY.md).");
    });

    it("files imported from outside the repository: one question naming each and what imports it; none without them", () => {
        assert.equal(approvalQuestion(SCAN, relative), undefined);
        const waiting = (path: string, by: string) => ({ path, reason: "is outside the repository", importedBy: [by] });
        const one: ImportScan = { ...SCAN, sources: [{ ...SCAN.sources[0], needsApproval: [waiting("/home/me/team.md", "/ws/CLAUDE.md (@~/team.md)")] }] };
        assert.deepEqual(approvalQuestion(one, relative), {
            message: "Mnemon: 1 imported file outside the repository was not read. Read it too?",
            detail: "/home/me/team.md (imported by CLAUDE.md (@~/team.md))\nClaude Code asks you to approve such imports the first time; "
                + "credential locations (~/.ssh, ~/.aws, ...) are never read.",
        });
        const two: ImportScan = { ...one, sources: [...one.sources, { ...SCAN.sources[1], needsApproval: [waiting("/srv/x.md", "/ws/AGENTS.md (@/srv/x.md)")] }] };
        assert.equal(approvalQuestion(two, relative)?.message, "Mnemon: 2 imported files outside the repository were not read. Read them too?");
        assert.match(approvalQuestion(two, relative)?.detail ?? "", /^\/home\/me\/team\.md .*\n\/srv\/x\.md \(imported by AGENTS\.md \(@\/srv\/x\.md\)\)\n/);
    });

    it("nothing found names what was looked for, and the refused files", () => {
        assert.match(nothingFoundMessage("repo", { ...SCAN, sources: [] }), /^Mnemon: no memory of other assistants found for repo: looked for CLAUDE\.md, AGENTS\.md/);
        assert.match(nothingFoundMessage("repo", SCAN), /for repo \(1 file refused: see the log\)/);
    });
});
