/**
 * The JSON-RPC plumbing every `mnemon/*` helper module shares (pure: no `vscode` import). src/requests.ts
 * re-exports the helpers of every tier (src/requestsDocuments.ts, src/requestsSpaces.ts,
 * src/requestsProviders.ts), so callers import from "./requests" only.
 */

/** The one thing the helpers need: `LanguageClient` and vscode-jsonrpc's `MessageConnection` both fit. */
export interface RequestSender {
    sendRequest(method: string, params: unknown): Promise<unknown>;
}

/** Drop `undefined` members so they are absent on the wire (the server forbids unknown/extra keys only). */
export function compact<T extends object>(params: T): T {
    return Object.fromEntries(Object.entries(params).filter(([, v]) => v !== undefined)) as T;
}

export async function request<R>(sender: RequestSender, method: string, params: object): Promise<R> {
    return (await sender.sendRequest(method, compact(params))) as R;
}
