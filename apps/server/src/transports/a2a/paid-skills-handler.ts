/**
 * `@a2a-js/sdk`'s request handler, with what paid skills need on top: every message runs on an event bus of its own
 * that nothing keeps once it is answered, a message must activate x402's A2A extension in a version the card declares,
 * and a cancel is answered at once from the store (docs/decisions.md, "A2A tasks" and "A2A extension versions";
 * docs/threat-model.md, "A2A").
 */
import {
  type AgentCard,
  type CancelTaskRequest,
  type Message,
  type SendMessageRequest,
  type Task,
  TaskState,
  taskStateToJSON,
} from "@a2a-js/sdk";
import {
  ExtensionSupportRequiredError,
  RequestMalformedError,
  TaskNotCancelableError,
  TaskNotFoundError,
} from "@a2a-js/sdk/errors";
import {
  type AgentExecutor,
  DefaultExecutionEventBus,
  DefaultRequestHandler,
  type ExecutionEventBusManager,
  type ServerCallContext,
} from "@a2a-js/sdk/server";
import { activatedX402A2aVersion, X402_A2A_EXTENSION_URIS } from "@agent-tools/schema";
import type { A2aTaskStore } from "../../store/a2a-tasks.js";
import { agentMessage, textPart } from "./messages.js";

export interface PaidSkillsHandlerDeps {
  card: AgentCard;
  tasks: A2aTaskStore;
  executor: AgentExecutor;
  now: () => Date;
}

/** Why a task in `state` cannot be canceled, in words. */
function notCancelable(id: string, state: TaskState | undefined): string {
  const why =
    state === TaskState.TASK_STATE_WORKING
      ? "its paid call is running; it finishes and is paid, and the task then holds its answer"
      : `it has ended (${state === undefined ? "no state" : taskStateToJSON(state)}) and stays as it ended`;
  return `Task ${id} cannot be canceled: ${why}.`;
}

/** A fresh bus for every message, kept nowhere: found by no task id, and gone with its message. */
const busPerMessage: ExecutionEventBusManager = {
  createOrGetByTaskId: () => new DefaultExecutionEventBus(),
  getByTaskId: () => undefined,
  cleanupByTaskId: () => {},
};

export class PaidSkillsRequestHandler extends DefaultRequestHandler {
  private readonly tasks: A2aTaskStore;
  private readonly now: () => Date;

  constructor(deps: PaidSkillsHandlerDeps) {
    super(deps.card, deps.tasks, deps.executor, busPerMessage);
    this.tasks = deps.tasks;
    this.now = deps.now;
  }

  override async sendMessage(params: SendMessageRequest, context: ServerCallContext): Promise<Message | Task> {
    const version = activatedX402A2aVersion(context.requestedExtensions);
    if (!version) {
      throw new ExtensionSupportRequiredError(
        "Every skill is paid with x402: activate x402's A2A extension in the A2A-Extensions header, " +
          `${X402_A2A_EXTENSION_URIS["0.2"]} or ${X402_A2A_EXTENSION_URIS["0.1"]}.`,
      );
    }
    context.addActivatedExtension(X402_A2A_EXTENSION_URIS[version]);
    return super.sendMessage(params, context);
  }

  override async cancelTask(params: CancelTaskRequest, context: ServerCallContext): Promise<Task> {
    const id = params.id;
    if (!id) throw new RequestMalformedError("CancelTask needs the task's id (params.id), as SendMessage answered it.");
    const task = await this.tasks.load(id, context);
    if (!task) throw new TaskNotFoundError(`There is no task ${id} (a task waiting for payment is kept 15 minutes).`);
    const state = task.status?.state;
    if (state === TaskState.TASK_STATE_CANCELED) return task;
    if (state !== TaskState.TASK_STATE_INPUT_REQUIRED) throw new TaskNotCancelableError(notCancelable(id, state));
    const canceled: Task = {
      ...task,
      status: {
        state: TaskState.TASK_STATE_CANCELED,
        message: agentMessage(task, [textPart("Canceled while it waited for payment; nothing was charged.")]),
        timestamp: this.now().toISOString(),
      },
      metadata: {},
    };
    if (await this.tasks.replaceWaiting(canceled)) return canceled;
    // Its paying message (or another cancel) took the task between the read and the write: it stands as they left it.
    const now = await this.tasks.load(id, context);
    if (now?.status?.state === TaskState.TASK_STATE_CANCELED) return now;
    throw new TaskNotCancelableError(notCancelable(id, now?.status?.state));
  }
}
