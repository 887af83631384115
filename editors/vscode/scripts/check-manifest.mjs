#!/usr/bin/env node
/**
 * Manifest lint for the mnemon VS Code extension (lsp-anchors 4.5 item 4). Checks that:
 *
 * - every contributed command is registered in src/ (registerCommand("<id>")) and vice versa;
 * - every menu entry names a contributed command, with the `when` its command needs (the remember
 *   commands a selection, "Create Document from File" a `file:` resource that is not a folder);
 * - no contributed or registered command id is a server command id (`mnemon.server.*`, and the
 *   ids the server really registers); a server id appears in src/ only as generated from the server
 *   (src/protocol.generated.ts `ServerCommandId`, exactly the ids the server advertises; outside
 *   comments nowhere else, src/requests.ts's `ServerCommand` table takes them from there), and is
 *   sent as a `workspace/executeCommand` request, never run through `vscode.commands.executeCommand`;
 * - src/requests.ts speaks the server's protocol: every `Method` is a request the server handles,
 *   every `mnemon/documents/*` request has a helper, and `ErrorCode` equals the server's table;
 * - every `mnemon.*` setting except the extension-only ones exists in mnemon_ls/settings.py, with
 *   the same default, enum and bounds (from `Settings.model_json_schema(by_alias=True)`), and
 *   every server setting is contributed; src/settings.ts SERVER_SETTING_KEYS lists exactly them;
 * - every `getConfiguration("mnemon").get("<key>")` / `affectsConfiguration("mnemon.<key>")` in
 *   src/ names a contributed setting;
 * - the pins (engines.vscode, @types/vscode, vscode-languageclient) agree.
 *
 * Python: $MNEMON_PYTHON, else python3 (must import mnemon_ls; the repository root is appended to
 * PYTHONPATH). Exit code 0 when every check passes, 1 otherwise.
 */

import { execFileSync } from "node:child_process";
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import { fileURLToPath } from "node:url";

const here = path.dirname(fileURLToPath(import.meta.url));
const extensionDir = path.resolve(here, "..");
const repoRoot = path.resolve(extensionDir, "..", "..");
const manifest = JSON.parse(readFileSync(path.join(extensionDir, "package.json"), "utf8"));

const EXTENSION_ONLY = new Set(["mnemon.interpreter", "mnemon.trace.server"]);
const SERVER_PREFIX = "mnemon.server.";

const failures = [];
let passed = 0;
function check(name, fn) {
    try {
        const problems = fn() ?? [];
        if (problems.length > 0) {
            failures.push(name);
            console.log(`not ok - ${name}`);
            for (const problem of problems) {
                console.log(`    ${problem}`);
            }
        } else {
            passed += 1;
            console.log(`ok - ${name}`);
        }
    } catch (error) {
        failures.push(name);
        console.log(`not ok - ${name}\n    ${error instanceof Error ? error.message : String(error)}`);
    }
}

function sourceFiles(dir) {
    const out = [];
    for (const name of readdirSync(dir)) {
        const full = path.join(dir, name);
        if (statSync(full).isDirectory()) {
            if (name !== "test") {
                out.push(...sourceFiles(full));
            }
        } else if (name.endsWith(".ts")) {
            out.push(full);
        }
    }
    return out;
}

const sources = sourceFiles(path.join(extensionDir, "src")).map((file) => ({
    file: path.relative(extensionDir, file),
    text: readFileSync(file, "utf8"),
}));

function matchesIn(regex) {
    const found = [];
    for (const { file, text } of sources) {
        for (const m of text.matchAll(regex)) {
            found.push({ file, value: m[1] });
        }
    }
    return found;
}

function python(code) {
    const executable = process.env.MNEMON_PYTHON || "python3";
    const pythonPath = [process.env.PYTHONPATH, repoRoot].filter(Boolean).join(path.delimiter);
    return execFileSync(executable, ["-c", code], {
        cwd: repoRoot,
        env: { ...process.env, PYTHONPATH: pythonPath },
        encoding: "utf8",
        stdio: ["ignore", "pipe", "pipe"],
    });
}

const equal = (a, b) => JSON.stringify(a) === JSON.stringify(b);
const sortedEntries = (o) => Object.entries(o ?? {}).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));

