/**
 * Unit tests of the Mnemon Pack texts and choices (src/requestsPacks.ts; no VS Code, no server).
 */

import assert from "node:assert/strict";
import { describe, it } from "node:test";
import {
    exportedMessage,
    PackExported,
    PROFILE_ITEMS,
    receiptText,
    SCOPE_ITEMS,
    scopeHasUserProfile,
} from "../requests";

function exported(overrides: Partial<PackExported> = {}): PackExported {
    return {
        fileName: "mnemon-pack-20260101T000000Z.zip",
        bytes: 4321,
        scope: "full",
        components: ["runtime", "documents", "memory-spaces"],
        summary: [
            { component: "runtime", items: 2, files: 3, bytes: 538 },
            { component: "documents", items: 1, files: 2, bytes: 900 },
        ],
        exportedAt: "2026-01-01T00:00:00.000Z",
        userProfile: { carried: 0, leftOut: 0 },
        providerSpaces: { leftOut: 0 },
        ...overrides,
    };
}

describe("pack export", () => {
    it("the user profile is left out unless chosen: the first (default) choice leaves it out", () => {
        assert.deepEqual(PROFILE_ITEMS.map((item) => item.includeUserProfile), [false, true]);
        assert.match(PROFILE_ITEMS[0].label, /Leave my user profile out/);
    });

    it("the profile choice is asked only for scopes that hold Runtime memory", () => {
        assert.deepEqual(SCOPE_ITEMS.map((item) => item.scope), ["full", "runtime", "documents", "memory-spaces"]);
        assert.deepEqual(SCOPE_ITEMS.map((item) => scopeHasUserProfile(item.scope)), [true, true, false, false]);
    });

    it("the message names the file, its size and the USER.md entries left out, and why", () => {
        const text = exportedMessage(exported({ userProfile: { carried: 0, leftOut: 2 } }), "/tmp/p.zip");
        assert.equal(text,
            "Mnemon: exported full pack to /tmp/p.zip (4.2 KiB). runtime: 2 item(s), 3 file(s), 538 B; "
            + "documents: 1 item(s), 2 file(s), 900 B. USER.md: 2 entries left out (your user profile stays on "
            + "this machine; export again and include it to carry it).");
        assert.match(exportedMessage(exported({ userProfile: { carried: 0, leftOut: 1 } }), "/p.zip"), /USER\.md: 1 entry left out/);
    });

    it("a pack that carries the profile says so; one with nothing to leave out says nothing about it", () => {
        assert.match(exportedMessage(exported({ userProfile: { carried: 3, leftOut: 0 } }), "/p.zip"),
            /USER\.md: carries 3 entries \(your user profile\)\.$/);
        assert.doesNotMatch(exportedMessage(exported(), "/p.zip"), /USER\.md|provider/);
    });

    it("third-party spaces left out are counted with the reason", () => {
        const text = exportedMessage(exported({ providerSpaces: { leftOut: 1 } }), "/p.zip");
        assert.match(text, /Memory Spaces: 1 provider space left out \(packs never carry third-party connections; their content stays with the provider\)\.$/);
    });

    it("an import receipt is one line", () => {
        assert.equal(receiptText({
            status: "committed", mode: "merge", components: ["runtime", "memory-spaces"],
            runtime: { added: 2, skipped: 1, removed: 0 }, spaces: { added: 1, skipped: 0, renamed: [{ from: "a", to: "a-2" }], removed: 0 },
        }), "Mnemon: pack imported (merge). Runtime entries: 2 added, 1 already here; Memory Spaces: 1 added, 0 already here, 1 under a new id.");
    });

    it("a replace receipt counts what was removed, a merged shared profile and the backup", () => {
        const profile = { carried: 2, added: 1, skipped: 1, removed: 0, handling: "merged" as const, shared: true,
            path: "/h/.mnemon/runtime/USER.md", optInNeeded: true };
        const backup = { path: "/r/state/pack-backups/b.zip", components: ["runtime"], userProfile: false, keep: 5,
            restore: "mnemon-ls pack import /r/state/pack-backups/b.zip --replace --component runtime", written: true };
        assert.equal(receiptText({
            status: "committed", mode: "replace", components: ["runtime"],
            runtime: { added: 1, skipped: 3, removed: 1, userProfile: profile }, backup,
        }), "Mnemon: pack imported (replace). Runtime entries: 1 added, 3 already here, 1 removed. "
            + "USER.md (shared by every workspace) was merged, not replaced: 1 added, none removed (replaceUserProfile replaces it). "
            + "What was replaced is saved in /r/state/pack-backups/b.zip (restore: mnemon-ls pack import /r/state/pack-backups/b.zip --replace --component runtime).");
        assert.match(receiptText({ status: "dry-run", dryRun: true, mode: "replace", components: ["runtime"],
            runtime: { added: 0, skipped: 0, removed: 0 }, backup: { ...backup, written: false } }),
        /^Mnemon: dry run, nothing was written; the import \(replace\) would do this\. .* would first be saved in \/r\/state\/pack-backups\/b\.zip\.$/);
    });
});
