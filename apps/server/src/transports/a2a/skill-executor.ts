/**
 * The paid tools as A2A skills: an `AgentExecutor` of `@a2a-js/sdk` that runs each message through the same paid call
 * as the HTTP routes and MCP, with x402's A2A extension as the payment's transport (coinbase/x402
 * `specs/transports-v2/a2a.md`). A task waits for payment (`input-required`), completes with the answer and its
 * receipt, fails on a refused payment, or is rejected (docs/architecture.md, "A2A";
 * docs/api.md, "A2A: the tools as skills of an agent").
 */

import { type Message, type Task, TaskState } from "@a2a-js/sdk";
import { AgentEvent, type AgentExecutor, type ExecutionEventBus, type RequestContext } from "@a2a-js/sdk/server";
import {
  A2A_PAYMENT_META,
  A2A_PAYMENT_STATUS,
  A2A_SIGN_IN_META,
  type A2aSkillRequest,
  a2aSkillRequestSchema,
  type PaymentRequired,
  paidRouteNameOf,
  safeParseRequest,
} from "@agent-tools/schema";
import type { SettleResponse } from "@x402/core/types";
import type { Logger } from "pino";
import type { CollectionIndex } from "../../chain/collection-index.js";
import { errorBody, ServiceError, toServiceError, validationError } from "../../errors/service-error.js";
import type { PaidCalls } from "../../paid-call/paid-call-types.js";
import { servePaidCall } from "../../paid-call/serve-paid-call.js";
import { A2A_CLAIM_META, type A2aTaskStore } from "../../store/a2a-tasks.js";
import type { ToolSet } from "../../tools/types.js";
import { agentMessage, dataPart, textPart } from "./messages.js";

export interface SkillExecutorDeps {
  paidCalls: PaidCalls;
  /** The tasks: a message that pays for a waiting task, or declines it, claims it there first. */
  tasks: A2aTaskStore;
  tools: ToolSet;
  collection: CollectionIndex;
  now: () => Date;
  logger: Logger;
}

/** Task metadata key of the skill request a task was opened with: the message that pays for it need not repeat it. */
const SKILL_META = "agent-tools.skill";

/** What a message on a task whose paid call runs is told. */
const RUNNING =
  "A paid call is running on this task: this message changed nothing, and nothing was charged. Read the task " +
  "(GetTask) for its answer.";

/** The skill request a message carries in its first data part. */
function skillRequestOf(message: Message): unknown {
  for (const part of message.parts ?? []) if (part.content?.$case === "data") return part.content.value;
  return undefined;
}

/** How a task ends or waits: its state, the agent's message (text and data) and that message's x402 metadata. */
interface Outcome {
  state: TaskState;
  text: string;
  data?: unknown;
  metadata?: Record<string, unknown>;
  /** The paid answer, as the task's artifact. */
  answer?: unknown;
}

function errorOutcome(error: unknown, logger: Logger): Outcome {
  if (!(error instanceof ServiceError)) logger.error({ err: error }, "A2A skill failed");
  const known = toServiceError(error, "The skill failed.");
  const body = errorBody(known);
  // A request no payment can make right is rejected; a failure on our side or upstream fails the task.
  return {
    state: known.status < 500 ? TaskState.TASK_STATE_REJECTED : TaskState.TASK_STATE_FAILED,
    text: known.message,
    data: body,
  };
}

function paymentRequiredOutcome(required: PaymentRequired, payment: unknown, reason?: string): Outcome {
  if (payment === undefined) {
    return {
      state: TaskState.TASK_STATE_INPUT_REQUIRED,
      text: required.error ?? "Payment required.",
      metadata: {
        [A2A_PAYMENT_META.status]: A2A_PAYMENT_STATUS.required,
        [A2A_PAYMENT_META.required]: required,
      },
    };
  }
  return {
    state: TaskState.TASK_STATE_FAILED,
    text: required.error ?? "The payment was refused.",
    metadata: {
      [A2A_PAYMENT_META.status]: A2A_PAYMENT_STATUS.failed,
      [A2A_PAYMENT_META.error]: reason ?? "invalid_payment",
      [A2A_PAYMENT_META.required]: required,
      [A2A_PAYMENT_META.receipts]: [
        {
          success: false,
          errorReason: reason ?? "invalid_payment",
          transaction: "",
          network: required.accepts[0]?.network ?? "",
        },
      ],
    },
  };
}

function paidOutcome(answer: unknown, settlement: SettleResponse): Outcome {
  const brief = (answer as { brief?: unknown }).brief;
  return {
    state: TaskState.TASK_STATE_COMPLETED,
    text: typeof brief === "string" ? brief : "Done.",
    answer,
    metadata: {
      [A2A_PAYMENT_META.status]: A2A_PAYMENT_STATUS.completed,
      [A2A_PAYMENT_META.receipts]: [settlement],
    },
  };
}

