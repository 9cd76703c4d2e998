import { type ListTasksResponse, Task, TaskState } from "@a2a-js/sdk";
import type { TaskStore } from "@a2a-js/sdk/server";
import type { Database } from "./database.js";

/** How long a task waiting for payment is kept after its last change: an offer not taken is not kept for long. */
export const A2A_WAITING_TASK_RETENTION_MS = 15 * 60 * 1000;
/** How long any other task is kept after its last change. */
export const A2A_TASK_RETENTION_MS = 24 * 60 * 60 * 1000;

/** The A2A endpoint's tasks in the shared store (`@a2a-js/sdk`'s `TaskStore`), plus their sweep. */
export interface A2aTaskStore extends TaskStore {
  /** Deletes the tasks past their retention; returns how many. */
  sweep(now: Date): Promise<number>;
}

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

/**
 * Tasks kept in the database, so that the message paying for a task may reach any instance. A task's id is a random
 * UUID the SDK draws: knowing it is what lets a caller read or continue the task. Listing tasks is not offered: it
 * would show every caller's tasks to anyone (docs/threat-model.md, "A2A").
 */
export function createA2aTaskStore(db: Database): A2aTaskStore {
  return {
    async save(task) {
      await db.query(
        `INSERT INTO a2a_tasks (id, task, waiting, updated_at) VALUES ($1, $2, $3, now())
         ON CONFLICT (id) DO UPDATE SET task = EXCLUDED.task, waiting = EXCLUDED.waiting, updated_at = now()`,
        [task.id, JSON.stringify(Task.toJSON(kept(task))), task.status?.state === TaskState.TASK_STATE_INPUT_REQUIRED],
      );
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
