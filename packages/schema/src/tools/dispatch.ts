import { z } from "zod";
import { requestErrorMap } from "../errors.js";
import { addressSchema, isoDateTimeSchema, tokenIdSchema } from "../primitives.js";
import { type ToolName, toolNames, toolRoutes } from "../routes.js";
import { briefField, generatedAtField } from "./common.js";

/** A tool a mission can run, by its slug (the route path without its slash): any tool of the route table. */
export type MissionTool = (typeof toolRoutes)[ToolName]["slug"];
/** The tools a mission can run, by their slugs (`intel`, `drop-radar`, ...). */
export const missionTools = toolNames.map((name) => toolRoutes[name].slug) as [MissionTool, ...MissionTool[]];
const toolBySlug = new Map(toolNames.map((name) => [toolRoutes[name].slug as MissionTool, name]));

/** The route-table name of a mission's tool (undefined for a slug no tool has, for example a stored one). */
export function missionToolName(tool: string): ToolName | undefined {
  return toolBySlug.get(tool as MissionTool);
}

/** The request schema of a mission's tool without `tokenId` (the mission names the agent). */
export function missionParamsSchema(tool: MissionTool): z.ZodObject {
  return (toolRoutes[missionToolName(tool)!].request as z.ZodObject).omit({ tokenId: true } as never);
}

/** How far ahead a mission may be scheduled. */
export const MISSION_MAX_DELAY_DAYS = 30;

/** The tool of a mission, by its slug. */
export const missionToolSchema = z
  .enum(missionTools, { error: `must be one of ${missionTools.join(", ")}` })
  .meta({ description: "The tool the mission runs, by its route name.", example: "allowlist-scan" });

/** The states of a mission, in the order it goes through them. */
export const missionStatuses = ["queued", "running", "done", "failed"] as const;
/** The state of a mission: `queued`, `running`, `done` or `failed`. */
export const missionStatusSchema = z.enum(missionStatuses).meta({
  description:
    "`queued` (waiting for `runAt`, or for a retry), `running`, `done` (result kept) or `failed` (error kept).",
});
/** The state of a mission (see {@link missionStatuses}). */
export type MissionStatus = z.infer<typeof missionStatusSchema>;

const paramsField = z
  .record(z.string(), z.unknown())
  .meta({ description: "The tool's request fields, as for its own route, without `tokenId`." });

/** The body of `POST /dispatch`: the agent, the mission (a tool and its fields) and when to run it. */
export const dispatchRequestSchema = z
  .object({
    tokenId: tokenIdSchema,
    mission: z.object({ tool: missionToolSchema, params: paramsField.default({}) }).superRefine((mission, ctx) => {
      // The params must be a valid request of the tool, so a queued mission does not fail later on its input. The
      // inner parse says its issues in the service's words too ("must be a number"), not Zod's.
      const parsed = missionParamsSchema(mission.tool).safeParse(mission.params, { error: requestErrorMap });
      if (parsed.success) return;
      for (const issue of parsed.error.issues) {
        ctx.addIssue({ code: "custom", message: issue.message, path: ["params", ...issue.path] });
      }
    }),
    runAt: isoDateTimeSchema
      .optional()
      .refine((value) => !(Date.parse(value ?? "") > Date.now() + MISSION_MAX_DELAY_DAYS * 86_400_000), {
        error: `must be at most ${MISSION_MAX_DELAY_DAYS} days ahead`,
      })
      .meta({ description: "When to run the mission (ISO-8601 UTC); now when left out or in the past." }),
  })
  .meta({ id: "DispatchRequest" });

/** Why a mission failed: the error code and message its tool answered with. */
export const missionErrorSchema = z
  .object({
    code: z.string().meta({ description: "The error code the tool failed with, as its route would answer." }),
    message: z.string(),
  })
  .meta({ id: "MissionError" });

/** A mission as the queue keeps it: its tool, parameters, schedule, status, attempts, and result or error. */
export const missionSchema = z
  .object({
    id: z.uuid().meta({ description: "Mission id." }),
    tokenId: tokenIdSchema,
    tool: missionToolSchema,
    params: paramsField,
    status: missionStatusSchema,
    requestedBy: addressSchema.meta({
      description: "Who queued the mission: the signed-in holder, or the payer of an anonymous call.",
    }),
    createdAt: isoDateTimeSchema,
    runAt: isoDateTimeSchema.meta({ description: "When the mission runs (or runs again, after a failed attempt)." }),
    startedAt: isoDateTimeSchema.nullable(),
    finishedAt: isoDateTimeSchema.nullable(),
    attempts: z.number().int().min(0).meta({ description: "Runs started so far (retries of upstream failures)." }),
    result: z
      .record(z.string(), z.unknown())
      .nullable()
      .meta({ description: "The tool's answer (its route's 200 body) once `done`." }),
    error: missionErrorSchema.nullable().meta({ description: "Why the mission `failed`." }),
  })
  .meta({ id: "Mission" });
/** A mission as the queue keeps it (see {@link missionSchema}). */
export type Mission = z.infer<typeof missionSchema>;

/** The answer of `POST /dispatch` (202): the queued mission and a brief. */
export const dispatchResponseSchema = z
  .object({
    generatedAt: generatedAtField,
    mission: missionSchema,
    brief: briefField,
  })
  .meta({ id: "DispatchResponse" });

/** The query of `GET /dispatch`: the agent, an optional status, and how many missions. */
export const listMissionsRequestSchema = z
  .object({
    tokenId: tokenIdSchema,
    status: missionStatusSchema.optional(),
    limit: z.number().int().min(1).max(100).default(20).meta({ description: "Most recent missions, 1 to 100." }),
  })
  .meta({ id: "ListMissionsRequest" });

/** The answer of `GET /dispatch`: the agent's missions, newest first, and counts by status. */
export const listMissionsResponseSchema = z
  .object({
    tokenId: tokenIdSchema,
    generatedAt: generatedAtField,
    counts: z
      .object({
        queued: z.number().int().min(0),
        running: z.number().int().min(0),
        done: z.number().int().min(0),
        failed: z.number().int().min(0),
      })
      .meta({ description: "The agent's missions by status (all of them, not only those listed)." }),
    missions: z.array(missionSchema).meta({ description: "Newest first." }),
    brief: briefField,
  })
  .meta({ id: "ListMissionsResponse" });

/** The route-table name of a mission tool's slug, as a type (`"drop-radar"` -> `"dropRadar"`). */
type ToolNameOfSlug<T extends MissionTool> = {
  [N in ToolName]: (typeof toolRoutes)[N]["slug"] extends T ? N : never;
}[ToolName];
/** The request a mission's params are, for tool `T`: the tool's own fields without `tokenId`. */
export type MissionParams<T extends MissionTool> = Omit<
  z.input<(typeof toolRoutes)[ToolNameOfSlug<T>]["request"]>,
  "tokenId"
>;
/** What a mission of tool `T` keeps as its result: the tool's own answer. */
export type MissionResult<T extends MissionTool> = z.output<(typeof toolRoutes)[ToolNameOfSlug<T>]["response"]>;

/** A mission to queue, its params typed by its tool: a field the tool does not take does not compile. */
export type MissionSpec = { [T in MissionTool]: { tool: T; params?: MissionParams<T> } }[MissionTool];

/** A mission as listed, its params and result typed by its tool (narrow on `tool`). */
export type TypedMission = {
  [T in MissionTool]: Omit<Mission, "tool" | "params" | "result"> & {
    tool: T;
    params: MissionParams<T>;
    result: MissionResult<T> | null;
  };
}[MissionTool];
