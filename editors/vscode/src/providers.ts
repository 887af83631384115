/**
 * The Memory Providers view (`mnemon.providers`, in the Mnemon view container) and its commands:
 * configure, enable, disable, test, discover and "Create Space" for a provider that can create
 * namespaces. Every command is one `mnemon/providers/*` (or `mnemon/spaces/create`) request: the server
 * validates, stores and answers (mnemon_ls/ops/providers.py, the same `ProviderHost` as
 * `mnemon-ls provider ...`); nothing is decided or stored here.
 *
 * Credentials: a secret field is asked with a password input box (never echoed), sent once in the
 * `mnemon/providers/configure` request and forgotten; the server stores it (0600) and lists configured
 * field names only. The extension never writes one to settings, state or the log.
 *
 * Capability gating (seed 000: "the UI and agents do not pretend missing behavior exists"): a node's
 * context value (src/trees.ts `providerContext`) offers only what its state and capabilities allow.
 */

import * as vscode from "vscode";
import { showMutationError, ViewsContext } from "./capacity";
import {
    configureProvider,
    createSpace,
    disableProvider,
    discoverProvider,
    enableProvider,
    listProviders,
    ProviderView,
    RequestSender,
    testProvider,
} from "./requests";
import { HealthReport, NodeRef, providersTree, Node } from "./trees";

type ProviderRef = Extract<NodeRef, { kind: "provider" }>;

/** Health reports of this window, per folder and provider (the server's list opens no engine). */
export class HealthReports {
    private readonly reports = new Map<string, Map<string, HealthReport>>();

    of(workspace: string): ReadonlyMap<string, HealthReport> {
        return this.reports.get(workspace) ?? new Map();
    }

    set(workspace: string, providerId: string, report: HealthReport): void {
        const folder = this.reports.get(workspace) ?? new Map<string, HealthReport>();
        folder.set(providerId, report);
        this.reports.set(workspace, folder);
    }
}

/**
 * The providers a new space can be created in: enabled ones whose capabilities include
 * `createNamespace` (src/views.ts asks "where?" only when there is one).
 */
export async function namespaceProviders(client: RequestSender, workspace: string | undefined): Promise<ProviderView[]> {
    const { providers } = await listProviders(client, { workspace });
    return providers.filter((p) => p.usable && p.capabilities?.createNamespace);
}

/** Build the tree of every folder (src/views.ts passes its per-folder helper). */
export async function buildProvidersTree(
    client: RequestSender,
    rows: { uri: string; name: string }[],
    health: HealthReports,
): Promise<{ workspace: string; name: string; children: Node[] }[]> {
    const out = [];
    for (const row of rows) {
        const { providers } = await listProviders(client, { workspace: row.uri });
        out.push({ workspace: row.uri, name: row.name, children: providersTree(row.uri, providers, health.of(row.uri)) });
    }
    return out;
}

/** The view's commands; `refresh` redraws the providers and spaces views after a change. */
export function registerProviderCommands(ctx: ViewsContext, health: HealthReports, refresh: () => void): vscode.Disposable[] {
    const ref = (node: unknown): ProviderRef | undefined => {
        const r = (node as Node | undefined)?.ref;
        return r?.kind === "provider" ? r : undefined;
    };
    const client = () => ctx.server.ensureClient();
    /** Run `body` for the provider of a tree node; an error is shown (field and rule, never a value). */
    const run = (failure: string, body: (p: ProviderView, workspace: string) => Promise<void>) => async (node?: unknown) => {
        const r = ref(node);
        if (!r) {
            return;
        }
        try {
            await body(r.provider, r.workspace);
        } catch (error) {
            await showMutationError(ctx, `${r.provider.label}: ${failure}`, error);
        } finally {
            refresh();
        }
    };
    const plural = (n: number, one: string, many: string) => `${n} ${n === 1 ? one : many}`;
    return [
        vscode.commands.registerCommand("mnemon.providers.configure", run("not configured", (p, workspace) => configure(ctx, client, workspace, p))),
        vscode.commands.registerCommand("mnemon.providers.enable", run("not enabled", async (p, workspace) => {
            const result = await enableProvider(await client(), { workspace, providerId: p.providerId });
            health.set(workspace, p.providerId, { health: result.health, at: Date.now() });
            const found = result.discovered.length;
            void vscode.window.showInformationMessage(`Mnemon: enabled ${p.label}${found > 0 ? `; ${plural(found, "space", "spaces")} discovered` : ""}.`);
        })),
        vscode.commands.registerCommand("mnemon.providers.disable", run("not disabled", async (p, workspace) => {
            await disableProvider(await client(), { workspace, providerId: p.providerId });
            void vscode.window.showInformationMessage(`Mnemon: disabled ${p.label}; its spaces left this folder's list (their data stays in ${p.label}).`);
        })),
        vscode.commands.registerCommand("mnemon.providers.test", run("test failed", async (p, workspace) => {
            try {
                const result = await testProvider(await client(), { workspace, providerId: p.providerId });
                health.set(workspace, p.providerId, { health: result.health, at: Date.now() });
                const text = `Mnemon: ${p.label} ${result.health.ok ? "is healthy" : "is not healthy"}` +
                    `${result.health.message ? `: ${result.health.message}` : ""} (${plural(result.namespaces.length, "namespace", "namespaces")}).`;
                void (result.health.ok ? vscode.window.showInformationMessage(text) : vscode.window.showWarningMessage(text));
            } catch (error) {
                health.set(workspace, p.providerId, { error: error instanceof Error ? error.message : String(error), at: Date.now() });
                throw error;
            }
        })),
        vscode.commands.registerCommand("mnemon.providers.discover", run("nothing discovered", async (p, workspace) => {
            const result = await discoverProvider(await client(), { workspace, providerId: p.providerId });
            void vscode.window.showInformationMessage(`Mnemon: ${p.label} has ${plural(result.spaces.length, "space", "spaces")}.`);
        })),
        vscode.commands.registerCommand("mnemon.providers.createSpace", run("no space created", async (p, workspace) => {
            await createSpaceIn(await client(), workspace, p);
        })),
    ];
}

