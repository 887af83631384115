/**
 * The Memory Spaces view (`mnemon.spaces`): per folder, the spaces and whether each is active
 * (src/trees.ts `spacesTree`), and its commands `mnemon.spaces.*`: create (native, or a new namespace of an
 * enabled provider, src/providers.ts), activate, deactivate, recall from a space (through the Recall
 * Results view, src/recallView.ts).
 */

import * as vscode from "vscode";
import { showMutationError, ViewsContext } from "./capacity";
import { MnemonTree } from "./mnemonTree";
import { createSpaceIn, namespaceProviders } from "./providers";
import { activateSpace, deactivateSpace, listSpaces, ProviderView } from "./requests";
import type { RecallView } from "./recallView";
import { Node, NodeRef, perFolder, spacesTree } from "./trees";
import { EmptyContext, folderRows, pickWorkspace, refOf, setContext, ViewPart } from "./viewShared";

export class SpacesView extends ViewPart {
    readonly tree: MnemonTree;

    /**
     * `providersChanged` redraws the Memory Providers view (a new namespace); `recall` is the Recall Results
     * view, whose last folder "Activate" without a row is about and which shows a recall from a space.
     */
    constructor(ctx: ViewsContext, private readonly providersChanged: () => void, private readonly recall: () => RecallView) {
        super(ctx);
        this.tree = new MnemonTree(ctx.server, async (client) => {
            const rows = await folderRows(client);
            const out = [];
            let none = true;
            for (const row of rows) {
                const { spaces } = await listSpaces(client, { workspace: row.uri });
                none &&= spaces.length === 0;
                out.push({ workspace: row.uri, name: row.name, children: spacesTree(row.uri, spaces) });
            }
            // No space anywhere: the view is empty and its welcome text offers "Create Memory Space".
            await setContext(EmptyContext.spaces, none);
            return none ? [] : perFolder(out);
        });
    }

    /** The `mnemon.spaces.*` commands. */
    registerCommands(): vscode.Disposable[] {
        return [
            vscode.commands.registerCommand("mnemon.spaces.create", (node?: unknown) => this.createSpace((node as Node | undefined)?.ref?.workspace)),
            vscode.commands.registerCommand("mnemon.spaces.activate", (node?: unknown) => node ? this.setActive(refOf(node, "space"), true) : this.pickAndActivate()),
            vscode.commands.registerCommand("mnemon.spaces.deactivate", (node?: unknown) => this.setActive(refOf(node, "space"), false)),
            vscode.commands.registerCommand("mnemon.spaces.recall", (node?: unknown) => this.recallIn(refOf(node, "space"))),
        ];
    }

    private async createSpace(workspace: string | undefined): Promise<void> {
        try {
            const client = await this.client();
            // Where: asked only when an enabled provider can create namespaces; else a native space.
            const creators = await namespaceProviders(client, workspace);
            let provider: ProviderView | undefined;
            if (creators.length > 0) {
                const pick = await vscode.window.showQuickPick(
                    [{ label: "Mnemon (native)", description: "this root's own store", provider: undefined }, ...creators.map((p) => ({ label: p.label, description: `a new namespace in ${p.label}`, provider: p }))],
                    { title: "Mnemon: where should the new Memory Space live?", ignoreFocusOut: true },
                );
                if (!pick) {
                    return;
                }
                provider = pick.provider;
            }
            await createSpaceIn(client, workspace, provider);
        } catch (error) {
            await showMutationError(this.ctx, "no space created", error);
        } finally {
            this.after(this.tree);
            this.providersChanged();
        }
    }

    private async setActive(r: Extract<NodeRef, { kind: "space" }> | undefined, active: boolean): Promise<void> {
        if (!r) {
            return;
        }
        try {
            const client = await this.client();
            await (active ? activateSpace : deactivateSpace)(client, { workspace: r.workspace, spaceId: r.space.id });
        } catch (error) {
            await showMutationError(this.ctx, `"${r.space.name}" not ${active ? "activated" : "deactivated"}`, error);
        } finally {
            this.after(this.tree);
        }
    }

    /**
     * "Activate Memory Space" without a row (the Recall Results welcome button, the palette): pick an
     * inactive space of the last recall's folder (else of the only or a picked folder) and activate it.
     */
    private async pickAndActivate(): Promise<void> {
        try {
            const client = await this.ctx.server.ensureClient();
            const workspace = this.recall().workspace ?? (await pickWorkspace(client));
            if (workspace === undefined) {
                return;
            }
            const inactive = (await listSpaces(client, { workspace })).spaces.filter((s) => !s.active);
            if (inactive.length === 0) {
                void vscode.window.showInformationMessage("Mnemon: no inactive Memory Space to activate here; create one.", "Create Memory Space").then((pick) => {
                    if (pick) {
                        void vscode.commands.executeCommand("mnemon.spaces.create", { ref: { kind: "folder", workspace } });
                    }
                });
                return;
            }
            const pick = await vscode.window.showQuickPick(
                inactive.map((space) => ({ label: space.name, description: space.providerLabel, detail: space.description || undefined, space })),
                { title: "Mnemon: activate which Memory Space? (recall reads the active ones)" },
            );
            if (pick) {
                await activateSpace(client, { workspace, spaceId: pick.space.id });
                void vscode.window.showInformationMessage(`Mnemon: ${pick.space.name} is active; recall reads it now.`);
            }
        } catch (error) {
            await showMutationError(this.ctx, "no space activated", error);
        } finally {
            this.after(this.tree);
        }
    }

    private async recallIn(r: Extract<NodeRef, { kind: "space" }> | undefined): Promise<void> {
        await this.recall().recallCommand(r?.workspace, r ? [r.space] : undefined);
    }

}
