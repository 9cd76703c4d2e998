/**
 * The caller's spending limits, one table over the three transports the SDK pays on (HTTP, MCP, A2A) against the
 * embedded default (test/global-setup.ts): a call over each limit is refused before any payment is signed, with the
 * limit's reason and by how much; at the limit the same call is signed and sent, so the limit is what stopped it.
 *
 * The payer is a new key that holds nothing, calling anonymously: it is quoted the standard price (1.00 USD), and a
 * payment it signs is refused by the service, so no test here spends anything.
 */
import { attachEmbeddedService } from "@agent-tools/server/embedded-process";
import type { LocalAccount } from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { describe, expect, inject, it } from "vitest";
import { connectA2aClient } from "../src/a2a.js";
import {
  createAgentToolsClient,
  type LimitExceeded,
  memoryChannelStorage,
  memorySpendLog,
  PaymentRequiredError,
  type SpendLog,
} from "../src/index.js";
import { connectMcpClient } from "../src/mcp.js";
import { DAY_MS } from "../src/spending.js";

const service = attachEmbeddedService(inject("embeddedService"));

/** An account that counts the payments it signs (x402's are EIP-712 typed data: EIP-3009, deposits, vouchers). */
function countingAccount(): { account: LocalAccount; signed: () => number } {
  const inner = privateKeyToAccount(generatePrivateKey());
  let count = 0;
  const account: LocalAccount = {
    ...inner,
    signTypedData: (parameters) => {
      count++;
      return inner.signTypedData(parameters as never);
    },
  };
  return { account, signed: () => count };
}

/** A spend log holding `usd` charged an hour ago, and 5.00 USD charged a day and an hour ago, which no longer counts. */
async function logWith(usd: bigint): Promise<SpendLog> {
  const log = memorySpendLog();
  const now = Date.now();
  await log.add({ at: new Date(now - DAY_MS - 3_600_000).toISOString(), units: "5000000" });
  await log.add({ at: new Date(now - 3_600_000).toISOString(), units: `${usd}` });
  return log;
}

/** The limits of a row, as every client takes them. */
interface Limits {
  maxPaymentPerCall?: string;
  maxPerDay?: string;
  budget?: string;
  maxDeposit?: string;
  spendLog?: SpendLog;
  /** Pay over a channel with this deposit (HTTP and MCP: the A2A client pays with `exact`). */
  deposit?: string;
}

/** One intel call of a paying client over each transport. */
const transports = {
  http: async (account: LocalAccount, limits: Limits) => {
    const { deposit, ...rest } = limits;
    const client = createAgentToolsClient({
      baseUrl: service.url,
      account,
      signIn: false,
      ...rest,
      ...(deposit ? { channels: { deposit, storage: memoryChannelStorage() } } : {}),
    });
    await client.intel({ tokenId: 1 });
  },
  mcp: async (account: LocalAccount, limits: Limits) => {
    const { deposit, ...rest } = limits;
    const client = await connectMcpClient({
      baseUrl: service.url,
      account,
      signIn: false,
      ...rest,
      ...(deposit ? { channels: { deposit, storage: memoryChannelStorage() } } : {}),
    });
    try {
      await client.callTool("intel", { tokenId: 1 });
    } finally {
      await client.close();
    }
  },
  a2a: async (account: LocalAccount, limits: Limits) => {
    const { deposit, ...rest } = limits;
    const client = await connectA2aClient({
      baseUrl: service.url,
      account,
      signIn: false,
      ...rest,
      ...(deposit ? { channels: { deposit, storage: memoryChannelStorage() } } : {}),
    });
    await client.callSkill("intel", { tokenId: 1 });
  },
};
type TransportName = keyof typeof transports;

/** A row: the limits that refuse the 1.00 USD call, what the refusal says, and the same limits loose enough to pass. */
interface Row {
  limit: LimitExceeded["limit"];
  reason: string;
  over: (() => Promise<Limits>) | Limits;
  atLimit: (() => Promise<Limits>) | Limits;
  overBy: bigint;
  /** The refusal's sentence, as the HTTP client (option names) and the MCP and A2A clients (words) write it. */
  message: { option: RegExp; plain: RegExp };
  transports: TransportName[];
}

