/**
 * What settling paid calls cost on chain, read from the receipts of the transactions the answers named: how many
 * transactions carried them, and the gas used per settled payment (a batch's gas shared by the payments in it).
 */
import { createPublicClient, type Hash, http } from "viem";
import type { LoadResult } from "./load.js";
import type { PaidRun } from "./paid.js";
import { fmt, table } from "./table.js";

export interface SettlementCost {
  /** Paid calls answered 200 (each settled). */
  payments: number;
  transactions: number;
  gasPerPayment: number;
}

export async function settlementCost(rpcUrl: string, run: PaidRun): Promise<SettlementCost> {
  const client = createPublicClient({ transport: http(rpcUrl, { batch: { batchSize: 100 } }) });
  const hashes = [...new Set(run.transactions)] as Hash[];
  const receipts = await Promise.all(hashes.map((hash) => client.getTransactionReceipt({ hash })));
  const gas = receipts.reduce((sum, receipt) => sum + receipt.gasUsed, 0n);
  const payments = run.transactions.length;
  return { payments, transactions: hashes.length, gasPerPayment: payments > 0 ? Number(gas) / payments : Number.NaN };
}

export interface SettlementRow {
  line: string;
  app: string;
  result: LoadResult;
  cost: SettlementCost;
  /** The single-send row this one is compared with. */
  versus?: { result: LoadResult; cost: SettlementCost };
}

/** A settlement line's two rows: single sends, then batched compared with them, each with its cost read from the chain. */
export async function comparedSettlements(
  rpcUrl: string,
  line: string,
  runs: { single: PaidRun; batched: PaidRun },
): Promise<SettlementRow[]> {
  const single = { result: runs.single.result, cost: await settlementCost(rpcUrl, runs.single) };
  const batched = { result: runs.batched.result, cost: await settlementCost(rpcUrl, runs.batched) };
  return [
    { line, app: "single sends", ...single },
    { line, app: "batched", ...batched, versus: single },
  ];
}

/** The settlement lines: throughput, latency and gas per payment, batched next to single sends. */
export function printSettlements(rows: SettlementRow[]): void {
  const header = [
    "line",
    "app",
    "req/s",
    "p50 ms",
    "p99 ms",
    "payments",
    "transactions",
    "payments/tx",
    "gas/payment",
    "vs single: req/s",
    "p50 +ms",
    "gas",
  ];
  const cells = rows.map((row) => {
    const { result, cost, versus } = row;
    return [
      row.line,
      row.app,
      fmt(result.rps),
      fmt(result.p50, 1),
      fmt(result.p99, 1),
      fmt(cost.payments),
      fmt(cost.transactions),
      fmt(cost.payments / cost.transactions, 1),
      fmt(cost.gasPerPayment),
      versus ? `${fmt(result.rps / versus.result.rps, 2)}×` : "",
      versus ? fmt(result.p50 - versus.result.p50, 1) : "",
      versus ? `${fmt((100 * (cost.gasPerPayment - versus.cost.gasPerPayment)) / versus.cost.gasPerPayment)}%` : "",
    ];
  });
  const out = [
    "",
    "Settlements: batched (as shipped) next to single sends (SETTLEMENT_BATCH_SIZE=1), gas from the receipts:",
    table(header, cells, 2),
  ];
  process.stdout.write(`${out.join("\n")}\n`);
}
