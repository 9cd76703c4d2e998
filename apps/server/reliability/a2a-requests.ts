/**
 * A2A requests as a client sends them to the server of a file's environment (./environment.ts): JSON-RPC over
 * HTTP, A2A 1.0, x402's A2A extension activated, written from A2A's and x402's texts rather than with the service's
 * constants. Used to measure what unpaid messages and cancels leave in the server, and to pay over A2A.
 */
import type { Environment } from "./environment.js";

/** x402's A2A extension, version 0.2 (google-agentic-commerce/a2a-x402 `spec/v0.2`). */
const X402_EXTENSION = "https://github.com/google-agentic-commerce/a2a-x402/blob/main/spec/v0.2";

/** A task's status as the agent answers it: its state, and the x402 metadata of its message. */
interface A2aStatus {
  state?: string;
  message?: { metadata?: Record<string, unknown> };
}

export interface A2aAnswer {
  result?: { task?: { id: string; status?: A2aStatus }; id?: string; status?: A2aStatus };
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
    /** A message asking for a paid skill with an x402 payment in its metadata (x402's A2A extension, v0.2). */
    sendPaid: (skill: string, input: Record<string, unknown>, payload: unknown) =>
      rpc("SendMessage", {
        message: {
          messageId: crypto.randomUUID(),
          role: "ROLE_USER",
          parts: [{ data: { skill, input } }],
          metadata: { "x402.payment.status": "payment-submitted", "x402.payment.payload": payload },
        },
      }),
    getTask: (id: string) => rpc("GetTask", { id }),
    cancelTask: (id: string) => rpc("CancelTask", { id }),
  };
}
