/**
 * Refreshing a view without forgetting its rows (pure: no `vscode` import; src/mnemonTree.ts `MnemonTree` uses it).
 *
 * Why: when a tree data provider fires a change of the whole tree, VS Code's extension host forgets every row
 * at once (`ExtHostTreeView._addAllToClear`) and learns them again only when the new listing has come back
 * from the server. A click on a row's inline action or context menu in that time reaches the command with no
 * row (VS Code converts the row's handle to `undefined`), so the click does nothing. Firing the changed rows
 * themselves instead keeps every row known to the extension host the whole time (`_refreshNode` replaces a
 * row's entry synchronously), so no click is lost; a row whose text did not change is not redrawn at all.
 *
 * {@link updateInPlace} decides which is possible: the rows VS Code holds (the very objects it was given) are
 * updated in place to a fresh listing when both have the same shape, and the rows whose own text changed are
 * returned to be fired.
 */

import type { Node } from "./trees";

/**
 * Same rows (ids, in order, at every level), the same expanded state and the same "has children": a listing
 * that can be applied in place. A row added, removed, moved or gaining its first child changes the shape.
 */
export function sameShape(shown: readonly Node[], fresh: readonly Node[]): boolean {
    return shown.length === fresh.length && shown.every((node, i) => {
        const next = fresh[i];
        if (node.id !== next.id || node.expanded !== next.expanded || (node.children === undefined) !== (next.children === undefined)) {
            return false;
        }
        return node.children === undefined || sameShape(node.children, next.children ?? []);
    });
}

/** A row's own content (everything but its children) as comparable text. */
function ownContent(node: Node): string {
    const { children: _children, ...own } = node;
    return JSON.stringify(own);
}

/**
 * Update `shown` (the rows a view was given: mutated, objects and `children` arrays kept) to `fresh` (a new
 * listing, left as it is). Returns the rows whose own content changed (parents before their children), to be
 * fired as changed; an empty list when nothing changed; `undefined`, changing nothing, when the shapes differ
 * ({@link sameShape}) and the whole tree must be listed again.
 */
export function updateInPlace(shown: Node[], fresh: readonly Node[]): Node[] | undefined {
    if (!sameShape(shown, fresh)) {
        return undefined;
    }
    const changed: Node[] = [];
    const walk = (rows: Node[], next: readonly Node[]): void => {
        rows.forEach((node, i) => {
            const update = next[i];
            if (ownContent(node) !== ownContent(update)) {
                const children = node.children;
                const bag = node as unknown as Record<string, unknown>;
                for (const key of Object.keys(bag)) {
                    delete bag[key];
                }
                Object.assign(node, update, children === undefined ? {} : { children });
                changed.push(node);
            }
            if (node.children !== undefined && update.children !== undefined) {
                walk(node.children, update.children);
            }
        });
    };
    walk(shown, fresh);
    return changed;
}
