/**
 * Language-model tools (Copilot agent mode and any chat participant): what the model is asked to confirm,
 * and one request, `mnemon/tool`, that runs the tool on the server and answers the text the model reads.
 *
 * A tool here is the MCP tool of the same name (mnemon_ls/ops/tools.py): same arguments, same text, built
 * by the server from the operation layer. Pure like requests.ts (no `vscode` import): the extension
 * registers these with `vscode.lm.registerTool` (src/lmtools.ts); the contract test invokes them against the
 * real server. Input schemas and model descriptions in package.json `contributes.languageModelTools` are
 * generated from the server's tools (`python -m mnemon_ls.generate`); scripts/check-manifest.mjs checks
 * that every contributed tool has an entry here and the reverse, and that every write asks for
 * confirmation. The same tools, for assistants outside the editor, are `mnemon-ls mcp`.
 */

import { asMnemonError, Importance, RequestSender, Target } from "./requests";
import { request } from "./rpc";

/** The request that runs an assistant tool on the server: `{workspace?, name, arguments}` -> `{text}`. */
export const TOOL_REQUEST = "mnemon/tool";

export interface WakeInput { branch?: string }
export interface RecallInput { query: string; limit?: number; spaces?: string[]; include_low_confidence?: boolean }
export interface RememberInput {
    content: string; space_id?: string; importance?: number; tags?: string[]; entities?: string[];
    category?: string; scope_to_branch?: boolean;
}
export interface RuntimeMemoryInput {
    action: "add" | "replace" | "remove";
    target?: Target;
    content?: string;
    old_text?: string;
    importance?: Importance;
    branches?: string[];
}
export interface DocumentSearchInput { query: string; include_archived?: boolean; limit?: number }

/** One tool: whether it writes (writes ask the user first), its confirmation text, its progress line. */
export interface ToolSpec<I> {
    writes: boolean;
    /** Shown in the confirmation dialog of a write (Markdown). */
    confirm?: (input: I) => { title: string; message: string };
    /** Shown while the tool runs. */
    progress: (input: I) => string;
}

function clip(text: string, max: number): string {
    return text.length <= max ? text : `${text.slice(0, max - 1)}…`;
}

/** Every tool, by the name contributed in package.json. */
export const TOOLS: { [name: string]: ToolSpec<any> } = {
    mnemon_wake: {
        writes: false,
        progress: () => "Reading the Mnemon wake snapshot",
    } satisfies ToolSpec<WakeInput>,
    mnemon_recall: {
        writes: false,
        progress: (input: RecallInput) => `Recalling "${clip(input.query, 60)}" from Memory Spaces`,
    } satisfies ToolSpec<RecallInput>,
    mnemon_remember: {
        writes: true,
        confirm: (input: RememberInput) => ({
            title: "Remember in a Memory Space?",
            message: `Mnemon will remember:\n\n> ${clip(input.content, 500)}${input.scope_to_branch ? "\n\n(only on the current branch)" : ""}`,
        }),
        progress: () => "Remembering in a Memory Space",
    } satisfies ToolSpec<RememberInput>,
    mnemon_runtime_memory: {
        writes: true,
        confirm: (input: RuntimeMemoryInput) => ({
            title: `${input.action === "add" ? "Add to" : input.action === "replace" ? "Change" : "Remove from"} ${input.target === "user" ? "USER.md" : "MEMORY.md"}?`,
            message: [
                input.old_text !== undefined ? `Entry: \`${clip(input.old_text, 200)}\`` : "",
                input.content !== undefined ? `New text:\n\n> ${clip(input.content, 500)}` : "",
                input.branches?.length ? `Branches: ${input.branches.join(", ")}` : "",
            ].filter(Boolean).join("\n\n"),
        }),
        progress: (input: RuntimeMemoryInput) => `Updating ${input.target === "user" ? "USER.md" : "MEMORY.md"}`,
    } satisfies ToolSpec<RuntimeMemoryInput>,
    mnemon_document_search: {
        writes: false,
        progress: (input: DocumentSearchInput) => `Searching Documents for "${clip(input.query, 60)}"`,
    } satisfies ToolSpec<DocumentSearchInput>,
};

/**
 * Run tool `name`: the model-facing text, or for a failed request the error in the same words as the
 * server (`<data.code>: <message>`), so the model can correct its input. Throws only for an unknown tool.
 */
export async function invokeTool(sender: RequestSender, name: string, workspace: string | undefined, input: unknown): Promise<string> {
    const spec = TOOLS[name];
    if (!spec) {
        throw new Error(`unknown Mnemon tool ${name}`);
    }
    try {
        const answer = await request<{ text: string }>(sender, TOOL_REQUEST, { workspace, name, arguments: input ?? {} });
        return answer.text;
    } catch (error) {
        const decoded = asMnemonError(error);
        if (decoded) {
            return `Error: ${decoded.code}: ${decoded.message}`;
        }
        throw error;
    }
}
