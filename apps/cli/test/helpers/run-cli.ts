import { execFile } from "node:child_process";
import { fileURLToPath } from "node:url";
import { machineNode } from "./machine-node.js";
import { printedRpcUrl } from "./printed-rpc.js";
import { stateHome } from "./state-home.js";

export const bin = fileURLToPath(new URL("../../dist/bin.js", import.meta.url));

/**
 * Runs the built CLI with the machine's Node and exactly `env` (no variable of the test's own leaks in), in a terminal
 * that ran the embedded default's export line (its payment chain's RPC).
 */
export function runCli(args: string[], env: Record<string, string>) {
  return new Promise<{ status: number; stdout: string; stderr: string }>((resolve) => {
    execFile(
      machineNode,
      [bin, ...args],
      {
        env: {
          PATH: process.env.PATH ?? "",
          NO_COLOR: "1",
          XDG_STATE_HOME: stateHome,
          AGENT_TOOLS_RPC_URL: printedRpcUrl(),
          ...env,
        },
        encoding: "utf8",
      },
      (error, stdout, stderr) => {
        resolve({ status: error ? Number(error.code ?? 1) : 0, stdout, stderr });
      },
    );
  });
}
