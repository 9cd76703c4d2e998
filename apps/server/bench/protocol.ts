/** Messages between bench/run.ts and the servers' process (bench/host.ts). */

export interface HostInfo {
  type: "ready";
  urls: { ours: string; bare: string; reference: string };
  seedMs: number;
  l1ChainId: number;
  /** CAIP-2 payment network (the devnet's L2). */
  network: `${string}:${string}`;
  asset: string;
  maxTimeoutSeconds: number;
  /** The origin sign-in messages must name. */
  publicUrl: string;
  /** The devnet accounts' well-known keys (0 = operator, 1..9 = holders). */
  privateKeys: `0x${string}`[];
}

/** What the host saw of the payment chain during the run, sent back as it closes. */
export interface HostReport {
  type: "report";
  blocks: number;
  /** Latest block time minus the wall clock at the end (positive: the chain runs ahead). */
  chainTimeAheadSeconds: number;
  chainTimeAdvancedSeconds: number;
}

export interface HostFailed {
  type: "failed";
  message: string;
}

/** CPU time the servers' process has used so far (all its threads), in microseconds. */
export interface HostCpu {
  type: "cpu";
  micros: number;
}

export type FromHost = HostInfo | HostReport | HostFailed | HostCpu;

export type ToHost = { type: "close" } | { type: "cpu" };
