/**
 * Group commit: writes asked for while one statement runs are sent together in the next one, so that calls answering
 * at once share a round trip (and, on PGlite, one statement's planning and commit) instead of queueing one by one.
 * The first write of a quiet moment waits for the end of the event loop's turn only (`setImmediate`), so that the
 * calls the loop serves in that turn, whose requests came in together, share it; nothing waits for a timer
 * (docs/decisions.md, "Channel charges written in groups").
 */
export interface GroupWritesOptions<Request, Result> {
  /** Writes one group; a result per request, in order. */
  write(group: Request[]): Promise<Result[]>;
  /** Requests of one key never share a group (a channel is charged once per statement). */
  keyOf(request: Request): string;
  /** Most requests in one group. */
  maxGroup: number;
}

export function groupWrites<Request, Result>(
  options: GroupWritesOptions<Request, Result>,
): (request: Request) => Promise<Result> {
  interface Waiting {
    request: Request;
    resolve: (result: Result) => void;
    reject: (error: unknown) => void;
  }
  let waiting: Waiting[] = [];
  let writing = false;

  /** The next group: the oldest request of each key, up to `maxGroup`; the rest wait for the group after. */
  function nextGroup(): Waiting[] {
    const keys = new Set<string>();
    const group: Waiting[] = [];
    const later: Waiting[] = [];
    for (const entry of waiting) {
      const key = options.keyOf(entry.request);
      if (group.length < options.maxGroup && !keys.has(key)) {
        keys.add(key);
        group.push(entry);
      } else later.push(entry);
    }
    waiting = later;
    return group;
  }

  /**
   * Writes the next group once the event loop has read what came in: a statement on PGlite runs on this thread, so
   * the requests that arrived while it ran are only read, and their writes asked, in the loop's next turn.
   */
  function writeSoon(): void {
    writing = true;
    setImmediate(() => void writeNext());
  }

  async function writeNext(): Promise<void> {
    const group = nextGroup();
    try {
      const results = await options.write(group.map((entry) => entry.request));
      for (const [i, entry] of group.entries()) entry.resolve(results[i] as Result);
    } catch (error) {
      for (const entry of group) entry.reject(error);
    }
    if (waiting.length > 0) writeSoon();
    else writing = false;
  }

  return (request) =>
    new Promise<Result>((resolve, reject) => {
      waiting.push({ request, resolve, reject });
      if (!writing) writeSoon();
    });
}
