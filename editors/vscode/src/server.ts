/**
 * The mnemon-ls client: interpreter discovery, launch (`<python> -m mnemon_ls serve` over stdio),
 * settings (`initializationOptions.mnemon` and `workspace/configuration` section `mnemon`), and a
 * debounced restart. One client per window: multi-root folders go through `workspaceFolders`.
 */

import { execFile } from "node:child_process";
import * as os from "node:os";
import * as vscode from "vscode";
import {
    CloseAction,
    ErrorAction,
    LanguageClient,
    LanguageClientOptions,
    ResponseError,
    RevealOutputChannelOn,
    ServerOptions,
    State,
} from "vscode-languageclient/node";
import { isManagedDocumentUri, normalExitLine } from "./format";
import { buildServerSettings, interpreterSetting, serverArgs, ServerSettings } from "./settings";

/**
 * The output channel handed to vscode-languageclient: the extension's log, except that the client's
 * "[Error - <time>] Server process exited with code 0." (logged on every normal stop and restart) is
 * logged at info level instead.
 */
function clientOutput(log: vscode.LogOutputChannel, stopping: () => boolean): vscode.OutputChannel {
    return new Proxy(log, {
        get(target, property) {
            if (property === "appendLine") {
                return (line: string) => {
                    const normal = normalExitLine(line, stopping());
                    if (normal) {
                        target.info(normal);
                    } else {
                        target.appendLine(line);
                    }
                };
            }
            const value = Reflect.get(target, property, target) as unknown;
            return typeof value === "function" ? (value as (...args: unknown[]) => unknown).bind(target) : value;
        },
    });
}

export const CLIENT_ID = "mnemon";
export const CLIENT_NAME = "Mnemon";
/** Restart requests within this window (config change + env change + command) coalesce into one. */
export const RESTART_DEBOUNCE_MS = 500;
const PROBE_TIMEOUT_MS = 20_000;
const STOP_TIMEOUT_MS = 3_000;

// ------------------------------------------------------------------------------------------ interpreter

/** The parts of the `ms-python.python` extension API used here (accessed dynamically, no hard dependency). */
interface PythonExtensionApi {
    environments?: {
        getActiveEnvironmentPath(resource?: vscode.Uri): { id: string; path: string };
        resolveEnvironment(
            env: { id: string; path: string } | string,
        ): Promise<{ executable?: { uri?: vscode.Uri } } | undefined>;
        onDidChangeActiveEnvironmentPath?: vscode.Event<unknown>;
    };
    settings?: {
        getExecutionDetails?(resource?: vscode.Uri): { execCommand: string[] | undefined };
        onDidChangeExecutionDetails?: vscode.Event<unknown>;
    };
}

export interface Interpreter {
    /** Executable first, then extra arguments. */
    argv: string[];
    /** Where it came from, for the log and error messages. */
    source: "setting" | "python-extension" | "default";
}

async function pythonExtensionApi(log: vscode.LogOutputChannel): Promise<PythonExtensionApi | undefined> {
    const extension = vscode.extensions.getExtension<PythonExtensionApi>("ms-python.python");
    if (!extension) {
        return undefined;
    }
    try {
        return extension.isActive ? extension.exports : await extension.activate();
    } catch (error) {
        log.warn(`could not activate ms-python.python: ${String(error)}`);
        return undefined;
    }
}

/**
 * The Python to run mnemon-ls with: `mnemon.interpreter`, else the interpreter selected in the
 * Python extension (if installed), else `python3` (`python` on Windows).
 */
export async function resolveInterpreter(resource: vscode.Uri | undefined, log: vscode.LogOutputChannel): Promise<Interpreter> {
    const folder = resource ? vscode.workspace.getWorkspaceFolder(resource) : undefined;
    const configured = interpreterSetting(vscode.workspace.getConfiguration("mnemon", resource).get("interpreter"), {
        workspaceFolder: folder?.uri.fsPath,
        userHome: os.homedir(),
    });
    if (configured.length > 0) {
        return { argv: configured, source: "setting" };
    }
    const api = await pythonExtensionApi(log);
    if (api?.environments) {
        try {
            const active = api.environments.getActiveEnvironmentPath(resource);
            const resolved = await api.environments.resolveEnvironment(active);
            const executable = resolved?.executable?.uri?.fsPath;
            if (executable) {
                return { argv: [executable], source: "python-extension" };
            }
        } catch (error) {
            log.warn(`Python extension environments API failed: ${String(error)}`);
        }
    }
    const details = api?.settings?.getExecutionDetails?.(resource)?.execCommand;
    if (details && details.length > 0 && details[0]) {
        return { argv: details, source: "python-extension" };
    }
    return { argv: [process.platform === "win32" ? "python" : "python3"], source: "default" };
}