const rows: Row[] = [
  {
    limit: "maxPaymentPerCall",
    reason: "over_max_payment",
    over: { maxPaymentPerCall: "0.50" },
    atLimit: { maxPaymentPerCall: "1.00" },
    overBy: 500_000n,
    message: {
      option: /^intel costs 1\.00 USD, above maxPaymentPerCall 0\.50 USD \(0\.50 USD over\); nothing was paid\.$/,
      plain: /^intel costs 1\.00 USD, above the 0\.50 USD per call allowed \(0\.50 USD over\); nothing was paid\.$/,
    },
    transports: ["http", "mcp", "a2a"],
  },
  {
    limit: "maxPerDay",
    reason: "over_daily_limit",
    over: async () => ({ maxPerDay: "1.50", spendLog: await logWith(750_000n) }),
    atLimit: async () => ({ maxPerDay: "1.75", spendLog: await logWith(750_000n) }),
    overBy: 250_000n,
    message: {
      option:
        /^intel costs 1\.00 USD and 0\.75 USD was spent in the last 24 hours, against maxPerDay 1\.50 USD \(0\.25 USD over\)/,
      plain: /against the 1\.50 USD per rolling day allowed \(0\.25 USD over\); nothing was paid\.$/,
    },
    transports: ["http", "mcp", "a2a"],
  },
  {
    limit: "budget",
    reason: "over_budget",
    over: { budget: "0.60" },
    atLimit: { budget: "1.00" },
    overBy: 400_000n,
    message: {
      option:
        /^intel costs 1\.00 USD and 0\.00 USD of budget 0\.60 USD is spent \(0\.40 USD over\); nothing was paid\.$/,
      plain: /of the 0\.60 USD budget is spent \(0\.40 USD over\)/,
    },
    transports: ["http", "mcp", "a2a"],
  },
  {
    limit: "maxDeposit",
    reason: "over_max_deposit",
    over: { deposit: "2.00", maxDeposit: "1.50" },
    atLimit: { deposit: "2.00", maxDeposit: "2.00" },
    overBy: 500_000n,
    message: {
      option:
        /^intel would deposit 2\.00 USD into a payment channel, above maxDeposit 1\.50 USD \(0\.50 USD over\); nothing was signed\.$/,
      plain:
        /^intel would deposit 2\.00 USD into a payment channel, above the 1\.50 USD per deposit allowed \(0\.50 USD over\); nothing was signed\.$/,
    },
    transports: ["http", "mcp", "a2a"],
  },
];

const cases = rows.flatMap((row) => row.transports.map((transport) => ({ ...row, transport })));

describe("spending limits, over HTTP, MCP and A2A", () => {
  it.each(cases)("$transport: $limit refuses before signing, and at the limit the call is signed", async (row) => {
    const call = transports[row.transport];
    const limitsOf = async (limits: Row["over"]) => (typeof limits === "function" ? limits() : limits);

    const { account, signed } = countingAccount();
    const refused = await call(account, await limitsOf(row.over)).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(PaymentRequiredError);
    const error = refused as PaymentRequiredError;
    expect(error.reason).toBe(row.reason);
    expect(error.limit).toMatchObject({ limit: row.limit, overByUnits: row.overBy });
    expect(error.message).toMatch(row.transport === "http" ? row.message.option : row.message.plain);
    expect(error.quote?.accepts.length).toBeGreaterThan(0);
    expect(signed(), "no payment is signed").toBe(0);

    // At the limit the client signs and sends; the service, not the client, refuses this payer (it holds nothing).
    const atLimit = await call(account, await limitsOf(row.atLimit)).catch((failure: unknown) => failure);
    expect(signed(), "the payment at the limit is signed").toBeGreaterThan(0);
    expect(atLimit).toBeInstanceOf(PaymentRequiredError);
    expect((atLimit as PaymentRequiredError).limit).toBeUndefined();
    expect((atLimit as Error).message).toMatch(/^The payment was refused: .*insufficient_balance/);
  });
});
