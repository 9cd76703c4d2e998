/** Base class of every error the client throws. */
export class AgentToolsError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = new.target.name;
  }
}

/** The service could not be reached (connection refused, DNS, reset). */
export class NetworkError extends AgentToolsError {}

/** The service answered with something the contract does not allow. */
export class UnexpectedResponseError extends AgentToolsError {
  constructor(
    message: string,
    readonly status: number,
    readonly body: unknown,
  ) {
    super(message);
  }
}
