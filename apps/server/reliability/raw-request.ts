import { Agent, request } from "node:http";

export interface RawAnswer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
  ms: number;
}

const agent = new Agent({ keepAlive: true, maxSockets: 64 });

/** Header values as HTTP can carry them: printable ASCII (anything else becomes `?`). */
function printable(value: string): string {
  return value.replace(/[^\x20-\x7e]/g, "?");
}

/**
 * One request sent as written: the path is not parsed or re-encoded (so broken percent-encoding reaches the server),
 * and the body goes out byte for byte. Resolves with the answer, or rejects when the connection fails.
 */
export function rawRequest(
  base: string,
  options: { method: string; path: string; headers?: Record<string, string>; body?: string | Uint8Array },
): Promise<RawAnswer> {
  const url = new URL(base);
  const started = performance.now();
  return new Promise((resolve, reject) => {
    const headers = Object.fromEntries(
      Object.entries(options.headers ?? {}).map(([name, value]) => [name, printable(value)]),
    );
    const req = request(
      { host: url.hostname, port: url.port, method: options.method, path: options.path, headers, agent },
      (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (chunk: Buffer) => chunks.push(chunk));
        res.on("end", () =>
          resolve({
            status: res.statusCode ?? 0,
            headers: res.headers,
            text: Buffer.concat(chunks).toString("utf8"),
            ms: performance.now() - started,
          }),
        );
        res.on("error", reject);
      },
    );
    req.on("error", reject);
    req.end(options.body);
  });
}

/** Runs `work` over `items`, `concurrency` at a time, in order of start. */
export async function eachLimit<T>(items: T[], concurrency: number, work: (item: T, index: number) => Promise<void>) {
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(concurrency, items.length) }, async () => {
      while (next < items.length) {
        const index = next++;
        await work(items[index]!, index);
      }
    }),
  );
}