const contributes = manifest.contributes ?? {};
const contributed = (contributes.commands ?? []).map((c) => c.command);
const contributedSet = new Set(contributed);
const registered = matchesIn(/register(?:TextEditor)?Command\(\s*["'`]([^"'`]+)["'`]/g);
const registeredSet = new Set(registered.map((r) => r.value));
const properties = contributes.configuration?.properties ?? {};

// ----------------------------------------------------------------------------------------- commands

check("every contributed command is registered in src/", () =>
    contributed.filter((id) => !registeredSet.has(id)).map((id) => `${id} is contributed but never registered`),
);

check("every registered command is contributed", () =>
    [...registeredSet].filter((id) => !contributedSet.has(id)).map((id) => `${id} is registered in src/ but not in contributes.commands`),
);

check("commands are unique and have a title and the Mnemon category", () => {
    const problems = [];
    const seen = new Set();
    for (const c of contributes.commands ?? []) {
        if (seen.has(c.command)) problems.push(`${c.command} is contributed twice`);
        seen.add(c.command);
        if (!c.title) problems.push(`${c.command} has no title`);
        if (c.category !== "Mnemon") problems.push(`${c.command}: category is ${JSON.stringify(c.category)}, expected "Mnemon"`);
        if (!c.command.startsWith("mnemon.")) problems.push(`${c.command} is outside the mnemon.* namespace`);
    }
    return problems;
});

check("the required commands are contributed", () =>
    [
        "mnemon.rememberSelection",
        "mnemon.rememberSelectionForBranch",
        "mnemon.showWakeSnapshot",
        "mnemon.showStatus",
        "mnemon.restartServer",
        "mnemon.createDocumentFromFile",
        "mnemon.searchDocuments",
    ]
        .filter((id) => !contributedSet.has(id))
        .map((id) => `${id} is missing`),
);

check("every menu entry names a contributed command", () => {
    const problems = [];
    for (const [menu, entries] of Object.entries(contributes.menus ?? {})) {
        for (const entry of entries) {
            if (!contributedSet.has(entry.command)) problems.push(`${menu}: ${entry.command} is not a contributed command`);
        }
    }
    return problems;
});

/** The `when` (a pattern) each command needs in every menu it appears in. */
const MENU_WHEN = {
    "mnemon.rememberSelection": /\beditorHasSelection\b/,
    "mnemon.rememberSelectionForBranch": /\beditorHasSelection\b/,
    // The server reads the file from disk: only file: resources (never untitled:, git:, ...).
    "mnemon.createDocumentFromFile": /\bresourceScheme == file\b/,
};

check("menu entries have the when their command needs (remember: a selection; create document: a file)", () => {
    const problems = [];
    for (const [menu, entries] of Object.entries(contributes.menus ?? {})) {
        for (const entry of entries) {
            const needed = MENU_WHEN[entry.command];
            if (needed && !needed.test(entry.when ?? "")) problems.push(`${menu}: ${entry.command}: when is ${JSON.stringify(entry.when)}, needs ${needed}`);
        }
    }
    const editor = contributes.menus?.["editor/context"] ?? [];
    for (const id of ["mnemon.rememberSelection", "mnemon.rememberSelectionForBranch", "mnemon.createDocumentFromFile"]) {
        if (!editor.some((e) => e.command === id)) problems.push(`editor/context has no ${id}`);
    }
    if (!(contributes.menus?.["editor/title"] ?? []).some((e) => e.command === "mnemon.createDocumentFromFile")) {
        problems.push("editor/title has no mnemon.createDocumentFromFile");
    }
    const explorer = (contributes.menus?.["explorer/context"] ?? []).filter((e) => e.command === "mnemon.createDocumentFromFile");
    if (explorer.length !== 1 || explorer[0].when !== "resourceScheme == file && !explorerResourceIsFolder") {
        problems.push(`explorer/context needs mnemon.createDocumentFromFile with when "resourceScheme == file && !explorerResourceIsFolder" (got ${JSON.stringify(explorer)})`);
    }
    return problems;
});

let serverCommands = [];
check("no contributed or registered command is a server command (lsp-anchors 4.4)", () => {
    serverCommands = JSON.parse(
        python(
            "import json\n" +
                "from mnemon_ls.lsp.server import server\n" +
                "from mnemon_ls.ops.command_ids import COMMANDS\n" +
                "ids = set(server.protocol.fm.commands) | set(COMMANDS)\n" +
                "print(json.dumps(sorted(ids)))",
        ),
    );
    const problems = [];
    if (serverCommands.length === 0) problems.push("could not read any server command id");
    for (const id of new Set([...contributed, ...registeredSet])) {
        if (id.startsWith(SERVER_PREFIX)) problems.push(`${id} is in the server's ${SERVER_PREFIX}* namespace`);
        if (serverCommands.includes(id)) problems.push(`${id} is a server executeCommandProvider id`);
    }
    for (const id of serverCommands) {
        if (!id.startsWith(SERVER_PREFIX)) problems.push(`server command ${id} is outside ${SERVER_PREFIX}* (would collide risk-free only there)`);
    }
    return problems;
});

