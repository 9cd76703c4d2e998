/**
 * The `cli` line: an operator's terminal session of 20 tool calls, the built `agent-tools` command run once per call
 * as a person runs it, against our server on a chain mining a block every second; once paying each call with `exact`,
 * once with an `upto` permit (`--no-channel --upto`), once over a payment channel kept between the runs and refunded
 * at the end. Wall time of the whole session, and the gas its transactions used, read from their receipts.
 */
import { execFile } from "node:child_process";
import { existsSync, mkdtempSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { DEVNET_ACCOUNTS } from "@agent-tools/devnet";
import { createPublicClient, http } from "viem";

const bin = fileURLToPath(new URL("../../cli/dist/bin.js", import.meta.url));

/** Tool calls in a session. */
export const SESSION_CALLS = 20;

/** One session: its wall time, the transactions it sent, and their gas. */
export interface CliSession {
  seconds: number;
  calls: number;
  transactions: number;
  gas: bigint;
}

export interface CliSessionResult {
  exact: CliSession;
  upto: CliSession;
  channel: CliSession;
}

function run(args: string[], env: Record<string, string>): Promise<{ stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    execFile(process.execPath, [bin, ...args], { env, encoding: "utf8" }, (error, stdout, stderr) => {
      if (error) reject(new Error(`agent-tools ${args.join(" ")} failed: ${stderr || error.message}`));
      else resolve({ stdout, stderr });
    });
  });
}

const TX = /tx (0x[0-9a-f]{64})/g;

/** x402's channel contract, at its canonical address (docs/channels.md). */
const CHANNEL_CONTRACT = "0x4020074e9df2ce1dee5a9c1b5c3f541d02a10003";

/**
 * The three sessions, `exact` first, then `upto`, as demo account #1 (it holds token 1: the holder price, 0.01 USD a call). `tempDir`
 * holds the sessions' state (channel files, spend logs).
 */
export async function benchCliSession(options: {
  baseUrl: string;
  l2RpcUrl: string;
  tempDir: string;
}): Promise<CliSessionResult> {
  if (!existsSync(bin)) throw new Error(`the cli line runs the built command: ${bin} is missing (pnpm build)`);
  const chain = createPublicClient({ transport: http(options.l2RpcUrl) });
  const gasOf = async (hashes: string[]) => {
    let gas = 0n;
    for (const hash of hashes) {
      gas += (await chain.waitForTransactionReceipt({ hash: hash as `0x${string}` })).gasUsed;
    }
    return gas;
  };
  const env = {
    PATH: process.env.PATH ?? "",
    NO_COLOR: "1",
    AGENT_TOOLS_PRIVATE_KEY: DEVNET_ACCOUNTS[1]!.privateKey,
    AGENT_TOOLS_BASE_URL: options.baseUrl,
    XDG_STATE_HOME: mkdtempSync(join(options.tempDir, "cli-state-")),
  };
  /** The hashes of the transactions sent to the channel contract in `from..to`: deposits, claims, sweeps, refunds. */
  const channelTransactions = async (from: bigint, to: bigint) => {
    const hashes: string[] = [];
    for (let number = from; number <= to; number++) {
      const block = await chain.getBlock({ blockNumber: number, includeTransactions: true });
      for (const tx of block.transactions) if (tx.to?.toLowerCase() === CHANNEL_CONTRACT) hashes.push(tx.hash);
    }
    return hashes;
  };
  const session = async (flags: string[], close?: string[]): Promise<CliSession> => {
    const hashes = new Set<string>();
    const fromBlock = await chain.getBlockNumber();
    const started = performance.now();
    for (let call = 0; call < SESSION_CALLS; call++) {
      const { stderr } = await run(["intel", "--token-id", "1", ...flags], env);
      for (const [, hash] of stderr.matchAll(TX)) hashes.add(hash!);
    }
    if (close) {
      const { stdout } = await run(close, env);
      for (const [, hash] of stdout.matchAll(TX)) hashes.add(hash!);
    }
    const seconds = (performance.now() - started) / 1000;
    // Over a channel, also what the service sent on its own meanwhile (a claim pass's claims and sweeps).
    if (close)
      for (const hash of await channelTransactions(fromBlock + 1n, await chain.getBlockNumber())) hashes.add(hash);
    return { seconds, calls: SESSION_CALLS, transactions: hashes.size, gas: await gasOf([...hashes]) };
  };
  const exact = await session(["--no-channel"]);
  // A Permit2 permit per call, settled by its own transaction (demo account #1 approved Permit2 when seeded).
  const upto = await session(["--no-channel", "--upto"]);
  // As the command runs by default: the channel's deposit goes with the first call; the refund at the end claims what
  // was charged and sends the rest back in one transaction.
  const channel = await session([], ["channels", "refund"]);
  return { exact, upto, channel };
}
