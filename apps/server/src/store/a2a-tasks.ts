import { type ListTasksResponse, Task, TaskState, taskStateToJSON } from "@a2a-js/sdk";
import type { TaskStore } from "@a2a-js/sdk/server";
import type { Database } from "./database.js";

/** How long a task waiting for payment is kept after its last change: an offer not taken is not kept for long. */
export const A2A_WAITING_TASK_RETENTION_MS = 15 * 60 * 1000;
/** How long any other task is kept after its last change. */
export const A2A_TASK_RETENTION_MS = 24 * 60 * 60 * 1000;

/**
 * Task metadata key of a claim: the id a message drew when it claimed a task waiting for payment
 * ({@link A2aTaskStore.replaceWaiting}). A save of a claimed task goes through only with the same claim.
 */
export const A2A_CLAIM_META = "agent-tools.claim";

/** The A2A endpoint's tasks in the shared store (`@a2a-js/sdk`'s `TaskStore`), plus their claims and sweep. */
export interface A2aTaskStore extends TaskStore {
  /**
   * Writes `task` in place of the stored task if that one still waits for payment, and only then: false when it
   * was paid, declined, canceled or swept in the meantime, on any instance. How a paying message and a cancel each
   * take a waiting task once (docs/decisions.md, "A2A tasks"). A claiming message puts its claim in the task's
   * metadata ({@link A2A_CLAIM_META}); later saves of the task must carry it.
   */
  replaceWaiting(task: Task): Promise<boolean>;
  /** Deletes the tasks past their retention; returns how many. */
  sweep(now: Date): Promise<number>;
}

/** The states a task never leaves (A2A 1.0): a save does not change a task in one of them. */
const FINAL_STATES = [
  TaskState.TASK_STATE_COMPLETED,
  TaskState.TASK_STATE_FAILED,
  TaskState.TASK_STATE_CANCELED,
  TaskState.TASK_STATE_REJECTED,
]
  .map((state) => `'${taskStateToJSON(state)}'`)
  .join(", ");

/**
 * What is kept of a task. A completed task keeps its answer and receipt (it was paid for); any other keeps its state,
 * and a task waiting for payment the skill request it was opened with, which its paying message runs. No history is
 * kept: the executor reads none, and an unpaid message is then a row of a few hundred bytes, not the message itself
 * (docs/threat-model.md, "A2A").
 */
function kept(task: Task): Task {
  const state = task.status?.state;
  const status = task.status
    ? { ...task.status, ...(state === TaskState.TASK_STATE_COMPLETED ? {} : { message: undefined }) }
    : undefined;
  return {
    ...task,
    status,
    history: [],
    artifacts: state === TaskState.TASK_STATE_COMPLETED ? task.artifacts : [],
    metadata: state === TaskState.TASK_STATE_INPUT_REQUIRED ? task.metadata : {},
  };
}

/** The row of a task: its kept JSON, whether it waits for payment, and the claim it was written under. */
function rowOf(task: Task): [string, string, boolean, string | null] {
  const claim = task.metadata?.[A2A_CLAIM_META];
  return [
    task.id,
    JSON.stringify(Task.toJSON(kept(task))),
    task.status?.state === TaskState.TASK_STATE_INPUT_REQUIRED,
    typeof claim === "string" ? claim : null,
  ];
}

/**
 * Tasks kept in the database, so that the message paying for a task may reach any instance. A task's id is a random
 * UUID the SDK draws: knowing it is what lets a caller read or continue the task. Listing tasks is not offered: it
 * would show every caller's tasks to anyone (docs/threat-model.md, "A2A").
 */
export function createA2aTaskStore(db: Database): A2aTaskStore {
  return {
    async save(task) {
      // A task in a final state stays as it ended, and a claimed task is written only under its claim: a message
      // that loaded the task before it was claimed or canceled does not put it back (docs/decisions.md, "A2A tasks").
      await db.query(
        `INSERT INTO a2a_tasks (id, task, waiting, claim, updated_at) VALUES ($1, $2, $3, $4, now())
         ON CONFLICT (id) DO UPDATE SET task = EXCLUDED.task, waiting = EXCLUDED.waiting, claim = EXCLUDED.claim,
           updated_at = now()
         WHERE a2a_tasks.task->'status'->>'state' NOT IN (${FINAL_STATES})
           AND (a2a_tasks.claim IS NULL OR a2a_tasks.claim = EXCLUDED.claim)`,
        rowOf(task),
      );
    },
    async replaceWaiting(task) {
      const rows = await db.query(
        `UPDATE a2a_tasks SET task = $2, waiting = $3, claim = $4, updated_at = now()
         WHERE id = $1 AND waiting RETURNING id`,
        rowOf(task),
      );
      return rows.length === 1;
    },
    async load(taskId) {
      const [row] = await db.query<{ task: unknown }>("SELECT task FROM a2a_tasks WHERE id = $1", [taskId]);
      return row ? Task.fromJSON(typeof row.task === "string" ? JSON.parse(row.task) : row.task) : undefined;
    },
    async list(): Promise<ListTasksResponse> {
      return { tasks: [], nextPageToken: "", pageSize: 0, totalSize: 0 };
    },
    async sweep(now) {
      const rows = await db.query(
        "DELETE FROM a2a_tasks WHERE updated_at < $1 OR (waiting AND updated_at < $2) RETURNING id",
        [new Date(now.getTime() - A2A_TASK_RETENTION_MS), new Date(now.getTime() - A2A_WAITING_TASK_RETENTION_MS)],
      );
      return rows.length;
    },
  };
}
