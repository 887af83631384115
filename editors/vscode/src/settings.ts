/**
 * The `mnemon.*` settings sent to the server (pure: takes a getter, no `vscode` import).
 *
 * The server's settings (mnemon_ls/settings.py) have camelCase JSON names; the nested objects
 * (`runtimeMemory`, `documents`) are contributed as flat dotted settings (`mnemon.runtimeMemory.*`).
 * `scripts/check-manifest.mjs` checks SERVER_SETTING_KEYS against both package.json and the
 * server's JSON schema.
 */

/** Every server setting, as the dotted key under `mnemon.` (the package.json setting id minus `mnemon.`). */
export const SERVER_SETTING_KEYS = [
    "storageScope",
    "dataDir",
    "runtimeUserScope",
    "runtimeMemory.userLimitBytes",
    "runtimeMemory.memoryLimitBytes",
    "runtimeMemory.maintenance",
    "detachedHeadPolicy",
    "worktreeSharing",
    "wakeBudgetChars",
    "documents.maxBodyBytes",
    "documents.activeLimitBytes",
    "branchRecall",
    "recallPolicy",
    "recallMode",
    "writebackMode",
    "secrets",
    "handEdits",
    "lifecycleEnabled",
    "idleReviewMs",
    "records.autoWriter",
    "providerTimeoutMs",
    "semantic.enabled",
    "semantic.model",
    "semantic.endpoint",
    "reviewAfterDays",
] as const;

/** Settings only the extension reads (never sent to the server as such; the server drops unknown keys). */
export const EXTENSION_SETTING_KEYS = ["interpreter", "trace.server"] as const;

export type ServerSettingKey = (typeof SERVER_SETTING_KEYS)[number];

/** `key` -> the effective value (VS Code: `getConfiguration("mnemon", scope).get(key)`). */
export type SettingGetter = (key: string) => unknown;

export interface ServerSettings {
    storageScope?: string;
    dataDir?: string | null;
    runtimeUserScope?: string;
    runtimeMemory?: { userLimitBytes?: number; memoryLimitBytes?: number; maintenance?: string };
    detachedHeadPolicy?: string;
    worktreeSharing?: string;
    wakeBudgetChars?: number;
    documents?: { maxBodyBytes?: number; activeLimitBytes?: number };
    branchRecall?: string;
    recallPolicy?: string;
    recallMode?: string;
    writebackMode?: string;
    secrets?: string;
    handEdits?: string;
    lifecycleEnabled?: boolean;
    idleReviewMs?: number;
    records?: { autoWriter?: boolean };
    providerTimeoutMs?: number;
    semantic?: { enabled?: boolean | string; model?: string; endpoint?: string | null };
    reviewAfterDays?: number;
}

export interface ExpandContext {
    /** Filesystem path of the folder the settings are for, if any. */
    workspaceFolder?: string;
    /** The user's home directory. */
    userHome?: string;
}

/** Expand `${workspaceFolder}`, `${userHome}` and a leading `~/` in a path-like setting. */
export function expandPath(value: string, ctx: ExpandContext): string {
    let out = value.trim();
    if (ctx.workspaceFolder !== undefined) {
        out = out.split("${workspaceFolder}").join(ctx.workspaceFolder);
    }
    if (ctx.userHome !== undefined) {
        out = out.split("${userHome}").join(ctx.userHome);
        if (out === "~" || out.startsWith("~/")) {
            out = ctx.userHome + out.slice(1);
        }
    }
    return out;
}

/**
 * The `mnemon` settings object for the server (initializationOptions.mnemon and the answer to
 * `workspace/configuration` section `mnemon`). Unset / null values are left out so the server's
 * own defaults apply; `dataDir` gets `${workspaceFolder}` / `~` expanded.
 */
export function buildServerSettings(get: SettingGetter, ctx: ExpandContext = {}): ServerSettings {
    const out: Record<string, unknown> = {};
    for (const key of SERVER_SETTING_KEYS) {
        let value = get(key);
        if (value === undefined || value === null) {
            continue;
        }
        if (key === "dataDir") {
            if (typeof value !== "string" || value.trim() === "") {
                continue;
            }
            value = expandPath(value, ctx);
        }
        const dot = key.indexOf(".");
        if (dot > 0) {
            const group = key.slice(0, dot);
            const nested = (out[group] ?? {}) as Record<string, unknown>;
            nested[key.slice(dot + 1)] = value;
            out[group] = nested;
        } else {
            out[key] = value;
        }
    }
    return out as ServerSettings;
}

/** `mnemon.interpreter` as an argv prefix (empty: not configured). Items are expanded like paths. */
export function interpreterSetting(value: unknown, ctx: ExpandContext = {}): string[] {
    if (!Array.isArray(value)) {
        return [];
    }
    const items = value.filter((v): v is string => typeof v === "string" && v.trim() !== "").map((v) => expandPath(v, ctx));
    return items;
}

/** argv of the server process for an interpreter argv prefix. */
export function serverArgs(interpreter: string[]): { command: string; args: string[] } {
    const [command, ...rest] = interpreter;
    return { command, args: [...rest, "-m", "mnemon_ls", "serve"] };
}
