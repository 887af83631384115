/**
 * Registers the language-model tools of src/tools.ts with VS Code (`vscode.lm.registerTool`), served by
 * the running language server (no second process), and the `mnemon-ls mcp` server definition for
 * chat clients that prefer MCP (`vscode.lm.registerMcpServerDefinitionProvider`). Writes ask the user
 * first (`prepareInvocation` confirmation messages).
 */

import * as vscode from "vscode";
import { MnemonServer, resolveInterpreter } from "./server";
import { invokeTool, TOOLS } from "./tools";

/** Id of the MCP server definition provider (package.json `contributes.mcpServerDefinitionProviders`). */
export const MCP_PROVIDER_ID = "mnemon.mcpServers";

/** The folder a tool call is for: the active editor's folder, else the first folder. */
function currentFolder(): string | undefined {
    const active = vscode.window.activeTextEditor?.document.uri;
    const folder = (active && vscode.workspace.getWorkspaceFolder(active)) ?? vscode.workspace.workspaceFolders?.[0];
    return folder?.uri.toString();
}

export function registerLanguageModelTools(server: MnemonServer): vscode.Disposable[] {
    return Object.entries(TOOLS).map(([name, spec]) =>
        vscode.lm.registerTool<Record<string, unknown>>(name, {
            prepareInvocation(options) {
                const input = options.input as never;
                const prepared: vscode.PreparedToolInvocation = { invocationMessage: spec.progress(input) };
                if (spec.writes && spec.confirm) {
                    const { title, message } = spec.confirm(input);
                    prepared.confirmationMessages = { title, message: new vscode.MarkdownString(message) };
                }
                return prepared;
            },
            async invoke(options) {
                const client = await server.ensureClient();
                const text = await invokeTool(client, name, currentFolder(), options.input);
                return new vscode.LanguageModelToolResult([new vscode.LanguageModelTextPart(text)]);
            },
        }),
    );
}

/** `mnemon-ls mcp` for each folder, run by the interpreter the language server uses. */
export function registerMcpServerDefinitions(server: MnemonServer): vscode.Disposable[] {
    const changed = new vscode.EventEmitter<void>();
    const provider = vscode.lm.registerMcpServerDefinitionProvider(MCP_PROVIDER_ID, {
        onDidChangeMcpServerDefinitions: changed.event,
        async provideMcpServerDefinitions() {
            const definitions: vscode.McpStdioServerDefinition[] = [];
            for (const folder of vscode.workspace.workspaceFolders ?? []) {
                if (folder.uri.scheme !== "file") {
                    continue;
                }
                const interpreter = await resolveInterpreter(folder.uri, server.log);
                const [command, ...args] = interpreter.argv;
                definitions.push(new vscode.McpStdioServerDefinition(
                    `Mnemon (${folder.name})`, command, [...args, "-m", "mnemon_ls", "mcp", "--workspace", folder.uri.fsPath],
                ));
            }
            return definitions;
        },
    });
    return [provider, changed, vscode.workspace.onDidChangeWorkspaceFolders(() => changed.fire())];
}