/** Subscribe to interpreter changes of the Python extension (if installed). */
export async function onPythonInterpreterChanged(
    log: vscode.LogOutputChannel,
    listener: () => void,
): Promise<vscode.Disposable | undefined> {
    const api = await pythonExtensionApi(log);
    const event = api?.environments?.onDidChangeActiveEnvironmentPath ?? api?.settings?.onDidChangeExecutionDetails;
    return event ? event(() => listener()) : undefined;
}

/** Check that `argv` runs and can import mnemon_ls; resolves to the mnemon_ls version or rejects with a message. */
export function probeInterpreter(argv: string[]): Promise<string> {
    const code = "import sys, mnemon_ls; print(mnemon_ls.__version__); print('%d.%d' % sys.version_info[:2])";
    return new Promise((resolve, reject) => {
        execFile(argv[0], [...argv.slice(1), "-c", code], { timeout: PROBE_TIMEOUT_MS, windowsHide: true }, (error, stdout, stderr) => {
            if (error) {
                const missing = /No module named .?mnemon_ls/.test(stderr);
                const enoent = (error as NodeJS.ErrnoException).code === "ENOENT";
                reject(
                    new Error(
                        enoent
                            ? `'${argv[0]}' was not found`
                            : missing
                              ? `mnemon_ls is not installed for '${argv[0]}' (mnemon-ls is not on PyPI: run '${argv[0]} -m pip install <path-to-your-mnemon-ls-clone>', the README's 'pip install .')`
                              : `'${argv.join(" ")}' failed: ${(stderr || error.message).trim().split("\n").slice(-1)[0]}`,
                    ),
                );
                return;
            }
            resolve(stdout.trim().split("\n")[0] ?? "");
        });
    });
}

// ------------------------------------------------------------------------------------------ the client

type NotificationHandler = (params: any) => void;

/** Owns the one LanguageClient of the window and restarts it on demand. */
export class MnemonServer implements vscode.Disposable {
    private client: LanguageClient | undefined;
    private starting: Promise<LanguageClient | undefined> | undefined;
    private restartQueued = false;
    private restartRun: Promise<void> | undefined;
    private lastStartError: string | undefined;
    private readonly handlers = new Map<string, Set<NotificationHandler>>();
    private readonly clientDisposables: vscode.Disposable[] = [];
    private readonly stateEmitter = new vscode.EventEmitter<boolean>();
    private disposed = false;
    /** Closes the notification about a stopped or failed server (it is never left up after recovery). */
    private closeNotice: (() => void) | undefined;
    /** Why the server is not running, for the status bar: undefined while it runs or was never started. */
    private downReason: "crashed" | "failed" | undefined;
    /** True while stop() disposes a client (its exit is intended). */
    private stopping = false;

    /** Fires true when a client reaches Running, false when it stops. */
    readonly onDidChangeRunning = this.stateEmitter.event;

    constructor(readonly log: vscode.LogOutputChannel) {}

    /** The running client, if any (no start). */
    get running(): LanguageClient | undefined {
        return this.client?.state === State.Running ? this.client : undefined;
    }

    /** The running client; starts the server if needed. Rejects with a user-readable Error. */
    async ensureClient(): Promise<LanguageClient> {
        if (this.restartRun) {
            await this.restartRun;
        }
        const client = this.running ?? (await this.start());
        if (!client || client.state !== State.Running) {
            // A failed start has already been shown to the user (with a fix); callers skip `reported` errors.
            const reported = this.lastStartError !== undefined;
            throw Object.assign(new Error(this.lastStartError ?? "mnemon-ls is not running (run 'Mnemon: Restart Server')"), { reported });
        }
        return client;
    }

    /** Route a server notification to `handler`, for this and every future client. */
    onNotification(method: string, handler: NotificationHandler): vscode.Disposable {
        let set = this.handlers.get(method);
        if (!set) {
            set = new Set();
            this.handlers.set(method, set);
            this.client?.onNotification(method, (params) => this.dispatch(method, params));
        }
        set.add(handler);
        return new vscode.Disposable(() => set?.delete(handler));
    }

    private dispatch(method: string, params: unknown): void {
        for (const handler of this.handlers.get(method) ?? []) {
            try {
                handler(params);
            } catch (error) {
                this.log.error(`handler for ${method} failed: ${String(error)}`);
            }
        }
    }