/**
 * Ask a name and a description, then `mnemon/spaces/create` in `provider` (a new namespace there) or,
 * without one, a native space. Returns the created space's name, undefined when cancelled.
 */
export async function createSpaceIn(client: RequestSender, workspace: string | undefined, provider?: ProviderView): Promise<string | undefined> {
    const where = provider ? ` in ${provider.label}` : "";
    // The server validates (a name of 1..100 characters, one line); its error names the field and rule.
    const name = await vscode.window.showInputBox({ title: `Mnemon: new Memory Space${where} (1/2)`, prompt: "Name (1 to 100 characters)", ignoreFocusOut: true });
    if (name === undefined) {
        return undefined;
    }
    const description = await vscode.window.showInputBox({
        title: `Mnemon: new Memory Space${where} (2/2)`,
        prompt: "What belongs in it (assistants pick a space by its description)",
        ignoreFocusOut: true,
    });
    if (description === undefined) {
        return undefined;
    }
    const space = await createSpace(client, { workspace, name, description, active: true, provider: provider?.providerId });
    void vscode.window.showInformationMessage(`Mnemon: created the Memory Space "${space.name}"${where} (active).`);
    return space.name;
}

interface FieldPick extends vscode.QuickPickItem {
    field?: string;
    secret?: boolean;
    clear?: boolean;
}

/**
 * Configure: pick a field (the provider's own service fields and secrets; set ones are marked), type
 * its value (a password box for a secret), and it is saved at once by `mnemon/providers/configure`;
 * the picker comes back with the new state until Done or Escape. An empty value for a set secret
 * offers to clear it (`clearSecrets`).
 */
async function configure(ctx: ViewsContext, client: () => Promise<RequestSender>, workspace: string, provider: ProviderView): Promise<void> {
    let view = provider;
    for (;;) {
        const fields = view.fields ?? { service: [], memory: [], secret: [] };
        const secret = new Set(fields.secret);
        const names = [...fields.service.filter((f) => !secret.has(f)), ...fields.secret];
        const items: FieldPick[] = [
            { label: "$(check) Done", description: view.configured ? "keep this configuration" : "save the defaults (configure with no field)" },
            ...names.map((field) => {
                const isSecret = secret.has(field);
                const set = isSecret ? view.configuredSecrets.includes(field) : view.configuredFields.includes(field);
                return { label: field, description: `${isSecret ? "secret" : "service field"}${set ? " · set" : ""}`, field, secret: isSecret };
            }),
        ];
        const pick = await vscode.window.showQuickPick(items, {
            title: `Mnemon: configure ${view.label}`,
            placeHolder: names.length > 0 ? "Pick a field to set (each is saved when you press Enter)" : `${view.label} has no fields to set`,
            ignoreFocusOut: true,
        });
        if (!pick) {
            return;
        }
        if (!pick.field) {
            if (!view.configured) {
                view = { ...view, ...(await configureProvider(await client(), { workspace, providerId: view.providerId, services: {} })) };
                void vscode.window.showInformationMessage(`Mnemon: ${view.label} is configured with its defaults; enable it to use it.`);
            }
            return;
        }
        const value = await vscode.window.showInputBox({
            title: `Mnemon: ${view.label} · ${pick.field}`,
            prompt: pick.secret
                ? "A credential: sent once to the language server, which stores it (0600) and never shows it again. Empty: clear it."
                : "The value (the server checks it; an endpoint must carry no credentials).",
            password: pick.secret === true,
            ignoreFocusOut: true,
        });
        if (value === undefined) {
            continue;
        }
        const params = pick.secret && value === ""
            ? { workspace, providerId: view.providerId, clearSecrets: [pick.field] }
            : { workspace, providerId: view.providerId, services: { [pick.field]: value } };
        try {
            view = { ...view, ...(await configureProvider(await client(), params)) };
            void vscode.window.setStatusBarMessage(`Mnemon: ${view.label}: ${pick.field} ${"clearSecrets" in params ? "cleared" : "saved"}`, 5000);
        } catch (error) {
            // Stay in the picker: the message names the field and the rule, never the value.
            await showMutationError(ctx, `${view.label}: ${pick.field} not saved`, error);
        }
    }
}
