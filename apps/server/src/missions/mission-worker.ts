import { hostname } from "node:os";
import { type Clearance, clearanceMeets, missionToolName, paidRoutes } from "@agent-tools/schema";
import type { Logger } from "pino";
import { type Address, ContractFunctionExecutionError, getAddress, BaseError as ViemError } from "viem";
import type { CollectionIndex, IndexedToken } from "../chain/collection-index.js";
import { ServiceError } from "../errors/service-error.js";
import type { ClaimedMission, MissionError, MissionQueue } from "../store/mission-queue.js";
import { runTool } from "../tools/run-tool.js";
import type { Tool, ToolSet } from "../tools/types.js";

export interface MissionWorkerOptions {
  queue: MissionQueue;
  tools: ToolSet;
  collection: CollectionIndex;
  logger: Logger;
  now?: () => Date;
  /** How often the queue is polled when idle (default 1 s). */
  pollMs?: number;
  /** Missions run at once by this instance (default 4). */
  concurrency?: number;
  /** Attempts before a mission failing on upstream trouble is marked failed (default 4). */
  maxAttempts?: number;
  /** Wait before the first retry; doubled for each one after (default 30 s). */
  retryBaseMs?: number;
  /**
   * How long a claim holds without word from its worker before another instance may take the mission over (default
   * 5 min). The worker renews it every third of that while the mission runs, so only a mission whose worker died
   * (or lost the database for that long) runs again elsewhere.
   */
  leaseMs?: number;
  /** This instance's name in the queue (default host:pid:random). */
  instance?: string;
}

/** How one attempt at a mission ended here: its answer kept, a retry scheduled, or failed for good. */
export interface MissionOutcome {
  id: string;
  /** The mission's tool, by its slug. */
  tool: string;
  attempt: number;
  outcome: "done" | "retry" | "failed";
}

export interface MissionWorker {
  readonly instance: string;
  /** Calls `listener` after each attempt this worker finishes (and has recorded); returns the unsubscribe. */
  onOutcome(listener: (outcome: MissionOutcome) => void): () => void;
  start(): void;
  /**
   * Looks for due missions now instead of at the next poll. Resolves when a pass that began after this call has
   * claimed what it could (the missions it claimed may still be running).
   */
  wake(): Promise<void>;
  /** Stops claiming and waits for the missions running here to finish. */
  stop(): Promise<void>;
}

/** Upstream trouble (and surprises) may pass: retried. A refusal of the input will not: failed at once. */
function isRetryable(error: unknown): boolean {
  return !(error instanceof ServiceError) || error.status >= 500;
}

/**
 * What the mission's owner reads of a failure: the service's own code and sentence. Anything else (library text,
 * RPC URLs, call arguments) stays in the log.
 */
function describe(error: unknown): MissionError {
  if (error instanceof ServiceError) return { code: error.code, message: error.message };
  if (error instanceof ViemError && !(error instanceof ContractFunctionExecutionError)) {
    return { code: "upstream_unavailable", message: "The chain could not be read when the mission ran." };
  }
  return { code: "internal_error", message: "The mission failed on an internal error; it has been logged." };
}

/**
 * A mission queued signed in runs for that holder only while they still hold the token, at the clearance the tool
 * needs: after a sale it fails instead of acting for the previous owner (docs/decisions.md, "Missions").
 */
function holderStillQualifies(mission: ClaimedMission, token: IndexedToken, needed: Clearance): void {
  const caller = getAddress(mission.caller as string);
  if (token.owner !== caller) {
    throw new ServiceError(
      "not_token_owner",
      `Token ${mission.tokenId} changed hands after this mission was queued by ${caller}; it runs only for the ` +
        "holder who queued it.",
      [{ field: "tokenId", message: "no longer held by the holder who queued the mission" }],
    );
  }
  if (!clearanceMeets(token.clearance, needed)) {
    throw new ServiceError(
      "insufficient_clearance",
      `${mission.tool} needs ${needed} clearance; token ${mission.tokenId} now has ${token.clearance}.`,
      [{ field: "tokenId", message: `clearance ${token.clearance} is below ${needed}`, requiredClearance: needed }],
    );
  }
}

/**
 * Runs due missions of the queue: claims them (never more than `concurrency` at a time), runs each mission's tool
 * as its route would, and keeps the answer or the error; upstream failures are retried with exponential backoff.
 */
