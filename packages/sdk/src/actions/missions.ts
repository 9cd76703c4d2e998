import type { MissionSpec, ToolInput, ToolOutput, TypedMission } from "@agent-tools/schema";
import type { ClientContext } from "../context.js";
import { callTool, type ToolResult } from "./call-tool.js";

/**
 * Body of `POST /dispatch`: the agent, the mission (a tool by its slug and that tool's fields, typed together) and
 * when to run it.
 */
export type DispatchInput = Omit<ToolInput<"dispatch">, "mission"> & { mission: MissionSpec };
/** Answer of `POST /dispatch` (202): the queued mission, typed by its tool, and a brief. */
export type DispatchOutput = Omit<ToolOutput<"dispatch">, "mission"> & { mission: TypedMission };
/** Query of `GET /dispatch`: the agent, optionally a status, and how many missions (1 to 100, default 20). */
export type ListMissionsInput = ToolInput<"missions">;
/** Answer of `GET /dispatch`: the agent's missions, newest first (each typed by its tool), and counts by status. */
export type ListMissionsOutput = Omit<ToolOutput<"missions">, "missions"> & { missions: TypedMission[] };

/** Parameters of `client.dispatch()`: the agent, the mission and when to run it. */
export type DispatchParameters = DispatchInput;
/** What `client.dispatch()` resolves with: the queued mission, typed by its tool, and the payment. */
export type DispatchReturnType = ToolResult<DispatchOutput>;
/** `POST /dispatch`, paid: queues a mission; the answer (202) is the queued mission. */
export const dispatch = (context: ClientContext, input: DispatchParameters): Promise<DispatchReturnType> =>
  // The typed mission shapes are the contracts' own, narrowed by tool; the answer was validated by the contract.
  callTool(context, { name: "dispatch", input: input as ToolInput<"dispatch"> }) as Promise<DispatchReturnType>;

/** Parameters of `client.missions()`: the agent, an optional status, and how many missions. */
export type ListMissionsParameters = ListMissionsInput;
/** What `client.missions()` resolves with: the agent's missions, each typed by its tool, and the payment. */
export type ListMissionsReturnType = ToolResult<ListMissionsOutput>;
/** `GET /dispatch`, paid: the agent's missions, newest first, and counts by status. */
export const listMissions = (context: ClientContext, input: ListMissionsParameters): Promise<ListMissionsReturnType> =>
  callTool(context, { name: "missions", input }) as Promise<ListMissionsReturnType>;
