/**
 * The work a paid call's tool does, counted while it runs: the upstream clients and the chain scanner count what
 * they are asked for the call in whose async context they run, and the tools count what they examine. A metered
 * payment is charged the published formula of it (docs/api.md, "Prices by the work done").
 */
import { AsyncLocalStorage } from "node:async_hooks";
import type { CountedWork } from "@agent-tools/schema";

/** The counters of one call's work. */
export class WorkMeter implements CountedWork {
  upstreamReads = 0;
  itemsExamined = 0;
  blocksScanned = 0;

  /** The counts as they stand, a plain object. */
  counted(): CountedWork {
    return { upstreamReads: this.upstreamReads, itemsExamined: this.itemsExamined, blocksScanned: this.blocksScanned };
  }
}

const current = new AsyncLocalStorage<WorkMeter>();

/** Runs `work` with `meter` counting what is done for it, however deep the calls go. */
export function meterWork<T>(meter: WorkMeter, work: () => Promise<T>): Promise<T> {
  return current.run(meter, work);
}

/** Counts `n` of `kind` for the call being run, if one is: code outside a paid call counts nothing. */
export function countWork(kind: keyof CountedWork, n = 1): void {
  const meter = current.getStore();
  if (meter && Number.isFinite(n) && n > 0) meter[kind] += Math.trunc(n);
}