export function createMissionWorker(options: MissionWorkerOptions): MissionWorker {
  const { queue, tools, collection, logger } = options;
  const now = options.now ?? (() => new Date());
  const pollMs = options.pollMs ?? 1000;
  const concurrency = options.concurrency ?? 4;
  const maxAttempts = options.maxAttempts ?? 4;
  const retryBaseMs = options.retryBaseMs ?? 30_000;
  const leaseMs = options.leaseMs ?? 5 * 60_000;
  const instance =
    options.instance ?? `${hostname()}:${process.pid}:${Math.floor(Math.random() * 0xffffff).toString(16)}`;
  const running = new Set<Promise<void>>();
  const listeners = new Set<(outcome: MissionOutcome) => void>();
  const report = (outcome: MissionOutcome) => {
    for (const listener of listeners) listener(outcome);
  };
  let timer: NodeJS.Timeout | undefined;
  let stopped = true;
  let again = false;

  async function runOne(mission: ClaimedMission): Promise<void> {
    const log = logger.child({ mission: mission.id, tool: mission.tool, attempt: mission.attempt });
    const name = missionToolName(mission.tool);
    const tool = name ? (tools[name] as Tool<never> | undefined) : undefined;
    log.info("mission started");
    const renewal = keepLease(mission, log);
    try {
      if (!name || !tool) throw new ServiceError("not_implemented", `The ${mission.tool} tool is not available.`);
      await collection.fresh();
      const token = collection.token(mission.tokenId);
      if (!token) throw new ServiceError("token_not_found", `Token ${mission.tokenId} does not exist.`);
      const route = paidRoutes[name];
      if (mission.caller) holderStillQualifies(mission, token, route.minimumClearance);
      const params = route.request.parse({ ...mission.params, tokenId: mission.tokenId });
      const answer = await runTool(route, tool, params as { tokenId: number }, {
        ...(mission.caller ? { caller: mission.caller as Address } : {}),
        token,
        collection,
        now,
      });
      if (await queue.complete(mission.id, instance, mission.attempt, answer)) {
        log.info("mission done");
        report({ id: mission.id, tool: mission.tool, attempt: mission.attempt, outcome: "done" });
      } else log.warn("mission finished after its claim was taken over; its answer was not kept");
    } catch (error) {
      const reason = describe(error);
      if (isRetryable(error) && mission.attempt < maxAttempts) {
        const delay = retryBaseMs * 2 ** (mission.attempt - 1);
        await queue.retry(mission.id, instance, mission.attempt, reason, new Date(now().getTime() + delay));
        log.warn({ err: error, retryInMs: delay }, "mission attempt failed; retrying");
        report({ id: mission.id, tool: mission.tool, attempt: mission.attempt, outcome: "retry" });
      } else {
        await queue.fail(mission.id, instance, mission.attempt, reason);
        log.warn({ err: error }, "mission failed");
        report({ id: mission.id, tool: mission.tool, attempt: mission.attempt, outcome: "failed" });
      }
    } finally {
      clearInterval(renewal);
    }
  }

  /** Renews the claim on `mission` every third of the lease until cleared (docs/decisions.md, "State, several instances"). */
  function keepLease(mission: ClaimedMission, log: Logger): NodeJS.Timeout {
    const timer = setInterval(() => {
      queue.renew(mission.id, instance, mission.attempt, leaseMs).then(
        (held) => {
          if (!held) {
            clearInterval(timer);
            log.warn("mission's claim was taken over while it ran; its answer will not be kept");
          }
        },
        (error) => log.warn({ err: error }, "could not renew the mission's lease"),
      );
    }, leaseMs / 3);
    timer.unref();
    return timer;
  }

  /** The pass claiming due missions, while one runs: a call during it makes it go round once more. */
  let pass: Promise<void> | undefined;

  function poll(): Promise<void> {
    if (stopped) return Promise.resolve();
    if (pass) {
      again = true;
      return pass;
    }
    const current = (async () => {
      try {
        do {
          again = false;
          const free = concurrency - running.size;
          if (free <= 0) break;
          const claimed = await queue.claimDue(instance, free, leaseMs);
          for (const mission of claimed) {
            const run = runOne(mission)
              .catch((error) => logger.error({ err: error, mission: mission.id }, "mission bookkeeping failed"))
              .finally(() => {
                running.delete(run);
                // A slot is free: look for more due work at once.
                if (!stopped) void poll();
              });
            running.add(run);
          }
          if (claimed.length === free) again = true;
        } while (again && !stopped);
      } catch (error) {
        logger.error({ err: error }, "could not claim missions");
      }
    })();
    // Cleared once settled (a pass with no free slot settles before this line is reached). A call that came as
    // the pass was ending gets the pass it asked for.
    pass = current.finally(() => {
      pass = undefined;
      if (again && !stopped) return poll();
    });
    return pass;
  }

  function schedule(): void {
    timer = setTimeout(() => {
      void poll().finally(() => {
        if (!stopped) schedule();
      });
    }, pollMs);
    timer.unref();
  }

  return {
    instance,
    onOutcome(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    start() {
      // Concurrency 0: an instance that serves the API and leaves the missions to others.
      if (!stopped || concurrency === 0) return;
      stopped = false;
      void poll();
      schedule();
    },
    wake() {
      return poll();
    },
    async stop() {
      stopped = true;
      clearTimeout(timer);
      await Promise.allSettled([...running]);
    },
  };
}