    /** Start the server (no-op if running; concurrent calls share one start). */
    start(): Promise<LanguageClient | undefined> {
        if (this.disposed) {
            return Promise.resolve(undefined);
        }
        if (this.running) {
            return Promise.resolve(this.running);
        }
        if (!this.starting) {
            this.starting = this.doStart().finally(() => (this.starting = undefined));
        }
        return this.starting;
    }

    private async doStart(): Promise<LanguageClient | undefined> {
        const folder = vscode.workspace.workspaceFolders?.[0];
        const interpreter = await resolveInterpreter(folder?.uri, this.log);
        this.log.info(`using Python ${JSON.stringify(interpreter.argv)} (from ${interpreter.source})`);
        try {
            const version = await probeInterpreter(interpreter.argv);
            this.log.info(`mnemon_ls ${version} found`);
        } catch (error) {
            this.lastStartError = `cannot start mnemon-ls: ${(error as Error).message}`;
            this.log.error(this.lastStartError);
            void this.offerFix(this.lastStartError, interpreter);
            return undefined;
        }

        const { command, args } = serverArgs(interpreter.argv);
        const serverOptions: ServerOptions = {
            command,
            args,
            options: { cwd: folder?.uri.fsPath, env: { ...process.env, PYTHONUTF8: "1", PYTHONIOENCODING: "utf-8" } },
        };
        const clientOptions: LanguageClientOptions = {
            // Every file: the server offers "Remember selection" code actions on any text.
            documentSelector: [{ scheme: "file" }],
            outputChannel: clientOutput(this.log, () => this.disposed || this.stopping || this.restartRun !== undefined),
            traceOutputChannel: this.log,
            revealOutputChannelOn: RevealOutputChannelOn.Never,
            initializationOptions: () => ({ mnemon: this.settingsFor(folder?.uri) }),
            synchronize: { configurationSection: "mnemon" },
            errorHandler: {
                error: () => ({ action: ErrorAction.Continue }),
                closed: () => {
                    void this.reportClosed();
                    return { action: CloseAction.DoNotRestart, handled: true };
                },
            },
            middleware: {
                workspace: {
                    configuration: async (params, token, next) => {
                        const defaults = await next(params, token);
                        if (defaults instanceof ResponseError) {
                            return defaults;
                        }
                        return params.items.map((item, i) =>
                            item.section === "mnemon" ? this.settingsFor(item.scopeUri) : (defaults as unknown[])[i],
                        );
                    },
                },
                window: {
                    // "Create Document from File" asks to show the new managed file: show it rendered and
                    // read-only (a Markdown preview, frontmatter hidden), never as an editable raw file.
                    showDocument: async (params, next) => {
                        if (isManagedDocumentUri(params.uri)) {
                            try {
                                await vscode.commands.executeCommand("markdown.showPreview", vscode.Uri.parse(params.uri));
                                return { success: true };
                            } catch (error) {
                                this.log.warn(`markdown preview failed, opening the file: ${String(error)}`);
                            }
                        }
                        const result = await next(params, new vscode.CancellationTokenSource().token);
                        return result instanceof ResponseError ? { success: false } : result;
                    },
                },
                // The server offers its actions at every position; only list them when asked
                // (Ctrl+. / Refactor menu), so that no light bulb follows the cursor everywhere.
                provideCodeActions: (document, range, context, token, next) =>
                    context.triggerKind === vscode.CodeActionTriggerKind.Automatic ? [] : next(document, range, context, token),
            },
        };

        const client = new LanguageClient(CLIENT_ID, CLIENT_NAME, serverOptions, clientOptions);
        for (const method of this.handlers.keys()) {
            client.onNotification(method, (params) => this.dispatch(method, params));
        }
        this.clientDisposables.push(
            client.onDidChangeState((event) => {
                const running = event.newState === State.Running;
                if (running) {
                    this.downReason = undefined;
                    this.dismissNotice(); // the server is back: the "stopped" notification goes away
                }
                void vscode.commands.executeCommand("setContext", "mnemon.serverRunning", running);
                this.stateEmitter.fire(running);
            }),
        );
        this.client = client;
        try {
            await client.start();
            this.lastStartError = undefined;
            return client;
        } catch (error) {
            this.lastStartError = `mnemon-ls failed to start: ${error instanceof Error ? error.message : String(error)}`;
            this.log.error(this.lastStartError);
            void this.offerFix(this.lastStartError, interpreter);
            if (this.client === client) {
                this.client = undefined;
            }
            for (const disposable of this.clientDisposables.splice(0)) {
                disposable.dispose();
            }
            await client.dispose(STOP_TIMEOUT_MS).catch(() => undefined);
            return undefined;
        }
    }

