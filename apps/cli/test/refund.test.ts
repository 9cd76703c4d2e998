/**
 * `agent-tools refund` against the embedded default: a paid call, the money sent back from PAY_TO (demo account #0)
 * on the payment chain, then booked with the command, as docs/api.md ("Refunds") describes; and its refusals.
 */
import { DEVNET_ACCOUNTS } from "@agent-tools/devnet";
import { type LedgerEntry, ledgerReportSchema, type RecordedRefund } from "@agent-tools/sdk";
import { attachEmbeddedService } from "@agent-tools/server/embedded-process";
import { beforeAll, describe, expect, inject, it } from "vitest";
import { l2UrlOf, sendTransfer } from "./helpers/refund-transfer.js";
import { runCli } from "./helpers/run-cli.js";

const service = attachEmbeddedService(inject("embeddedService"));
const OPERATOR = 0;

const cli = (args: string[], keyIndex?: number) =>
  runCli(
    ["--base-url", service.url, ...args],
    keyIndex === undefined ? {} : { AGENT_TOOLS_PRIVATE_KEY: DEVNET_ACCOUNTS[keyIndex]!.privateKey },
  );

/**
 * A payment made now by demo account #1 (intel on token 1, 0.01 USD), as the operator's ledger lists it: with `exact`
 * (--no-channel), a transfer the operator can send back.
 */
async function freshPayment(): Promise<LedgerEntry> {
  const paid = await cli(["--no-channel", "intel", "--token-id", "1"], 1);
  expect(paid.status, paid.stderr).toBe(0);
  const transaction = /· tx (0x[0-9a-f]{64})/.exec(paid.stderr)?.[1];
  const exported = await cli(["ledger", "--format", "jsonl"], OPERATOR);
  expect(exported.status, exported.stderr).toBe(0);
  const entry = exported.stdout
    .trimEnd()
    .split("\n")
    .map((line) => JSON.parse(line) as LedgerEntry)
    .find((e) => e.kind === "payment" && e.transaction === transaction);
  expect(entry, `the ledger lists the payment ${transaction}`).toBeDefined();
  return entry!;
}

/** Sends `amount` units of the payment's asset back to its payer from PAY_TO. */
const sendBack = (payment: LedgerEntry, amount: bigint) =>
  sendTransfer(l2UrlOf(service.output()), {
    from: DEVNET_ACCOUNTS[OPERATOR]!.address,
    asset: payment.asset,
    to: payment.payer,
    amount,
  });

const refundArgs = (payment: LedgerEntry, transaction: string) => [
  "refund",
  "--payer",
  payment.payer,
  "--nonce",
  payment.nonce,
  "--transaction",
  transaction,
];

let payment: LedgerEntry;
let half: `0x${string}`;

beforeAll(async () => {
  payment = await freshPayment();
  half = await sendBack(payment, BigInt(payment.amount) / 2n);
}, 120_000);

describe("agent-tools refund", () => {
  it("books a refund sent back from PAY_TO: the brief, the refund, what is left of the payment; the ledger lists it", async () => {
    const booked = await cli([...refundArgs(payment, half), "--note", "half back: the scan came late"], OPERATOR);
    expect(booked.status, booked.stderr).toBe(0);
    expect(booked.stdout).toMatch(
      new RegExp(
        `^Recorded: a refund of 0\\.005 USD to ${payment.payer} for /intel \\(transaction ${half}\\); 0\\.005 USD of the payment's 0\\.01 USD left to give back\\.$`,
        "m",
      ),
    );
    expect(booked.stdout).toMatch(/^payment\s+0\.01 USD paid · 0\.005 USD refunded · 0\.005 USD left$/m);
    expect(booked.stdout).toMatch(/^note\s+half back: the scan came late$/m);
    expect(booked.stdout + booked.stderr).not.toContain(DEVNET_ACCOUNTS[OPERATOR]!.privateKey.slice(2));

    const report = ledgerReportSchema.parse(JSON.parse((await cli(["ledger", "--json"], OPERATOR)).stdout));
    expect(report.entries.find((e) => e.kind === "refund" && e.transaction === half)).toMatchObject({
      payer: payment.payer,
      nonce: payment.nonce,
      amount: "5000",
      note: "half back: the scan came late",
    });
  });

  it("answers a refund booked already again, exit 0; --json prints exactly the answer", async () => {
    const again = await cli([...refundArgs(payment, half), "--json"], OPERATOR);
    expect(again.status, again.stderr).toBe(0);
    expect(again.stdout.trim().split("\n")).toHaveLength(1);
    const recorded = JSON.parse(again.stdout) as RecordedRefund;
    expect(recorded.brief).toMatch(/^Already recorded: /);
    expect(recorded.refund).toMatchObject({ kind: "refund", transaction: half, payer: payment.payer });
    expect(recorded.payment).toEqual({ amount: "10000", refunded: "5000", remaining: "5000" });
  });

  it("refuses what the service refuses, naming it: exit 2 for the payment or the transaction, 4 for the key", async () => {
    // A transfer mined before the payment: no refund of it.
    const notBack = await cli(refundArgs(payment, payment.transaction), OPERATOR);
    expect(notBack.status).toBe(2);
    expect(notBack.stderr).toMatch(/moves none of the payment asset from the payee .* to the payer/);
    // A payment the ledger does not hold.
    const unknown = await cli(refundArgs({ ...payment, nonce: `0x${"ab".repeat(32)}` }, half), OPERATOR);
    expect(unknown.status).toBe(2);
    expect(unknown.stderr).toMatch(/^agent-tools: No settled payment of 0x[0-9a-fA-F]{40} with nonce 0x(ab){32}/);
    // Another payment of the same payer: a transfer booked for the first is not the second's; nor is more than it paid.
    const other = await freshPayment();
    const unit = await sendBack(other, 1n);
    expect((await cli(refundArgs(payment, unit), OPERATOR)).status).toBe(0);
    const taken = await cli(refundArgs(other, unit), OPERATOR);
    expect(taken.status).toBe(2);
    expect(taken.stderr).toMatch(/^agent-tools: .*\.\nCheck the refund's transaction/);
    const tooMuch = await sendBack(other, BigInt(other.amount) + 1n);
    const over = await cli(refundArgs(other, tooMuch), OPERATOR);
    expect(over.status).toBe(2);
    expect(over.stderr).toMatch(
      /^agent-tools: Transaction 0x[0-9a-f]{64} gives back 10001 units; 10000 of the payment's 10000 are left/,
    );
    // Flags that are not what they name, before anything is signed or sent.
    const bad = await cli(["refund", "--payer", "0x12", "--nonce", payment.nonce, "--transaction", "nope"], OPERATOR);
    expect(bad.status).toBe(2);
    expect(bad.stderr).toMatch(/--payer: must be a 20-byte hex address .*, got "0x12"/);
    expect(bad.stderr).toMatch(/--transaction: must be 32 bytes in hex .*, got "nope"/);
    const missing = await cli(["refund", "--payer", payment.payer], OPERATOR);
    expect(missing.status).toBe(2);
    expect(missing.stderr).toMatch(/^agent-tools: --nonce is required\./);
    // Not the operator's key, or none.
    const notOperator = await cli(refundArgs(payment, half), 1);
    expect(notOperator.status).toBe(4);
    const noKey = await cli(refundArgs(payment, half));
    expect(noKey.status).toBe(4);
    expect(noKey.stderr).toMatch(/refund book is the operator's: set AGENT_TOOLS_PRIVATE_KEY or pass --key-file/);
  });
});
