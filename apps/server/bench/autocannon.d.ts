/** The part of autocannon 8's API the bench uses (the package ships no types). */
declare module "autocannon" {
  import type { EventEmitter } from "node:events";

  interface RequestData {
    method?: string;
    path?: string;
    headers?: Record<string, string>;
    body?: string | Buffer;
  }

  interface Request extends RequestData {
    /** Called before each request is built; returns the request to send. */
    setupRequest?: (request: RequestData & Record<string, unknown>, context: object) => RequestData;
    onResponse?: (status: number, body: string, context: object, headers: Record<string, string | string[]>) => void;
  }

  interface Options {
    url: string;
    connections?: number;
    duration?: number;
    amount?: number;
    /** Requests per second over all connections. */
    overallRate?: number;
    method?: string;
    headers?: Record<string, string>;
    body?: string;
    requests?: Request[];
    timeout?: number;
  }

  interface Result {
    errors: number;
    timeouts: number;
    statusCodeStats: Record<string, { count: number }>;
  }

  interface Instance extends EventEmitter {
    on(
      event: "response",
      listener: (client: unknown, statusCode: number, resBytes: number, responseTimeMs: number) => void,
    ): this;
  }

  function autocannon(options: Options, callback: (error: Error | null, result: Result) => void): Instance;
  export default autocannon;
}