    /** Settings of the folder containing `scope` (a URI string from the server or a Uri). */
    settingsFor(scope: string | vscode.Uri | undefined): ServerSettings {
        let resource: vscode.Uri | undefined;
        if (typeof scope === "string") {
            resource = this.client ? this.client.protocol2CodeConverter.asUri(scope) : vscode.Uri.parse(scope);
        } else {
            resource = scope;
        }
        const folder = resource ? vscode.workspace.getWorkspaceFolder(resource) : undefined;
        const config = vscode.workspace.getConfiguration("mnemon", folder?.uri ?? resource);
        return buildServerSettings((key) => config.get(key), { workspaceFolder: folder?.uri.fsPath, userHome: os.homedir() });
    }

    /** Why the server is not running (`crashed`, `failed` to start), undefined while it runs. */
    get down(): "crashed" | "failed" | undefined {
        return this.running ? undefined : this.downReason;
    }

    /**
     * Show `text` as a notification that this class closes itself: when the server runs again, or when
     * the next notice replaces it (so a stale error never stays up after recovery). Its actions are
     * command links in the text.
     */
    private showNotice(text: string): void {
        this.dismissNotice();
        void vscode.window.withProgress(
            { location: vscode.ProgressLocation.Notification, title: "Mnemon", cancellable: true },
            (progress, token) => {
                progress.report({ message: text });
                return new Promise<void>((resolve) => {
                    this.closeNotice = resolve;
                    token.onCancellationRequested(() => resolve());
                });
            },
        );
    }

    private dismissNotice(): void {
        const close = this.closeNotice;
        this.closeNotice = undefined;
        close?.();
    }

    private async offerFix(message: string, interpreter: Interpreter): Promise<void> {
        this.downReason = "failed";
        this.stateEmitter.fire(false);
        const settings = `[Set Interpreter](command:workbench.action.openSettings?${encodeURIComponent(JSON.stringify(["mnemon.interpreter"]))})`;
        this.showNotice(
            `${message}. Set 'mnemon.interpreter' to a Python with mnemon-ls installed${interpreter.source === "python-extension" ? " or select one in the Python extension" : ""}. ${settings} · [Restart Server](command:mnemon.restartServer) · [Show Log](command:mnemon.showLog)`,
        );
    }

    private async reportClosed(): Promise<void> {
        if (this.disposed || this.stopping || this.restartRun || this.starting) {
            return; // intentional restart, or a failed start (reported by offerFix)
        }
        this.downReason = "crashed";
        this.log.error("mnemon-ls stopped unexpectedly (see the lines above); run 'Mnemon: Restart Server'");
        this.stateEmitter.fire(false);
        this.showNotice(
            "the mnemon-ls server stopped. The Mnemon views and status bar wait for it. [Restart Server](command:mnemon.restartServer) · [Show Log](command:mnemon.showLog)",
        );
    }

    /**
     * Restart the server. Requests arriving while one is pending (or running) coalesce: a burst of
     * triggers leads to one stop/start after RESTART_DEBOUNCE_MS, plus one more if a request came in
     * after that restart had already read the configuration.
     */
    restart(reason: string): Promise<void> {
        this.log.info(`restart requested (${reason})`);
        this.restartQueued = true;
        if (!this.restartRun) {
            this.restartRun = this.runRestarts().finally(() => (this.restartRun = undefined));
        }
        return this.restartRun;
    }

    private async runRestarts(): Promise<void> {
        while (this.restartQueued && !this.disposed) {
            await new Promise((resolve) => setTimeout(resolve, RESTART_DEBOUNCE_MS));
            this.restartQueued = false;
            await this.stop();
            await this.start();
        }
    }

    /** Stop and dispose the current client (errors are logged). */
    async stop(): Promise<void> {
        if (this.starting) {
            await this.starting.catch(() => undefined);
        }
        const client = this.client;
        this.client = undefined;
        for (const disposable of this.clientDisposables.splice(0)) {
            disposable.dispose();
        }
        if (!client) {
            return;
        }
        this.stopping = true;
        try {
            await client.dispose(STOP_TIMEOUT_MS);
        } catch (error) {
            this.log.warn(`stopping mnemon-ls: ${String(error)}`);
        } finally {
            this.stopping = false;
        }
        void vscode.commands.executeCommand("setContext", "mnemon.serverRunning", false);
        this.stateEmitter.fire(false);
    }

    dispose(): void {
        this.disposed = true;
        this.dismissNotice();
        void this.stop();
        this.stateEmitter.dispose();
    }
}
