import { existsSync } from "node:fs";
import { delimiter, join } from "node:path";

/**
 * The machine's own Node (what a user runs the CLI with: Node 20 on a fresh machine), not the Node 24 the
 * workspace's scripts put first on PATH.
 */
export const machineNode =
  (process.env.PATH ?? "")
    .split(delimiter)
    .filter((dir) => !dir.includes("node_modules"))
    .map((dir) => join(dir, "node"))
    .find((candidate) => existsSync(candidate)) ?? "node";
