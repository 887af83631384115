/**
 * The one way this extension writes a size in bytes for a person (pure, no `vscode` import): every tree
 * description, tooltip, message and report uses {@link formatBytes} or {@link formatUsage}, so MEMORY.md's
 * "10 KiB" and the Documents' "10 MiB" are written alike (binary units: 1 KiB = 1024 bytes, as the
 * limits are set). Text for a language model (src/tools.ts) keeps the server's exact UTF-8 byte counts.
 */

const UNITS = ["KiB", "MiB", "GiB", "TiB"] as const;

/**
 * `bytes` (a count of bytes, >= 0) as `512 B`, `8.1 KiB`, `10 KiB`, `10 MiB`, `1.5 GiB`: below 1024 the
 * exact count in `B`, else the largest binary unit that keeps the number at or above 1, with one decimal
 * under 100 (dropped when it is `.0`) and none from 100 on. A value that rounds up to 1024 of a unit is
 * written in the next one (`1 MiB`, never `1024 KiB`). A negative or non-finite value is written as given
 * with `B`.
 */
export function formatBytes(bytes: number): string {
    if (!Number.isFinite(bytes) || bytes < 1024) {
        return `${bytes} B`;
    }
    let value = bytes / 1024;
    let unit = 0;
    while (unit < UNITS.length - 1 && round(value) >= 1024) {
        value /= 1024;
        unit += 1;
    }
    return `${round(value)} ${UNITS[unit]}`;
}

function round(value: number): number {
    return value >= 100 ? Math.round(value) : Math.round(value * 10) / 10;
}

/**
 * `used of limit` (both in bytes), e.g. `9.5 KiB of 10 KiB`. When the two would read the same although
 * they differ (10,250 and 10,240 bytes are both `10 KiB`), both are written exactly in bytes instead
 * (`10250 B of 10240 B`), so that a text saying a file is over its limit never shows two equal numbers.
 */
export function formatUsage(used: number, limit: number): string {
    const a = formatBytes(used);
    const b = formatBytes(limit);
    return a === b && used !== limit ? `${used} B of ${limit} B` : `${a} of ${b}`;
}
