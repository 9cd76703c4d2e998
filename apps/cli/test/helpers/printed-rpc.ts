import { attachEmbeddedService } from "@agent-tools/server/embedded-process";
import { inject } from "vitest";

/**
 * The payment chain's JSON-RPC URL of the embedded default the test files share, as its `export` line gives it to a
 * terminal (`AGENT_TOOLS_RPC_URL`): with it, a key whose channel another file's runs moved on goes on from the chain.
 */
export function printedRpcUrl(): string {
  const output = attachEmbeddedService(inject("embeddedService")).output();
  const url = /^ {2}export AGENT_TOOLS_BASE_URL=\S+ AGENT_TOOLS_RPC_URL=(\S+)$/m.exec(output)?.[1];
  if (!url) throw new Error(`the embedded default printed no export line:\n${output}`);
  return url;
}
