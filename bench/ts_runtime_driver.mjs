// Drives the TypeScript reference Runtime store (npm `dsh-mnemon-source-runtime`) for bench_runtime.py.
//
//   node bench/ts_runtime_driver.mjs <node_modules dir> <storage root>
//
// Builds the package's own RuntimeMemoryController on <storage root> (memory 10240 / user 4096 bytes, one
// root) and answers one JSON line per request line on stdin:
//   {"op": "mutate", "request": {action, target, content?, oldText?, importance?, branches?}}
//     -> {"ns": <nanoseconds of controller.mutate>, "cpuNs": <process CPU time (user + system, all threads)
//         it used, in nanoseconds, microsecond resolution>, "message": <receipt message>}   or {"error": <text>}
//   {"op": "quit"} -> exits 0
// Only controller.mutate is timed (process.hrtime.bigint), so the pipe costs nothing in the numbers.
//
// The package exports the controller only inside its memory Source (which adds a snapshot read to every
// mutate), so a module load hook appends one line to the package's lib/index.js as it is loaded:
// `export { RuntimeMemoryController as __RuntimeMemoryController }`. Every other byte runs as published.
import { register } from "node:module";
import { createInterface } from "node:readline";
import { join } from "node:path";
import { pathToFileURL } from "node:url";

const [nodeModules, root] = process.argv.slice(2);
if (!nodeModules || !root) {
  process.stderr.write("usage: node ts_runtime_driver.mjs <node_modules dir> <storage root>\n");
  process.exit(2);
}

const hook = `
export async function load(url, context, nextLoad) {
  const result = await nextLoad(url, context);
  if (!url.endsWith("/dsh-mnemon-source-runtime/lib/index.js")) return result;
  const source = typeof result.source === "string" ? result.source : new TextDecoder().decode(result.source);
  return { ...result, shortCircuit: true,
           source: source + "\\nexport { RuntimeMemoryController as __RuntimeMemoryController };\\n" };
}`;
register("data:text/javascript," + encodeURIComponent(hook));

const entry = pathToFileURL(join(nodeModules, "dsh-mnemon-source-runtime", "lib", "index.js")).href;
const { __RuntimeMemoryController: Controller } = await import(entry);
if (typeof Controller !== "function") throw new Error("RuntimeMemoryController not found in " + entry);
const controller = new Controller({ effectiveDataDir: () => root }, () => new Date(), { memory: 10240, user: 4096 });

const lines = createInterface({ input: process.stdin, crlfDelay: Infinity });
for await (const line of lines) {
  if (!line.trim()) continue;
  const message = JSON.parse(line);
  if (message.op === "quit") break;
  try {
    const cpu = process.cpuUsage();
    const started = process.hrtime.bigint();
    const receipt = await controller.mutate(message.request);
    const ns = process.hrtime.bigint() - started;
    const used = process.cpuUsage(cpu);
    process.stdout.write(JSON.stringify({ ns: Number(ns), cpuNs: (used.user + used.system) * 1000,
                                          message: receipt.message }) + "\n");
  } catch (error) {
    process.stdout.write(JSON.stringify({ error: String(error && error.message ? error.message : error) }) + "\n");
  }
}
process.exit(0);
