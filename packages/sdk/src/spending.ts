/**
 * What a client has spent, for its limits (`payment-policy.ts`): its own calls' total (the `budget`), and a log of
 * dated charges read over a rolling day (`maxPerDay`). The log is pluggable so that the day's spending outlives the
 * process: memory by default, a file of the caller's own for the command-line tool and its MCP bridge.
 *
 * A call's price is held from the moment it is decided until its answer: two calls decided at once both count
 * against the limits, so neither can slip past one the other already used. Decisions and settlements take turns
 * (one queue per client), so a read of the log never misses a charge settled meanwhile.
 */

/** One charge: when it was paid and what it cost, in units of the USD stablecoin (6 decimals) as decimal text. */
export interface SpendRecord {
  /** ISO-8601 time of the answer that charged it. */
  at: string;
  units: string;
}

/** Where a client keeps its dated charges, for the limit per rolling day. */
export interface SpendLog {
  /** The charges made at or after `since`. */
  since(since: Date): Promise<SpendRecord[]>;
  /** Keeps a charge; a log may drop charges older than a day. */
  add(record: SpendRecord): Promise<void>;
}

/** A {@link SpendLog} in this process's memory, keeping a day of charges. */
export function memorySpendLog(): SpendLog {
  let records: SpendRecord[] = [];
  return {
    since: async (since) => records.filter((record) => Date.parse(record.at) >= since.getTime()),
    async add(record) {
      const dayAgo = Date.parse(record.at) - DAY_MS;
      records = [...records.filter((kept) => Date.parse(kept.at) >= dayAgo), record];
    },
  };
}

/** The rolling day the limit `maxPerDay` is counted over. */
export const DAY_MS = 24 * 60 * 60 * 1000;

/** A client's spending: settled, held for calls under way, and the log of dated charges. */
export interface Spending {
  /** What this client's paid calls cost, all together (counted against the budget). */
  spentUnits: bigint;
  /** The prices of calls decided and not answered yet. */
  heldUnits: bigint;
  /** Where charges are logged for `maxPerDay`; none when nothing would read it. */
  readonly log: SpendLog | undefined;
  readonly now: () => Date;
  /** Decisions and settlements, one at a time. */
  turn: Promise<unknown>;
}

/** A client's spending, from nothing, logging its charges in `log` when it has one. */
export function createSpending(log?: SpendLog, now: () => Date = () => new Date()): Spending {
  return { spentUnits: 0n, heldUnits: 0n, log, now, turn: Promise.resolve() };
}

/**
 * The spending of a client with these options: its charges logged in `spendLog` when it names one (a log the caller
 * keeps may serve a limit set later), else in memory when it sets `maxPerDay`, else nowhere.
 */
export function spendingFor(options: { spendLog?: SpendLog | undefined; maxPerDay?: unknown }): Spending {
  return createSpending(options.spendLog ?? (options.maxPerDay !== undefined ? memorySpendLog() : undefined));
}

/** What counts against the limits when a call is decided: held prices included. */
export interface SpentSoFar {
  /** This client's calls (the budget's count). */
  spentUnits: bigint;
  /** All charges of the last rolling day in the log (the day's count). */
  spentTodayUnits: bigint;
}

/** A call's price, held while it runs: settle it with what the call cost, or release it when nothing was paid. */
export interface SpendHold {
  /** Counts the charge (the budget's tally and the log) and lets the hold go; once. */
  settle(chargedUnits: bigint): Promise<void>;
  /** Lets the hold go with nothing charged; does nothing after `settle`. */
  release(): void;
}

/** Runs `work` when the client's earlier decisions and settlements are done. */
function inTurn<T>(spending: Spending, work: () => Promise<T>): Promise<T> {
  const run = spending.turn.then(work);
  spending.turn = run.catch(() => undefined);
  return run;
}

/**
 * Decides a call on what is spent so far, and holds the price `decide` settles on (0 or undefined holds nothing),
 * in one turn of the client's queue. The log is read only when the day is counted (`countDay`, for `maxPerDay`).
 */
export function decideAndHold<T>(
  spending: Spending,
  decide: (spent: SpentSoFar) => { decision: T; holdUnits: bigint | undefined },
  { countDay = true }: { countDay?: boolean } = {},
): Promise<{ decision: T; hold: SpendHold }> {
  return inTurn(spending, async () => {
    const since = new Date(spending.now().getTime() - DAY_MS);
    const records = countDay && spending.log ? await spending.log.since(since) : [];
    const logged = records.reduce((sum, record) => sum + BigInt(record.units), 0n);
    const { decision, holdUnits = 0n } = decide({
      spentUnits: spending.spentUnits + spending.heldUnits,
      spentTodayUnits: logged + spending.heldUnits,
    });
    return { decision, hold: holdSpend(spending, holdUnits) };
  });
}

function holdSpend(spending: Spending, units: bigint): SpendHold {
  spending.heldUnits += units;
  let open = true;
  const letGo = () => {
    if (!open) return false;
    open = false;
    spending.heldUnits -= units;
    return true;
  };
  return {
    settle: (chargedUnits) =>
      inTurn(spending, async () => {
        if (!open) return;
        if (chargedUnits > 0n) await spending.log?.add({ at: spending.now().toISOString(), units: `${chargedUnits}` });
        if (letGo()) spending.spentUnits += chargedUnits;
      }),
    release: () => void letGo(),
  };
}
