// The server's folders ("rooms") import only downward: each room may import the rooms listed after it, never one
// listed before it, so no two folders depend on each other (docs/architecture.md, "Rooms"). Lists every import that
// goes up and exits 1. Run by `pnpm test` as `pnpm --silent rooms`.
import { readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import ts from "typescript";

/** Top to bottom. A room is a folder of apps/server/src; `transports/*` and `schemes/*` are a room each. */
const SERVER_ROOMS = [
  "index.ts",
  "startup",
  "config",
  "transports/http",
  "transports/mcp",
  "transports/a2a",
  "missions",
  "schemes/batch-settlement",
  "schemes/upto",
  "schemes/exact",
  "paid-call",
  "settlement",
  "signatures",
  "tools",
  "agents",
  "chain",
  "metrics",
  "upstream",
  "store",
  "limits",
  "metering",
  "errors",
] as const;

const source = resolve("apps/server/src");

function roomOf(file: string): string | undefined {
  const path = relative(source, file).split("\\").join("/");
  return SERVER_ROOMS.find((room) => path === room || path.startsWith(`${room}/`));
}

function* sourceFiles(dir: string): Generator<string> {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) yield* sourceFiles(path);
    else if (entry.name.endsWith(".ts")) yield path;
  }
}

const problems: string[] = [];
for (const file of sourceFiles(source)) {
  const from = roomOf(file);
  if (from === undefined) {
    problems.push(`${relative(source, file)}: in no room; add its folder to SERVER_ROOMS (scripts/server-rooms.ts)`);
    continue;
  }
  const { importedFiles } = ts.preProcessFile(readFileSync(file, "utf8"), true, true);
  for (const { fileName } of importedFiles) {
    if (!fileName.startsWith(".")) continue;
    const target = resolve(dirname(file), fileName).replace(/\.js$/, ".ts");
    const to = roomOf(target);
    if (to === undefined || to === from) continue;
    if (SERVER_ROOMS.indexOf(to) < SERVER_ROOMS.indexOf(from)) {
      problems.push(`${relative(source, file)} (${from}) imports ${relative(source, target)} (${to}), a room above it`);
    }
  }
}
if (problems.length > 0) {
  console.error(`The server's rooms import upward (${problems.length}):\n  ${problems.join("\n  ")}`);
  process.exit(1);
}
