/**
 * Language-model tools (Copilot agent mode and any chat participant): what each tool sends to the
 * running language server and the text it gives the model back.
 *
 * Pure like requests.ts (no `vscode` import): the extension registers these with `vscode.lm.registerTool`
 * (src/lmtools.ts); the contract test invokes them against the real server. Input schemas live in
 * package.json `contributes.languageModelTools` (VS Code reads them from there); scripts/check-manifest.mjs
 * checks that every contributed tool is implemented here and the reverse, and that every write asks for
 * confirmation. The same tools, for assistants outside the editor, are `mnemon-ls mcp`.
 */

import {
    asMnemonError,
    Importance,
    mutate,
    recall,
    rememberInSpace,
    RequestSender,
    searchDocuments,
    Target,
    wake,
} from "./requests";

/** Largest text a tool returns, in characters (the rest is cut with a note). */
export const MAX_TOOL_CHARS = 24_000;
/** Most recall results a tool returns (the server's host caps at 12 as well). */
export const MAX_RECALL_RESULTS = 12;

export interface WakeInput { branch?: string }
export interface RecallInput { query: string; limit?: number; spaces?: string[] }
export interface RememberInput { content: string; spaceId?: string; importance?: number; tags?: string[]; forBranch?: boolean }
export interface RuntimeMemoryInput {
    action: "add" | "replace" | "remove";
    target?: Target;
    content?: string;
    oldText?: string;
    importance?: Importance;
    branches?: string[];
}
export interface DocumentSearchInput { query: string; includeArchived?: boolean; limit?: number }

/** One tool: whether it writes (writes ask the user first), its confirmation text, and its call. */
export interface ToolSpec<I> {
    writes: boolean;
    /** Shown in the confirmation dialog of a write (Markdown). */
    confirm?: (input: I) => { title: string; message: string };
    /** Shown while the tool runs. */
    progress: (input: I) => string;
    invoke: (sender: RequestSender, workspace: string | undefined, input: I) => Promise<string>;
}

function bounded(text: string): string {
    return text.length <= MAX_TOOL_CHARS ? text : `${text.slice(0, MAX_TOOL_CHARS)}\n[... ${text.length - MAX_TOOL_CHARS} more characters not shown]`;
}

/**
 * The line saying how many results the server did not send the model (found by meaning alone with low
 * confidence; `withheld.lowConfidence`), worded as the MCP tools word it; null when none was withheld.
 */
export function withheldLine(count: number, noun: "result" | "document"): string | null {
    if (!(count > 0)) {
        return null;
    }
    return `withheld: ${count} ${noun}${count === 1 ? "" : "s"} found by meaning alone with low confidence (not sent)`;
}

function clip(text: string, max: number): string {
    return text.length <= max ? text : `${text.slice(0, max - 1)}…`;
}

