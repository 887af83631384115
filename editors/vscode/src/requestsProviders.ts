/**
 * Typed helpers for third-party Memory Space providers: `mnemon/providers/*` (pure: no `vscode` import;
 * re-exported by src/requests.ts). Server: mnemon_ls/ops/providers.py over
 * `mnemon_ls.spaces.thirdparty.ProviderHost`, the same operations as `mnemon-ls provider ...`.
 *
 * Credentials: `configure`/`enable` send field values once; the server stores them (0600
 * `state/memory-providers.json`) and every answer names configured fields only, never a value.
 */

import type { SpaceView } from "./requestsSpaces";
import { request, RequestSender } from "./rpc";

/** Request method names of this tier (part of `Method` in src/requests.ts). */
export const ProviderMethod = {
    providersList: "mnemon/providers/list",
    providersConfigure: "mnemon/providers/configure",
    providersEnable: "mnemon/providers/enable",
    providersDisable: "mnemon/providers/disable",
    providersTest: "mnemon/providers/test",
    providersDiscover: "mnemon/providers/discover",
} as const;

/**
 * What a provider can do (server: `Capabilities.to_dict`, mnemon_ls/spaces/providers/base.py).
 * `discover` / `createNamespace` are present only when the provider declares one of them.
 */
export interface ProviderCapabilities {
    search: boolean;
    browse: boolean;
    graph: boolean;
    entities: boolean;
    related: boolean;
    link: boolean;
    forget: boolean;
    merge: boolean;
    /** `exact` (stored as given) or `async-extracting` (the provider extracts facts later). */
    write: "exact" | "async-extracting" | string;
    /** `soft`, `hard` or `unsupported`. */
    delete: "soft" | "hard" | "unsupported" | string;
    normalizedScores: boolean;
    /** Lists its own namespaces, which become spaces. */
    discover?: boolean;
    /** Can make a new namespace (`mnemon/spaces/create` with `provider`). */
    createNamespace?: boolean;
}

/** Result of `mnemon/providers/test` (server: `Health.to_dict`). */
export interface ProviderHealth {
    ok: boolean;
    /** What runs, e.g. `hermes-agent 0.19.0 plugins/memory/holographic`. */
    engine: string;
    /** A path or an endpoint without credentials. */
    location: string | null;
    items: number | null;
    /** Wall time of the probe in milliseconds. */
    latencyMs: number | null;
    message: string;
    details: Record<string, unknown>;
}

/** One provider (server: `ProviderHost.view`): field names only, never a value. */
export interface ProviderView {
    providerId: string;
    label: string;
    kind: "local" | "remote";
    /** Its package is installed in the server's Python environment. */
    installed: boolean;
    /** `"<distribution> <version>"` when installed. */
    distribution: string | null;
    /** Service fields are stored for it. */
    configured: boolean;
    enabled: boolean;
    /** Installed, loadable, configured and enabled. */
    usable: boolean;
    configuredFields: string[];
    configuredSecrets: string[];
    /** Spaces of this provider in the root. */
    spaces: number;
    /** Null when the package is not installed or cannot be loaded. */
    capabilities: ProviderCapabilities | null;
    /** The plugin's own fields (null when not installed). */
    fields: { service: string[]; memory: string[]; secret: string[] } | null;
    /**
     * Only in `mnemon/providers/list`, for a configured provider that has a server to reach (PostgreSQL):
     * whether the server answers now (checked by the list, read-only, opening no engine; never a credential).
     */
    connection?: ProviderConnection;
}

/** A provider's connection state (server: `mnemon_ls/spaces/provider_connection.py`). */
export interface ProviderConnection {
    state: "connected" | "unreachable";
    /** Where, without a credential, e.g. `postgresql db.internal:5432/memory as mnemon`. */
    location: string | null;
    /** The server and its version, or why it cannot be reached (libpq's reason; never a password). */
    message: string;
    latencyMs: number | null;
}

/** Result of `mnemon/providers/list`. */
export interface ProviderList {
    providers: ProviderView[];
    workspace: string;
}

/** Result of `mnemon/providers/configure` and `disable`. */
export type ProviderResult = ProviderView & { workspace: string };

/** Result of `mnemon/providers/enable`: the view, the engine's health and the discovered space ids. */
export type ProviderEnabled = ProviderResult & { health: ProviderHealth; discovered: string[] };

/** Result of `mnemon/providers/test` (writes nothing). */
export interface ProviderTestResult {
    providerId: string;
    health: ProviderHealth;
    namespaces: { externalId: string; name: string; items: number | null }[];
    workspace: string;
}

/** `mnemon/providers/list`: every known provider (the reference's ids first, then other installed ones). */
export function listProviders(sender: RequestSender, params: { workspace?: string } = {}): Promise<ProviderList> {
    return request<ProviderList>(sender, ProviderMethod.providersList, params);
}

/**
 * `mnemon/providers/configure`: merge `services` (field -> value) over the stored fields and drop the
 * secrets named in `clearSecrets`. Errors name `services.<field>` and never echo a value.
 */
export function configureProvider(
    sender: RequestSender,
    params: { workspace?: string; providerId: string; services?: Record<string, unknown>; clearSecrets?: string[] },
): Promise<ProviderResult> {
    return request<ProviderResult>(sender, ProviderMethod.providersConfigure, params);
}

/** `mnemon/providers/enable`: open the engine, discover its namespaces into spaces, then enable it. */
export function enableProvider(
    sender: RequestSender,
    params: { workspace?: string; providerId: string; services?: Record<string, unknown> },
): Promise<ProviderEnabled> {
    return request<ProviderEnabled>(sender, ProviderMethod.providersEnable, params);
}

/** `mnemon/providers/disable`: remove its spaces from this root (never its data); its configuration stays. */
export function disableProvider(sender: RequestSender, params: { workspace?: string; providerId: string }): Promise<ProviderResult> {
    return request<ProviderResult>(sender, ProviderMethod.providersDisable, params);
}

/** `mnemon/providers/test`: open the engine with the stored configuration and report its health. */
export function testProvider(sender: RequestSender, params: { workspace?: string; providerId: string }): Promise<ProviderTestResult> {
    return request<ProviderTestResult>(sender, ProviderMethod.providersTest, params);
}

/** `mnemon/providers/discover`: list an enabled provider's namespaces into spaces again. */
export function discoverProvider(
    sender: RequestSender,
    params: { workspace?: string; providerId: string },
): Promise<{ providerId: string; spaces: SpaceView[]; workspace: string }> {
    return request(sender, ProviderMethod.providersDiscover, params);
}
