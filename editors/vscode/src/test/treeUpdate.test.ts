/**
 * src/treeUpdate.ts: a refresh that lists the same rows updates the rows VS Code holds in place and names the
 * changed ones; a different shape is a full listing again, with nothing changed.
 */

import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { Node } from "../trees";
import { sameShape, updateInPlace } from "../treeUpdate";

function provider(id: string, description: string, details: string[] = []): Node {
    return {
        id,
        label: id,
        description,
        contextValue: "mnemon.provider.available",
        expanded: false,
        children: details.map((d, i) => ({ id: `${id}:${i}`, label: d, contextValue: "mnemon.provider.detail" })),
    };
}

describe("treeUpdate: refreshing rows in place", () => {
    it("updates the very objects held, returns only the changed rows, and keeps the children arrays", () => {
        const shown = [provider("a", "installed, not configured", ["Health"]), provider("b", "enabled · 0 spaces", ["Health", "Can"])];
        const [a, b] = shown;
        const bChildren = b.children;
        const fresh = [provider("a", "installed, not configured", ["Health"]), provider("b", "enabled · 1 space", ["Health", "Can: forget"])];
        fresh[1].contextValue = "mnemon.provider.enabled.create";
        const changed = updateInPlace(shown, fresh);
        assert.ok(changed);
        assert.deepEqual(changed.map((n) => n.id), ["b", "b:1"]);
        assert.equal(shown[0], a);
        assert.equal(shown[1], b);
        assert.equal(b.children, bChildren, "the children array VS Code was given is kept");
        assert.equal(b.description, "enabled · 1 space");
        assert.equal(b.contextValue, "mnemon.provider.enabled.create");
        assert.equal(b.children?.[1].label, "Can: forget");
        assert.deepEqual(shown, fresh, "the held rows now say what the fresh listing says");
    });

    it("drops a field the fresh row no longer has (an icon colour, a command)", () => {
        const shown: Node[] = [{ id: "x", label: "x", contextValue: "mnemon.message", iconColor: "list.warningForeground", command: { command: "c", title: "t" } }];
        const changed = updateInPlace(shown, [{ id: "x", label: "x", contextValue: "mnemon.message" }]);
        assert.deepEqual(changed?.map((n) => n.id), ["x"]);
        assert.deepEqual(Object.keys(shown[0]).sort(), ["contextValue", "id", "label"]);
    });

    it("changes nothing and returns no rows when the listing says the same", () => {
        const shown = [provider("a", "enabled · 0 spaces · healthy", ["Health"])];
        assert.deepEqual(updateInPlace(shown, [provider("a", "enabled · 0 spaces · healthy", ["Health"])]), []);
    });

    it("refuses, changing nothing, when a row is added, removed, moved, expanded or gains children", () => {
        const cases: [string, Node[]][] = [
            ["added", [provider("a", "x"), provider("b", "x"), provider("c", "x")]],
            ["removed", [provider("a", "x")]],
            ["moved", [provider("b", "x"), provider("a", "x")]],
            ["a child added", [provider("a", "x", ["Health"]), provider("b", "x")]],
            ["expanded", [{ ...provider("a", "x"), expanded: true }, provider("b", "x")]],
            ["no children any more", [{ id: "a", label: "a", contextValue: "mnemon.provider.available" }, provider("b", "x")]],
        ];
        for (const [what, fresh] of cases) {
            const shown = [provider("a", "before"), provider("b", "before")];
            const copy = JSON.parse(JSON.stringify(shown));
            assert.equal(sameShape(shown, fresh), false, what);
            assert.equal(updateInPlace(shown, fresh), undefined, what);
            assert.deepEqual(shown, copy, `${what}: nothing changed`);
        }
    });
});
