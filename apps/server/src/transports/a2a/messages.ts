/** The parts and messages the agent writes (A2A 1.0 shapes, as `@a2a-js/sdk` types them). */
import { type Message, type Part, Role, type Task } from "@a2a-js/sdk";

/** A text part. */
export const textPart = (text: string): Part => ({
  content: { $case: "text", value: text },
  mediaType: "text/plain",
  filename: "",
  metadata: {},
});

/** A JSON data part. */
export const dataPart = (value: unknown): Part => ({
  content: { $case: "data", value },
  mediaType: "application/json",
  filename: "",
  metadata: {},
});

/** A message of the agent on `task`: its parts and its metadata (x402's, on a payment's steps). */
export function agentMessage(
  task: Pick<Task, "id" | "contextId">,
  parts: Part[],
  metadata: Record<string, unknown> = {},
): Message {
  return {
    messageId: crypto.randomUUID(),
    contextId: task.contextId,
    taskId: task.id,
    role: Role.ROLE_AGENT,
    parts,
    metadata,
    extensions: [],
    referenceTaskIds: [],
  };
}
