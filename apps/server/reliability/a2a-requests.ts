/**
 * A2A requests as a client sends them to the server of a file's environment (./environment.ts): JSON-RPC over
 * HTTP, A2A 1.0, x402's A2A extension activated, written from A2A's and x402's texts rather than with the service's
 * constants. Used to measure what unpaid messages and cancels leave in the server.
 */
import type { Environment } from "./environment.js";

/** x402's A2A extension, version 0.2 (google-agentic-commerce/a2a-x402 `spec/v0.2`). */
const X402_EXTENSION = "https://github.com/google-agentic-commerce/a2a-x402/blob/main/spec/v0.2";

export interface A2aAnswer {
  result?: { task?: { id: string; status?: { state?: string } }; id?: string; status?: { state?: string } };
  error?: { code: number; message: string };
}

export function a2aRequests(env: () => Environment) {
  async function rpc(method: string, params: Record<string, unknown>): Promise<A2aAnswer> {
    const res = await fetch(`${env().server.url}/a2a`, {
      method: "POST",
      headers: { "content-type": "application/json", "a2a-version": "1.0", "a2a-extensions": X402_EXTENSION },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method, params }),
      // An answer that never comes fails the request instead of holding the test to its timeout.
      signal: AbortSignal.timeout(30_000),
    });
    return (await res.json()) as A2aAnswer;
  }

  return {
    /** A message asking for a paid skill, without payment: the agent answers a task waiting for one. */
    sendUnpaid: (tokenId: number) =>
      rpc("SendMessage", {
        message: {
          messageId: crypto.randomUUID(),
          role: "ROLE_USER",
          parts: [{ data: { skill: "intel", input: { tokenId } } }],
        },
      }),
    getTask: (id: string) => rpc("GetTask", { id }),
    cancelTask: (id: string) => rpc("CancelTask", { id }),
  };
}