export function createSkillExecutor(deps: SkillExecutorDeps): AgentExecutor {
  /** The outcome of a message asking for `ask`, or carrying a skill request that failed its schema. */
  async function outcomeOf(context: RequestContext, ask: A2aSkillRequest | ServiceError): Promise<Outcome> {
    const meta = context.userMessage.metadata ?? {};
    if (meta[A2A_PAYMENT_META.status] === A2A_PAYMENT_STATUS.rejected) {
      return { state: TaskState.TASK_STATE_CANCELED, text: "The payment was declined; nothing was charged." };
    }
    if (ask instanceof ServiceError) throw ask;
    const routeName = paidRouteNameOf(ask.skill);
    if (!routeName) {
      throw new ServiceError("unknown_tool", `There is no skill named ${ask.skill}; the agent card lists them.`, [
        { field: "skill", message: "unknown skill" },
      ]);
    }
    const payment = meta[A2A_PAYMENT_META.payload];
    const signIn = meta[A2A_SIGN_IN_META];
    const result = await servePaidCall(deps, routeName, {
      input: ask.input,
      inputFrom: "body",
      ...(signIn !== undefined ? { signIn } : {}),
      ...(payment !== undefined ? { payment: payment as Record<string, unknown> } : {}),
      method: "A2A",
      // The task id (a UUID the SDK draws) names the call in the ledger and the log; a message id is the client's.
      requestId: context.taskId,
    });
    if (result.kind === "answer") return paidOutcome(result.output, result.settlement);
    return paymentRequiredOutcome(result.refusal.paymentRequired, payment, result.refusal.reason);
  }

  /** The skill request of a message that opens a task: its data part, read by the skill request's schema. */
  function askOf(message: Message): A2aSkillRequest | ServiceError {
    const value = skillRequestOf(message);
    if (value === undefined) {
      return new ServiceError(
        "invalid_request",
        'The message carries no skill request: send a data part holding {"skill": <a skill id of the agent card>, ' +
          '"input": <that skill\'s input>}, for example {"skill": "intel", "input": {"tokenId": 1}}.',
        [{ field: "message.parts", message: 'needs a data part {"skill", "input"}' }],
      );
    }
    const parsed = safeParseRequest(a2aSkillRequestSchema, value);
    return parsed.success ? parsed.data : validationError(parsed.error, "skill request");
  }

  /** The task as it stands, answered to a message that changed nothing, with a word on why. */
  function asItStands(task: Task, why: string): Task {
    return { ...task, status: { ...task.status!, message: agentMessage(task, [textPart(why)]) } };
  }

  return {
    async execute(context: RequestContext, bus: ExecutionEventBus) {
      const logger = deps.logger.child({ task: context.taskId });
      const answer = (task: Task) => {
        bus.publish(AgentEvent.task(task));
        bus.finished();
      };
      // The SDK refuses a message on an ended task; one on a task whose paid call runs gets the task as it stands.
      const stored = context.task;
      if (stored && stored.status?.state !== TaskState.TASK_STATE_INPUT_REQUIRED) {
        return answer(asItStands(stored, RUNNING));
      }
      // A message that pays for a waiting task, or declines it, claims the task first: once, whichever instance it
      // reaches, and never after a cancel (store/a2a-tasks.ts; docs/decisions.md, "A2A tasks").
      const meta = context.userMessage.metadata ?? {};
      const claims =
        meta[A2A_PAYMENT_META.payload] !== undefined || meta[A2A_PAYMENT_META.status] === A2A_PAYMENT_STATUS.rejected;
      const claim = stored && claims ? crypto.randomUUID() : undefined;
      // A message on a task waiting for payment pays for the skill the task was opened with.
      const opened = stored?.metadata?.[SKILL_META] as A2aSkillRequest | undefined;
      const ask = opened ?? askOf(context.userMessage);
      let outcome: Outcome;
      try {
        if (stored && claim) {
          const working: Task = {
            ...stored,
            status: { state: TaskState.TASK_STATE_WORKING, message: undefined, timestamp: deps.now().toISOString() },
            metadata: { ...stored.metadata, [A2A_CLAIM_META]: claim },
          };
          if (!(await deps.tasks.replaceWaiting(working))) {
            const now = (await deps.tasks.load(stored.id, context.context)) ?? stored;
            const canceled = now.status?.state === TaskState.TASK_STATE_CANCELED;
            return answer(asItStands(now, canceled ? "This task was canceled; nothing was charged." : RUNNING));
          }
        }
        outcome = await outcomeOf(context, ask);
      } catch (error) {
        outcome = errorOutcome(error, logger);
      }
      const status = agentMessage(
        { id: context.taskId, contextId: context.contextId },
        [textPart(outcome.text), ...(outcome.data !== undefined ? [dataPart(outcome.data)] : [])],
        outcome.metadata,
      );
      const skill = ask instanceof ServiceError ? undefined : ask;
      answer({
        id: context.taskId,
        contextId: context.contextId,
        status: { state: outcome.state, message: status, timestamp: deps.now().toISOString() },
        artifacts:
          outcome.answer === undefined
            ? []
            : [
                {
                  artifactId: crypto.randomUUID(),
                  name: skill?.skill ?? "answer",
                  description: "The skill's answer, as the HTTP route answers it.",
                  parts: [dataPart(outcome.answer), textPart(outcome.text)],
                  metadata: {},
                  extensions: [],
                },
              ],
        history: [...(stored?.history ?? [context.userMessage])],
        metadata: { ...(skill ? { [SKILL_META]: skill } : {}), ...(claim ? { [A2A_CLAIM_META]: claim } : {}) },
      });
    },
    async cancelTask() {
      // Never called: the request handler answers cancels from the store (paid-skills-handler.ts), and keeps no
      // event bus for a run to be canceled through.
    },
  };
}
