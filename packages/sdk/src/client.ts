import { type Health, healthSchema } from "@agent-tools/schema";
import { NetworkError, UnexpectedResponseError } from "./errors.js";

export interface AgentToolsClientOptions {
  /** Origin of the service, for example `http://127.0.0.1:8402`. */
  baseUrl: string;
  /** A fetch implementation; defaults to the global one. */
  fetch?: typeof globalThis.fetch;
}

export interface AgentToolsClient {
  /** `GET /healthz`: whether the service is up. */
  health(): Promise<Health>;
}

/** Creates a client of the Agent Tools API. */
export function createAgentToolsClient(options: AgentToolsClientOptions): AgentToolsClient {
  const baseUrl = options.baseUrl.replace(/\/+$/, "");
  const fetchImpl = options.fetch ?? globalThis.fetch;

  async function getJson(path: string): Promise<{ status: number; body: unknown }> {
    let res: Response;
    try {
      res = await fetchImpl(`${baseUrl}${path}`, { headers: { accept: "application/json" } });
    } catch (error) {
      throw new NetworkError(`Could not reach ${baseUrl}: ${(error as Error).message}`, { cause: error });
    }
    const text = await res.text();
    let body: unknown;
    try {
      body = text ? JSON.parse(text) : undefined;
    } catch {
      throw new UnexpectedResponseError(
        `${path} answered ${res.status} with a body that is not JSON`,
        res.status,
        text,
      );
    }
    return { status: res.status, body };
  }

  return {
    async health() {
      const { status, body } = await getJson("/healthz");
      const parsed = healthSchema.safeParse(body);
      if (status !== 200 || !parsed.success) {
        throw new UnexpectedResponseError(`/healthz answered ${status} with an unexpected body`, status, body);
      }
      return parsed.data;
    },
  };
}