const REQUESTS_TS = path.join("src", "requests.ts");
const GENERATED_TS = path.join("src", "protocol.generated.ts");

/** TypeScript source without its comments (a `//` after `:` is a URL's, kept). */
const withoutComments = (text) => text.replace(/\/\*[\s\S]*?\*\//g, "").replace(/(^|[^:])\/\/.*$/gm, "$1");

check("server command ids come only from src/protocol.generated.ts (ServerCommandId), are real, and are sent as workspace/executeCommand requests", () => {
    const problems = [];
    for (const { file, text } of sources) {
        for (const m of withoutComments(text).matchAll(/["'`](mnemon\.server\.[A-Za-z]+)["'`]/g)) {
            if (file !== GENERATED_TS) problems.push(`${file}: ${m[1]} (a server command id is ServerCommandId.<name> of ${GENERATED_TS}, never a literal)`);
            else if (!serverCommands.includes(m[1])) problems.push(`${file}: ${m[1]} is not a command the server registers`);
        }
    }
    for (const m of matchesIn(/commands\.executeCommand\(\s*((?:ServerCommand\b|["'`]mnemon\.server\.)[^,)]*)/g)) {
        problems.push(`${m.file}: vscode.commands.executeCommand(${m.value}): send a workspace/executeCommand request instead`);
    }
    const requests = sources.find((s) => s.file === REQUESTS_TS)?.text ?? "";
    if (!/executeCommand:\s*"workspace\/executeCommand"/.test(requests)) problems.push(`${REQUESTS_TS}: Method.executeCommand is not "workspace/executeCommand"`);
    return problems;
});

check("src/requests.ts speaks the server's protocol (Method, document helpers, ErrorCode, ServerCommandId)", () => {
    const compiled = path.join(extensionDir, "out", "requests.js");
    if (!existsSync(compiled)) {
        return ["out/requests.js is missing: run `npm run compile` first"];
    }
    const requests = createRequire(import.meta.url)(compiled);
    const server = JSON.parse(
        python(
            "import json\n" +
                "from mnemon_ls.lsp import protocol as P\n" +
                "from mnemon_ls.lsp.operations import TOOL\n" +
                "from mnemon_ls.ops.command_ids import COMMANDS\n" +
                "from mnemon_ls.ops.registry import by_lsp_method\n" +
                "print(json.dumps({'commands': list(COMMANDS), 'requests': list(by_lsp_method()) + [TOOL], 'documents': [m for m in by_lsp_method() if m.startswith('mnemon/documents/')], 'errors': P.ERROR_CODES, 'version': P.PROTOCOL_VERSION}))",
        ),
    );
    const problems = [];
    const methods = Object.values(requests.Method);
    for (const method of methods) {
        if (method !== "workspace/executeCommand" && !server.requests.includes(method)) problems.push(`Method ${method} is not a request the server handles`);
    }
    for (const method of server.documents) {
        if (!methods.includes(method)) problems.push(`no Method for ${method}`);
    }
    const helpers = ["createDocument", "updateDocument", "getDocument", "listDocuments", "searchDocuments", "archiveDocument", "restoreDocument", "createDocumentFromFile"];
    for (const name of helpers) {
        if (typeof requests[name] !== "function") problems.push(`${REQUESTS_TS} exports no ${name}()`);
    }
    if (!equal(sortedEntries(requests.ErrorCode), sortedEntries(server.errors))) problems.push(`ErrorCode ${JSON.stringify(requests.ErrorCode)} != server ${JSON.stringify(server.errors)}`);
    const { ServerCommandId } = createRequire(import.meta.url)(path.join(extensionDir, "out", "protocol.generated.js"));
    if (!equal(Object.values(ServerCommandId ?? {}), server.commands)) problems.push(`ServerCommandId ${JSON.stringify(ServerCommandId)} != the server's advertised commands ${JSON.stringify(server.commands)}`);
    for (const [name, id] of Object.entries(requests.ServerCommand)) {
        if (!server.commands.includes(id)) problems.push(`ServerCommand.${name} ${id} is not a command the server advertises`);
    }
    if (requests.PROTOCOL_VERSION !== server.version) problems.push(`PROTOCOL_VERSION ${requests.PROTOCOL_VERSION}, server ${server.version}`);
    return problems;
});

// ----------------------------------------------------------------------------------------- settings

/** Flatten the pydantic JSON schema into {"mnemon.<dotted>": schema}. */
function flattenSchema(schema) {
    const out = {};
    const resolve = (node) => {
        if (node.$ref) {
            const name = node.$ref.split("/").pop();
            return { ...schema.$defs[name], ...Object.fromEntries(Object.entries(node).filter(([k]) => k !== "$ref")) };
        }
        return node;
    };
    const walk = (node, prefix) => {
        for (const [key, raw] of Object.entries(node.properties ?? {})) {
            const prop = resolve(raw);
            if (prop.type === "object" && prop.properties) {
                walk(prop, `${prefix}${key}.`);
            } else {
                out[`${prefix}${key}`] = prop;
            }
        }
    };
    walk(schema, "mnemon.");
    return out;
}

function expectedType(prop) {
    if (prop.anyOf) {
        return prop.anyOf.map((t) => t.type).sort();
    }
    return prop.type;
}


let serverSettings = {};
check("server settings schema is readable (Settings.model_json_schema(by_alias=True))", () => {
    const schema = JSON.parse(
        python("import json\nfrom mnemon_ls.settings import Settings\nprint(json.dumps(Settings.model_json_schema(by_alias=True)))"),
    );
    serverSettings = flattenSchema(schema);
    return Object.keys(serverSettings).length === 0 ? ["no settings found"] : [];
});

check("every mnemon.* setting (except extension-only) exists in mnemon_ls/settings.py", () =>
    Object.keys(properties)
        .filter((id) => !EXTENSION_ONLY.has(id))
        .filter((id) => !(id in serverSettings))
        .map((id) => `${id} is contributed but is not a server setting`),
);

check("every server setting is contributed", () =>
    Object.keys(serverSettings)
        .filter((id) => !(id in properties))
        .map((id) => `${id} is a server setting but is not contributed`),
);

check("defaults, enums, bounds and types match the server", () => {
    const problems = [];
    for (const [id, server] of Object.entries(serverSettings)) {
        const mine = properties[id];
        if (!mine) continue;
        if (!equal(mine.default, server.default ?? null)) problems.push(`${id}: default ${JSON.stringify(mine.default)}, server ${JSON.stringify(server.default)}`);
        if (!equal(mine.enum, server.enum)) problems.push(`${id}: enum ${JSON.stringify(mine.enum)}, server ${JSON.stringify(server.enum)}`);
        for (const bound of ["minimum", "maximum"]) {
            if (mine[bound] !== server[bound]) problems.push(`${id}: ${bound} ${mine[bound]}, server ${server[bound]}`);
        }
        const type = Array.isArray(mine.type) ? [...mine.type].sort() : mine.type;
        if (!equal(type, expectedType(server))) problems.push(`${id}: type ${JSON.stringify(mine.type)}, server ${JSON.stringify(expectedType(server))}`);
    }
    return problems;
});

check("server settings are resource-scoped and documented", () => {
    const problems = [];
    for (const [id, prop] of Object.entries(properties)) {
        if (!prop.description && !prop.markdownDescription) problems.push(`${id} has no description`);
        if (prop.enum && (!prop.enumDescriptions || prop.enumDescriptions.length !== prop.enum.length) && id !== "mnemon.trace.server") {
            problems.push(`${id}: enumDescriptions do not match enum`);
        }
        if (!EXTENSION_ONLY.has(id) && prop.scope !== "resource") problems.push(`${id}: scope ${prop.scope}, expected resource (the server pulls settings per folder)`);
    }
    return problems;
});

check("extension-only settings are contributed with the expected shape", () => {
    const problems = [];
    const interpreter = properties["mnemon.interpreter"];
    if (!interpreter || interpreter.type !== "array" || interpreter.items?.type !== "string" || !equal(interpreter.default, [])) {
        problems.push("mnemon.interpreter must be an array of strings defaulting to []");
    }
    const trace = properties["mnemon.trace.server"];
    if (!trace || !equal(trace.enum, ["off", "messages", "verbose"]) || trace.default !== "off") {
        problems.push("mnemon.trace.server must be off|messages|verbose defaulting to off");
    }
    const clientId = matchesIn(/CLIENT_ID\s*=\s*"([^"]+)"/g)[0]?.value;
    if (clientId !== "mnemon") problems.push(`the LanguageClient id is ${clientId}; <id>.trace.server only works with id "mnemon"`);
    return problems;
});

check("src/settings.ts SERVER_SETTING_KEYS lists exactly the server settings", () => {
    const compiled = path.join(extensionDir, "out", "settings.js");
    if (!existsSync(compiled)) {
        return ["out/settings.js is missing: run `npm run compile` first"];
    }
    const { SERVER_SETTING_KEYS, EXTENSION_SETTING_KEYS } = createRequire(import.meta.url)(compiled);
    const problems = [];
    const keys = SERVER_SETTING_KEYS.map((k) => `mnemon.${k}`).sort();
    if (!equal(keys, Object.keys(serverSettings).sort())) problems.push(`SERVER_SETTING_KEYS ${JSON.stringify(keys)} != server ${JSON.stringify(Object.keys(serverSettings).sort())}`);
    const extra = EXTENSION_SETTING_KEYS.map((k) => `mnemon.${k}`).sort();
    if (!equal(extra, [...EXTENSION_ONLY].sort())) problems.push(`EXTENSION_SETTING_KEYS ${JSON.stringify(extra)}`);
    return problems;
});

check("every setting read in src/ is contributed", () => {
    const reads = [
        ...matchesIn(/getConfiguration\(\s*"mnemon"[^)]*\)\s*\.get(?:<[^>]*>)?\(\s*"([^"]+)"/g).map((m) => ({ ...m, value: `mnemon.${m.value}` })),
        ...matchesIn(/affectsConfiguration\(\s*"(mnemon\.[^"]+)"/g),
    ];
    const problems = reads.length === 0 ? ["found no setting reads (the pattern is stale?)"] : [];
    for (const { file, value } of reads) {
        if (!(value in properties)) problems.push(`${file}: reads ${value}, which is not contributed`);
    }
    return problems;
});

// ------------------------------------------------------------------------ language-model tools

check("language-model tools: contributed = implemented in src/tools.ts, with schemas and descriptions", () => {
    const problems = [];
    const contributed = manifest.contributes?.languageModelTools ?? [];
    const toolsSource = readFileSync(path.join(extensionDir, "src", "tools.ts"), "utf8");
    const table = toolsSource.slice(toolsSource.indexOf("export const TOOLS"));
    const implemented = new Map([...table.matchAll(/^    (mnemon_[a-z_]+): \{\n        writes: (true|false),/gm)]
        .map((m) => [m[1], m[2] === "true"]));
    const names = new Set(contributed.map((t) => t.name));
    for (const name of implemented.keys()) if (!names.has(name)) problems.push(`${name} is implemented but not contributed`);
    for (const tool of contributed) {
        if (!implemented.has(tool.name)) problems.push(`${tool.name} is contributed but not implemented in src/tools.ts`);
        if ((tool.modelDescription ?? "").length < 120) problems.push(`${tool.name}: modelDescription must say when to use it (>= 120 characters)`);
        if (tool.inputSchema?.type !== "object" || tool.inputSchema?.additionalProperties !== false) {
            problems.push(`${tool.name}: inputSchema must be an object schema with additionalProperties false`);
        }
        if (!tool.toolReferenceName || !tool.displayName || !tool.userDescription) problems.push(`${tool.name}: needs displayName, userDescription and toolReferenceName`);
        if (implemented.get(tool.name) && !new RegExp(`${tool.name}: \\{\\n        writes: true,\\n        confirm:`).test(table)) {
            problems.push(`${tool.name} writes but asks for no confirmation`);
        }
    }
    const mcp = manifest.contributes?.mcpServerDefinitionProviders ?? [];
    const lmSource = readFileSync(path.join(extensionDir, "src", "lmtools.ts"), "utf8");
    const providerId = /MCP_PROVIDER_ID = "([^"]+)"/.exec(lmSource)?.[1];
    if (mcp.length !== 1 || mcp[0].id !== providerId) problems.push(`contributes.mcpServerDefinitionProviders must declare ${providerId}`);
    return problems;
});

// ----------------------------------------------------------------------------------------- the Mnemon view

/** The ids other tools (the code-server end-to-end tests) target: keep them stable. */
const VIEW_IDS = ["mnemon.runtime", "mnemon.documents", "mnemon.spaces", "mnemon.providers", "mnemon.proposals"];
const views = contributes.views?.mnemon ?? [];
const viewIds = new Set(views.map((v) => v.id));
const treesSource = readFileSync(path.join(extensionDir, "src", "trees.ts"), "utf8");
/** src/trees.ts CONTEXT_VALUES (the unit tests check that every node's contextValue is one of them). */
const contextValues = [...(/CONTEXT_VALUES = \[([^\]]*)\]/.exec(treesSource)?.[1] ?? "").matchAll(/"([^"]+)"/g)].map((m) => m[1]);

function fileExists(relative) {
    return existsSync(path.join(extensionDir, relative));
}

/** Width and height of a PNG file (its IHDR chunk), or undefined when it is not a PNG. */
function pngSize(relative) {
    const bytes = readFileSync(path.join(extensionDir, relative));
    if (bytes.length < 24 || bytes.toString("latin1", 1, 4) !== "PNG" || bytes.toString("latin1", 12, 16) !== "IHDR") return undefined;
    return [bytes.readUInt32BE(16), bytes.readUInt32BE(20)];
}

check("the activity-bar container `mnemon` holds the Mnemon views, each registered in src/", () => {
    const problems = [];
    const container = (contributes.viewsContainers?.activitybar ?? []).find((c) => c.id === "mnemon");
    if (!container) problems.push("no activitybar view container with id mnemon");
    else {
        if (container.title !== "Mnemon") problems.push(`container title is ${JSON.stringify(container.title)}`);
        if (!container.icon?.endsWith(".svg") || !fileExists(container.icon)) problems.push(`container icon ${container.icon} is not an SVG file of the extension`);
    }
    for (const id of VIEW_IDS) if (!viewIds.has(id)) problems.push(`view ${id} is missing from the mnemon container`);
    const created = new Set(matchesIn(/(?:createTreeView|registerTreeDataProvider)\(\s*(?:ViewId\.\w+|["'`]([^"'`]+)["'`])/g).map((m) => m.value));
    const viewIdTable = sources.find((f) => f.file.endsWith("views.ts"))?.text ?? "";
    if (contextValues.length < 10) problems.push(`could not read src/trees.ts CONTEXT_VALUES (${contextValues.length} values)`);
    for (const view of views) {
        if (!view.id.startsWith("mnemon.")) problems.push(`${view.id} is outside the mnemon.* namespace`);
        if (!viewIdTable.includes(`"${view.id}"`) && !created.has(view.id)) problems.push(`${view.id} is contributed but src/views.ts never creates it`);
    }
    return problems;
});

check("view menus name contributed views and the context values src/trees.ts produces", () => {
    const problems = [];
    for (const menu of ["view/title", "view/item/context"]) {
        for (const entry of contributes.menus?.[menu] ?? []) {
            const named = [...(entry.when ?? "").matchAll(/\bview == ([\w.]+)/g)].map((m) => m[1]);
            if (named.length === 0) problems.push(`${menu}: ${entry.command} has no 'view == <id>' in its when`);
            for (const id of named) if (!viewIds.has(id)) problems.push(`${menu}: ${entry.command}: view ${id} is not contributed`);
            for (const [, value] of (entry.when ?? "").matchAll(/\bviewItem == ([\w.]+)/g)) {
                if (!contextValues.includes(value)) problems.push(`${menu}: ${entry.command}: context value ${value} is not in src/trees.ts CONTEXT_VALUES`);
            }
            for (const [, pattern] of (entry.when ?? "").matchAll(/\bviewItem =~ \/\^([^/]+)\//g)) {
                // The when clause's own regex (alternations included), anchored as VS Code anchors it.
                const re = new RegExp(`^${pattern}`);
                if (!contextValues.some((v) => re.test(v))) problems.push(`${menu}: ${entry.command}: no context value of src/trees.ts CONTEXT_VALUES matches /^${pattern}/`);
            }
            if (menu === "view/item/context" && entry.group?.startsWith("inline")) {
                const command = (contributes.commands ?? []).find((c) => c.command === entry.command);
                if (!command?.icon) problems.push(`${entry.command} is an inline action without an icon`);
            }
        }
    }
    for (const welcome of contributes.viewsWelcome ?? []) {
        if (!viewIds.has(welcome.view)) problems.push(`viewsWelcome names ${welcome.view}, not a contributed view`);
    }
    for (const id of VIEW_IDS) {
        if (!(contributes.viewsWelcome ?? []).some((w) => w.view === id && /!mnemon\.serverRunning/.test(w.when ?? "") && /command:mnemon\.restartServer/.test(w.contents))) {
            problems.push(`${id} has no welcome text for a stopped server with a Restart Server link`);
        }
    }
    return problems;
});

check("the runtime view offers edit, remove, importance, branches and the three capacity actions", () => {
    const problems = [];
    const items = contributes.menus?.["view/item/context"] ?? [];
    const has = (command, pattern) => items.some((e) => e.command === command && pattern.test(e.when ?? ""));
    for (const id of ["mnemon.runtime.edit", "mnemon.runtime.remove", "mnemon.runtime.setImportance"]) {
        if (!has(id, /mnemon\\\.entry/)) problems.push(`${id} is not on entry items`);
    }
    if (!has("mnemon.runtime.setBranches", /mnemon\\\.entry\\\.memory/)) problems.push("mnemon.runtime.setBranches must be on MEMORY.md entries only");
    for (const id of ["mnemon.runtime.openFile", "mnemon.runtime.removeEntries", "mnemon.runtime.raiseLimit"]) {
        if (!has(id, /mnemon\.capacity/)) problems.push(`${id} is not on the capacity item`);
    }
    const capacity = sources.find((f) => f.file.endsWith("capacity.ts"))?.text ?? "";
    for (const label of ['"Open MEMORY.md"', '"Remove entries..."', '"Raise limit"']) {
        if (!capacity.includes(label)) problems.push(`the capacity error (src/capacity.ts) has no ${label} action`);
    }
    return problems;
});

check("the providers view offers each provider command only where its state and capabilities allow", () => {
    const problems = [];
    const items = contributes.menus?.["view/item/context"] ?? [];
    // The context value -> the commands it must offer (and no others); src/trees.ts providerContext.
    const expected = {
        "mnemon.provider.missing": [],
        "mnemon.provider.broken": [],
        "mnemon.provider.available": ["configure", "enable"],
        "mnemon.provider.disabled": ["configure", "enable", "test"],
        "mnemon.provider.enabled": ["configure", "disable", "test"],
        "mnemon.provider.enabled.discover": ["configure", "disable", "test", "discover"],
        "mnemon.provider.enabled.create": ["configure", "disable", "test", "createSpace"],
        "mnemon.provider.enabled.discover.create": ["configure", "disable", "test", "discover", "createSpace"],
        "mnemon.provider.detail": [],
    };
    for (const [value, commands] of Object.entries(expected)) {
        if (!contextValues.includes(value)) problems.push(`${value} is not in src/trees.ts CONTEXT_VALUES`);
        const offered = new Set(items.filter((e) => /view == mnemon\.providers/.test(e.when ?? "")).filter((e) => {
            const m = /viewItem =~ \/\^([^/]+)\//.exec(e.when ?? "");
            return m ? new RegExp(`^${m[1]}`).test(value) : false;
        }).map((e) => e.command.replace(/^mnemon\.providers\./, "")));
        if (!equal([...offered].sort(), [...commands].sort())) problems.push(`${value} offers ${JSON.stringify([...offered].sort())}, expected ${JSON.stringify([...commands].sort())}`);
    }
    const source = sources.find((f) => f.file.endsWith("providers.ts") && !f.file.includes("requests"))?.text ?? "";
    if (!/password: pick\.secret === true/.test(source)) problems.push("src/providers.ts must ask a secret field with a password input box");
    return problems;
});

check("icons, keybindings and the walkthrough", () => {
    const problems = [];
    if (!manifest.icon || !manifest.icon.endsWith(".png") || !fileExists(manifest.icon)) problems.push(`icon ${manifest.icon} is not a PNG of the extension`);
    else {
        const size = pngSize(manifest.icon);
        if (!size || size[0] !== size[1] || size[0] < 128) problems.push(`icon ${manifest.icon} is ${JSON.stringify(size)}, expected a square PNG of at least 128 px`);
    }
    const keys = contributes.keybindings ?? [];
    for (const id of ["mnemon.rememberSelection", "mnemon.recall"]) {
        if (!keys.some((k) => k.command === id && k.key && k.mac)) problems.push(`no keybinding (key and mac) for ${id}`);
    }
    for (const k of keys) if (!contributedSet.has(k.command)) problems.push(`keybinding for ${k.command}, not a contributed command`);
    const walkthroughs = contributes.walkthroughs ?? [];
    if (walkthroughs.length === 0) problems.push("no contributes.walkthroughs");
    for (const walkthrough of walkthroughs) {
        for (const step of walkthrough.steps ?? []) {
            const media = step.media?.markdown ?? step.media?.image ?? step.media?.svg;
            if (!media || !fileExists(typeof media === "string" ? media : media.light)) problems.push(`${step.id}: media ${JSON.stringify(media)} is missing`);
            for (const [, id] of `${step.description}`.matchAll(/\(command:(mnemon\.[\w.]+)/g)) {
                if (!contributedSet.has(id) && !viewIds.has(id.replace(/\.focus$/, ""))) problems.push(`${step.id}: link to ${id}, not a contributed command`);
            }
            for (const event of step.completionEvents ?? []) {
                const [kind, value] = event.split(":");
                if (kind === "onCommand" && !contributedSet.has(value)) problems.push(`${step.id}: ${event} names no contributed command`);
                if (kind === "onView" && !viewIds.has(value)) problems.push(`${step.id}: ${event} names no contributed view`);
            }
        }
        const install = (walkthrough.steps ?? []).map((s) => s.description).join("\n");
        if (/pip install mnemon-ls\b/.test(install)) problems.push("the walkthrough suggests `pip install mnemon-ls` (not on PyPI)");
    }
    return problems;
});

check("install messages name a command that works (mnemon-ls is not on PyPI)", () => {
    const problems = [];
    for (const { file, text } of sources) {
        if (/pip install mnemon-ls\b/.test(text)) problems.push(`${file} suggests 'pip install mnemon-ls'`);
    }
    if (!manifest.scripts?.["vscode:prepublish"]) problems.push("no vscode:prepublish script (vsce package would ship no out/)");
    return problems;
});

// ----------------------------------------------------------------------------------------- pins

check("version pins agree", () => {
    const problems = [];
    const engine = manifest.engines?.vscode;
    const types = manifest.devDependencies?.["@types/vscode"];
    // 1.101: the first release with stable language-model tools and MCP server definition providers.
    if (engine !== "^1.101.0") problems.push(`engines.vscode is ${engine}, expected ^1.101.0`);
    if (`^${types}` !== engine) problems.push(`@types/vscode ${types} must be the engine minimum (${engine})`);
    if (manifest.dependencies?.["vscode-languageclient"] !== "9.0.1") problems.push("vscode-languageclient must be pinned to 9.0.1");
    if (!/^\d+\.\d+\.\d+$/.test(manifest.devDependencies?.["vscode-jsonrpc"] ?? "")) problems.push("vscode-jsonrpc must be pinned exactly");
    const lock = JSON.parse(readFileSync(path.join(extensionDir, "package-lock.json"), "utf8"));
    const root = lock.packages?.[""] ?? {};
    if (!equal(root.dependencies, manifest.dependencies) || !equal(root.devDependencies, manifest.devDependencies)) {
        problems.push("package-lock.json is out of date with package.json (run npm install)");
    }
    const jsonrpc = lock.packages?.["node_modules/vscode-jsonrpc"]?.version;
    const nested = lock.packages?.["node_modules/vscode-languageserver-protocol/node_modules/vscode-jsonrpc"]?.version;
    if (nested && nested !== jsonrpc) problems.push(`the contract test's vscode-jsonrpc ${jsonrpc} differs from languageclient's ${nested}`);
    if ((manifest.activationEvents ?? []).some((e) => e.startsWith("onCommand:"))) problems.push("onCommand: activation events are implicit since VS Code 1.74");
    if (manifest.main !== "./out/extension.js") problems.push(`main is ${manifest.main}`);
    return problems;
});

console.log(`\n# manifest checks: ${passed} passed, ${failures.length} failed`);
process.exit(failures.length === 0 ? 0 : 1);