/** Every tool, by the name contributed in package.json. */
export const TOOLS: { [name: string]: ToolSpec<any> } = {
    mnemon_wake: {
        writes: false,
        progress: () => "Reading the Mnemon wake snapshot",
        invoke: async (sender, workspace, input: WakeInput) => {
            const snapshot = await wake(sender, { workspace, branch: input.branch });
            return bounded(snapshot.text);
        },
    } satisfies ToolSpec<WakeInput>,
    mnemon_recall: {
        writes: false,
        progress: (input: RecallInput) => `Recalling "${clip(input.query, 60)}" from Memory Spaces`,
        invoke: async (sender, workspace, input: RecallInput) => {
            const limit = Math.min(Math.max(1, Math.trunc(input.limit ?? 8)), MAX_RECALL_RESULTS);
            // audience "assistant": the server withholds what it found by meaning alone with low confidence
            const result = await recall(sender, { workspace, query: input.query, limit, spaces: input.spaces, audience: "assistant" });
            const lines = result.results.slice(0, MAX_RECALL_RESULTS).flatMap((item, n) => [
                `${n + 1}. ${clip(item.content, 1200)}${item.branchLabel ? ` [${item.branchLabel}]` : ""}`,
                `   space: ${item.spaceId} (${item.spaceName}) · id: ${item.id} · tier: ${item.tier}`,
            ]);
            const withheld = withheldLine(result.withheld?.lowConfidence ?? 0, "result");
            if (withheld) {
                lines.push(withheld);
            }
            if (result.results.length === 0) {
                lines.push(`No memory matched.${result.hint && !withheld ? ` ${result.hint}` : ""}`);
            }
            return bounded(lines.join("\n"));
        },
    } satisfies ToolSpec<RecallInput>,
    mnemon_remember: {
        writes: true,
        confirm: (input: RememberInput) => ({
            title: "Remember in a Memory Space?",
            message: `Mnemon will remember:\n\n> ${clip(input.content, 500)}${input.forBranch ? "\n\n(only on the current branch)" : ""}`,
        }),
        progress: () => "Remembering in a Memory Space",
        invoke: async (sender, workspace, input: RememberInput) => {
            const receipt = await rememberInSpace(sender, {
                workspace, content: input.content, spaceId: input.spaceId, importance: input.importance,
                tags: input.tags, scopeToBranch: input.forBranch ?? false, source: "agent",
            });
            return `${receipt.status}: ${receipt.message} (space ${receipt.spaceName} ${receipt.spaceId}, id ${receipt.id})`;
        },
    } satisfies ToolSpec<RememberInput>,
    mnemon_runtime_memory: {
        writes: true,
        confirm: (input: RuntimeMemoryInput) => ({
            title: `${input.action === "add" ? "Add to" : input.action === "replace" ? "Change" : "Remove from"} ${input.target === "user" ? "USER.md" : "MEMORY.md"}?`,
            message: [
                input.oldText !== undefined ? `Entry: \`${clip(input.oldText, 200)}\`` : "",
                input.content !== undefined ? `New text:\n\n> ${clip(input.content, 500)}` : "",
                input.branches?.length ? `Branches: ${input.branches.join(", ")}` : "",
            ].filter(Boolean).join("\n\n"),
        }),
        progress: (input: RuntimeMemoryInput) => `Updating ${input.target === "user" ? "USER.md" : "MEMORY.md"}`,
        invoke: async (sender, workspace, input: RuntimeMemoryInput) => {
            const receipt = await mutate(sender, {
                workspace, action: input.action, target: input.target ?? "memory", content: input.content,
                oldText: input.oldText, importance: input.importance, branches: input.branches,
            });
            const file = receipt.target === "user" ? "USER.md" : "MEMORY.md";
            return `${receipt.message} ${file}: ${receipt.entryCount} ${receipt.entryCount === 1 ? "entry" : "entries"}, ` +
                `${receipt.usage.used}/${receipt.usage.limit} UTF-8 bytes; revision ${receipt.revision.slice(0, 12)}`;
        },
    } satisfies ToolSpec<RuntimeMemoryInput>,
    mnemon_document_search: {
        writes: false,
        progress: (input: DocumentSearchInput) => `Searching Documents for "${clip(input.query, 60)}"`,
        invoke: async (sender, workspace, input: DocumentSearchInput) => {
            const found = await searchDocuments(sender, {
                workspace, query: input.query, includeArchived: input.includeArchived ?? false, limit: input.limit ?? 10,
                audience: "assistant",
            });
            const lines = found.results.flatMap((hit) => [
                `- ${hit.title}${hit.status !== "active" ? ` [${hit.status}]` : ""} (id: ${hit.id}, score ${hit.score.toFixed(3)})` +
                    (hit.matched === "semantic" ? " (by meaning alone)" : ""),
                ...(hit.excerpt ? [`  ${clip(hit.excerpt, 400)}`] : []),
            ]);
            const withheld = withheldLine(found.withheld?.lowConfidence ?? 0, "document");
            if (withheld) {
                lines.push(withheld);
            }
            lines.push(`${found.total} result(s)`);
            return bounded(lines.join("\n"));
        },
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
        return await spec.invoke(sender, workspace, (input ?? {}) as never);
    } catch (error) {
        const decoded = asMnemonError(error);
        if (decoded) {
            return `Error: ${decoded.code}: ${decoded.message}`;
        }
        throw error;
    }
}
