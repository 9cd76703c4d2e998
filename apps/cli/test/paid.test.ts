import { execFile } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { DEVNET_ACCOUNTS } from "@agent-tools/devnet";
import {
  dispatchResponseSchema,
  ledgerReportSchema,
  listMissionsResponseSchema,
  paidRoutes,
  toolRoutes,
} from "@agent-tools/sdk";
import { attachEmbeddedService } from "@agent-tools/server/embedded-process";
import { startFaultProxy } from "@agent-tools/upstream-sim";
import { parse } from "csv-parse/sync";
import { describe, expect, inject, it } from "vitest";
import { machineNode } from "./helpers/machine-node.js";
import { printedRpcUrl } from "./helpers/printed-rpc.js";
import { stateHome } from "./helpers/state-home.js";

const bin = fileURLToPath(new URL("../dist/bin.js", import.meta.url));
/** The embedded default the package's test files share (test/global-setup.ts). */
const service = attachEmbeddedService(inject("embeddedService"));

/** Runs the built CLI with the machine's Node against the service (or `baseUrl`), key from the environment. */
function cli(args: string[], keyIndex?: number, baseUrl = service.url) {
  return new Promise<{ status: number; stdout: string; stderr: string }>((resolve) => {
    const env: Record<string, string> = {
      PATH: process.env.PATH ?? "",
      NO_COLOR: "1",
      XDG_STATE_HOME: stateHome,
      AGENT_TOOLS_RPC_URL: printedRpcUrl(),
    };
    if (keyIndex !== undefined) env.AGENT_TOOLS_PRIVATE_KEY = DEVNET_ACCOUNTS[keyIndex]!.privateKey;
    execFile(machineNode, [bin, "--base-url", baseUrl, ...args], { env, encoding: "utf8" }, (error, stdout, stderr) => {
      resolve({ status: error ? Number(error.code ?? 1) : 0, stdout, stderr });
    });
  });
}

/**
 * The payment line of a call paid over a channel (the command's default where the service offers channels); with
 * `ceiling`, a call charged by its work less than the price its voucher signed.
 */
const overChannel = (usd: string, payer: string, ceiling?: string) =>
  new RegExp(
    `charged ${usd.replace(".", "\\.")} USD${ceiling ? ` of a ${ceiling.replace(".", "\\.")} USD ceiling` : ""} ` +
      `over channel 0x[0-9a-f]{64} from ${payer} · \\d+\\.\\d{2,6} USD left in it`,
  );
/** An anonymous `/intel` over a channel: 0.01 and one agent examined, 0.012 of its 1.00 (docs/api.md). */
const ANONYMOUS_INTEL = "0.012";
/** The payment line of an anonymous `intel` paid with an `upto` permit: charged its work, of its price. */
const UPTO_LINE = /paid 0\.012 USD of a 1\.00 USD ceiling from 0x[0-9a-fA-F]{40} · tx 0x[0-9a-f]{64}/;

describe("agent-tools against the embedded default", () => {
  it("a demo holder pays the discounted price for intel, and the key is never printed", async () => {
    const result = await cli(["intel", "--token-id", "1"], 1);
    expect(result.status).toBe(0);
    expect(result.stdout).toContain("Agent #1");
    expect(result.stderr).toMatch(overChannel("0.01", "0x70997970C51812dc3A010C7d01b50e0d17dc79C8"));
    // The service's receipt, checked by the SDK: on the embedded default the operator's key (#0) signs it.
    expect(result.stderr).toContain(`receipt signed by ${DEVNET_ACCOUNTS[0]!.address}`);
    expect(result.stdout + result.stderr).not.toContain(DEVNET_ACCOUNTS[1]!.privateKey.slice(2));
  });

  it("a demo holder pays the discounted price for a drop-radar scan and sees a table of drops", async () => {
    const result = await cli(["drop-radar", "--token-id", "1", "--type", "upcoming", "--limit", "5"], 1);
    expect(result.status).toBe(0);
    expect(result.stdout).toMatch(/drops \(\d+\)/);
    // What an operator scans for: the stage, its price, and the time to its opening.
    expect(result.stdout).toMatch(/^name\s+chain\s+status\s+stage\s+price\s+when\s+slug$/m);
    expect(result.stdout).toMatch(/\supcoming\s+.+\((public|allowlist|token_gated|unknown)\)\s+.+\s+opens in \d+[dhm]/);
    expect(result.stdout).not.toMatch(/remaining|maxSupply/);
    expect(result.stderr).toMatch(overChannel("0.01", "0x70997970C51812dc3A010C7d01b50e0d17dc79C8"));
  });

  it("pays with a transfer of its own under --no-channel", async () => {
    const result = await cli(["intel", "--token-id", "1", "--no-channel"], 1);
    expect(result.status).toBe(0);
    expect(result.stderr).toMatch(/paid 0\.01 USD from 0x70997970C51812dc3A010C7d01b50e0d17dc79C8 · tx 0x[0-9a-f]{64}/);
    expect(result.stderr).not.toMatch(/channel/);
  });

  it("shows each radar in its own view: full addresses, risk with its flags, error codes", async () => {
    const b20 = await cli(["b20-radar", "--token-id", "1", "--limit", "5"], 1);
    expect(b20.status).toBe(0);
    expect(b20.stdout).toMatch(/^symbol\s+name\s+variant\s+price\s+24h volume\s+liquidity\s+address\s+risk$/m);
    expect(b20.stdout).toMatch(/\s0x[bB]20[0-9a-fA-F]{37}\s+(low|elevated|high)/m);
    // Nothing is cut: the risk runs with all its flags to the end of its line; no price reads as zero.
    expect(b20.stdout).not.toContain("…");
    expect(b20.stdout).toMatch(/\s(elevated|high): [^\n;]+(; [^\n;]+)*$/m);
    expect(b20.stdout).not.toMatch(/\$0\.0+(\s|$)/m);

    const offers = await cli(
      ["offer-radar", "--token-id", "5", "--slug", "base-bloomers", "--slug", "no-such-collection"],
      5,
    );
    expect(offers.status).toBe(0);
    expect(offers.stdout).toMatch(/^no-such-collection\s.*\scollection_not_found$/m);
    expect(offers.stdout).toMatch(/^base-bloomers\s+[\d.]+ \w+ \(\$[\d,.]+\)/m);
  });

  it("asks no payment for a non-answer: intel about an unrevealed agent, an offer scan of unknown collections", async () => {
    const ledgerTotal = async () =>
      ledgerReportSchema.parse(JSON.parse((await cli(["ledger", "--json"], 0)).stdout)).total;
    const before = await ledgerTotal();
    // Token 6001 is not revealed yet: refused before any price is asked.
    const intel = await cli(["intel", "--token-id", "6001", "--anonymous"], 3);
    expect(intel.status).toBe(4);
    expect(intel.stderr).toMatch(
      /\/intel is for revealed agents; token 6001 is not revealed yet\. Nothing was charged\.$/m,
    );
    expect(intel.stderr).not.toMatch(/(paid|charged) \d/);
    // The marketplace knows no such collection: the verified payment is given back.
    const offers = await cli(["offer-radar", "--token-id", "5", "--slug", "no-such-collection"], 5);
    expect(offers.status).toBe(2);
    expect(offers.stderr).toMatch(
      /^agent-tools: The marketplace has no collection with the slug 'no-such-collection'\. Nothing was charged; check the slugs/m,
    );
    expect(offers.stderr).not.toMatch(/(paid|charged) \d/);
    expect(await ledgerTotal()).toEqual(before);
  });

  it.each([
    [
      "with a transfer of its own",
      ["--no-channel"],
      /paid 1\.00 USD from 0x[0-9a-fA-F]{40} · tx 0x[0-9a-f]{64}/,
      1_000_000n,
    ],
    ["over its channel", [], overChannel(ANONYMOUS_INTEL, DEVNET_ACCOUNTS[8]!.address, "1.00"), 12_000n],
    ["with an upto permit", ["--no-channel", "--upto"], UPTO_LINE, 12_000n],
  ])(
    "has the answer of a paid call cut off after settlement on its retry, and pays once (%s)",
    async (_, flags, line, charged) => {
      const ledgerTotal = async () =>
        ledgerReportSchema.parse(JSON.parse((await cli(["ledger", "--json"], 0)).stdout)).total;
      const before = await ledgerTotal();
      const proxy = await startFaultProxy(service.url);
      try {
        // The service answers and settles; the proxy passes on half of the answer and closes the connection.
        proxy.inject({ kind: "truncate" }, { count: 1, match: (r) => r.headers["payment-signature"] !== undefined });
        // Anonymous: a sign-in names the service's own origin, and this call reaches it through the proxy.
        const result = await cli(["intel", "--token-id", "8", "--anonymous", "--json", ...flags], 8, proxy.url);
        expect(result.stderr).toMatch(line);
        expect(result.status).toBe(0);
        expect(JSON.parse(result.stdout)).toMatchObject({ tokenId: 8 });
        const paid = proxy.requests().filter((r) => r.headers["payment-signature"] !== undefined);
        expect(paid.map((r) => r.fate)).toEqual(["truncate", "forwarded"]);
      } finally {
        await proxy.close();
      }
      const after = await ledgerTotal();
      expect(after.payments).toBe(before.payments + 1);
      expect(BigInt(after.amount)).toBe(BigInt(before.amount) + charged);
    },
  );

  it("shows a wallet's NFTs and offers, and an allowlist scan's drops with the reason per ineligible one", async () => {
    const portfolio = await cli(["portfolio", "--token-id", "5"], 5);
    expect(portfolio.status).toBe(0);
    expect(portfolio.stdout).toMatch(/^nfts \(\d+\)\ncollection\s+name\s+token id\s+floor\s+standard\s+contract$/m);
    expect(portfolio.stdout).toMatch(/^\S+\s+.+\s\d+\s+[\d.]+ \w+ \(\$[\d,.]+\)\s+erc\d+\s+0x[0-9a-fA-F]{40}$/m);
    expect(portfolio.stdout).toMatch(
      /^offersReceived \(\d+\)\ncollection\s+kind\s+token id\s+price\s+expires\s+maker$/m,
    );
    expect(portfolio.stdout).toMatch(/\s(item|collection|trait)\s.+\sin \d+[dhm].*\s0x[0-9a-fA-F]{40}$/m);
    // Every dollar figure, brief and tables alike, is written one way: thousands separated, cents.
    const figures = portfolio.stdout.match(/\$[\d,.]+\d/g) ?? [];
    expect(figures.length).toBeGreaterThan(1);
    for (const figure of figures) expect(figure).toMatch(/^\$(\d{1,3}(,\d{3})*\.\d{2}|0\.\d+)$/);

    const scan = await cli(["allowlist-scan", "--token-id", "5"], 5);
    expect(scan.status).toBe(0);
    expect(scan.stdout).toMatch(/^eligible \(\d+\)$/m);
    expect(scan.stdout).toMatch(/^ineligible \(\d+\)\nname\s+chain\s+why\s+next stage\s+slug$/m);
    expect(scan.stdout).toMatch(/\s(not on the allowlist|does not meet the token gate)\s/);
    // The brief names each drop it may not mint with the same reason as the table.
    expect(scan.stdout).toMatch(/Not eligible: [^.]+ \((not on the allowlist|does not meet the token gate)\)/);
  });

  it("an anonymous run pays the standard price", async () => {
    const result = await cli(["intel", "--token-id", "7", "--anonymous"], 3);
    expect(result.status).toBe(0);
    expect(result.stderr).toMatch(overChannel(ANONYMOUS_INTEL, DEVNET_ACCOUNTS[3]!.address, "1.00"));
  });

  it.each([
    ["with a transfer of its own", ["--no-channel"], /paid 1\.00 USD/],
    ["over its channel", [], overChannel(ANONYMOUS_INTEL, DEVNET_ACCOUNTS[8]!.address, "1.00")],
    ["with an upto permit", ["--no-channel", "--upto"], UPTO_LINE],
  ])(
    "sends the paid request again, with the same payment, when its connection is reset on the way (%s)",
    async (_, flags, line) => {
      const proxy = await startFaultProxy(service.url);
      try {
        proxy.resetNext({ match: (r) => r.headers["payment-signature"] !== undefined });
        const result = await cli(["intel", "--token-id", "8", "--anonymous", ...flags], 8, proxy.url);
        expect(result.stderr).toMatch(line);
        expect(result.status).toBe(0);
        const paid = proxy.requests().filter((r) => r.headers["payment-signature"] !== undefined);
        expect(paid.map((r) => r.fate)).toEqual(["reset", "forwarded"]);
        expect(paid[1]!.headers["payment-signature"]).toBe(paid[0]!.headers["payment-signature"]);
      } finally {
        await proxy.close();
      }
    },
  );

  it("--max-price below the quote exits 3 without paying", async () => {
    const result = await cli(["intel", "--token-id", "7", "--anonymous", "--max-price", "0.50"], 3);
    expect(result.status).toBe(3);
    expect(result.stderr).toMatch(/1\.00 USD, above --max-price 0\.50 USD \(0\.50 USD over\); nothing was paid/);
    expect(result.stderr).not.toMatch(/(paid|charged) \d/);
  });

  it("a Holder-clearance token on offer-radar exits 4 and names the clearance", async () => {
    const result = await cli(["offer-radar", "--token-id", "1", "--slug", "night-owls"], 1);
    expect(result.status).toBe(4);
    expect(result.stderr).toMatch(/needs Elite clearance/);
  });

  it("--json prints exactly the response, and it matches the schema", async () => {
    const result = await cli(["intel", "--token-id", "10", "--json"], 1);
    expect(result.status).toBe(0);
    const parsed = toolRoutes.intel.response.parse(JSON.parse(result.stdout));
    expect(parsed.tokenId).toBe(10);
    expect(result.stdout.trim().split("\n")).toHaveLength(1);
  });

  it("bad flags exit 2 before anything is sent, each named as typed", async () => {
    const result = await cli(["drop-radar", "--token-id", "0", "--limit", "500"], 1);
    expect(result.status).toBe(2);
    expect(result.stderr).toMatch(/^ {2}--token-id: /m);
    expect(result.stderr).toMatch(/^ {2}--limit: /m);
    expect(result.stderr).not.toMatch(/tokenId/);
  });

  it("tells a signed-in holder over --max-price to raise it, not to sign in", async () => {
    const result = await cli(["intel", "--token-id", "5", "--max-price", "0.001"], 5);
    expect(result.status).toBe(3);
    expect(result.stderr).toMatch(/0\.01 USD, above --max-price 0\.001 USD/);
    expect(result.stderr).toMatch(/Raise --max-price to pay it\.$/m);
    expect(result.stderr).not.toMatch(/sign in/i);
  });

  it("an agent that is not revealed yet exits 4, as the README says", async () => {
    const result = await cli(["agent", "6500"]);
    expect(result.status).toBe(4);
    expect(result.stderr).toMatch(/not revealed/);
  });

  it("reads the key from --key-file", async () => {
    // A key on disk is removed with its directory, whatever the outcome: the test leaves no key behind.
    const dir = mkdtempSync(join(tmpdir(), "agent-tools-key-"));
    const file = join(dir, "key");
    try {
      writeFileSync(file, `${DEVNET_ACCOUNTS[2]!.privateKey}\n`, { mode: 0o600 });
      const result = await cli(["intel", "--token-id", "2", "--key-file", file]);
      expect(result.status).toBe(0);
      expect(result.stderr).toMatch(overChannel("0.01", "0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC"));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("shows public records without a key", async () => {
    const agent = await cli(["agent", "1"]);
    expect(agent.status).toBe(0);
    expect(agent.stdout).toMatch(/Agent #1 · \w+ \(rank \d+ of 6000/);
    const catalog = await cli(["catalog", "--json"]);
    expect(JSON.parse(catalog.stdout).items).toHaveLength(Object.keys(paidRoutes).length);
  });
});

/** The Elite token the embedded default names at start, and the demo account holding it. */
function eliteToken(): { tokenId: number; account: number } {
  const match = /Elite\s+clearance: token (\d+), held by account #(\d+)/.exec(service.output());
  if (!match) throw new Error(`the embedded default named no Elite token:\n${service.output()}`);
  return { tokenId: Number(match[1]), account: Number(match[2]) };
}

describe("missions and the ledger against the embedded default", () => {
  // Paid with `exact` (--no-channel): each payment has a transaction of its own, which the ledger must list.
  /** Transactions of the payments these tests made, from the CLI's stderr. */
  const transactions: string[] = [];
  const paidTx = (stderr: string) => {
    const tx = /paid [\d.]+ USD from 0x[0-9a-fA-F]{40} · tx (0x[0-9a-f]{64})/.exec(stderr)?.[1];
    if (tx) transactions.push(tx);
    return tx;
  };
  let missionId: string;

  it("an Elite holder queues an intel mission at the holder price", async () => {
    const elite = eliteToken();
    const result = await cli(
      ["--no-channel", "dispatch", "intel", "--token-id", String(elite.tokenId), "--json"],
      elite.account,
    );
    expect(result.stderr).toMatch(/paid 0\.01 USD/);
    expect(result.status).toBe(0);
    const { mission } = dispatchResponseSchema.parse(JSON.parse(result.stdout));
    expect(mission).toMatchObject({ tokenId: elite.tokenId, tool: "intel", status: "queued" });
    expect(mission.requestedBy).toBe(DEVNET_ACCOUNTS[elite.account]!.address);
    expect(paidTx(result.stderr)).toBeDefined();
    missionId = mission.id;
    // Read by a person: the service's brief, and one way to follow the mission, the CLI's own command.
    const human = await cli(["--no-channel", "dispatch", "intel", "--token-id", String(elite.tokenId)], elite.account);
    expect(human.status).toBe(0);
    paidTx(human.stderr);
    expect(human.stdout).toMatch(new RegExp(`^Mission queued for agent #${elite.tokenId}: intel runs now\\.$`, "m"));
    expect(human.stdout).not.toContain("GET /dispatch");
    expect(human.stdout).toContain(`Follow it with: agent-tools missions --token-id ${elite.tokenId}`);
  });

  it("missions shows it done once the service has run it", async () => {
    const elite = eliteToken();
    await service.printed(new RegExp(`"mission":"${missionId}".*"msg":"mission done"`));
    const result = await cli(
      ["--no-channel", "missions", "--token-id", String(elite.tokenId), "--json"],
      elite.account,
    );
    expect(result.status).toBe(0);
    paidTx(result.stderr);
    const found = listMissionsResponseSchema.parse(JSON.parse(result.stdout)).missions.find((m) => m.id === missionId);
    expect(found).toBeDefined();
    expect(found!.status).toBe("done");
    expect(found!.result).toMatchObject({ tokenId: elite.tokenId });
    const table = await cli(
      ["--no-channel", "missions", "--token-id", String(elite.tokenId), "--status", "done"],
      elite.account,
    );
    expect(table.status).toBe(0);
    paidTx(table.stderr);
    expect(table.stdout).toMatch(new RegExp(`${missionId.slice(0, 8)}\\s+intel\\s+done`));
  });

  it("queues a mission paid over the holder's channel, as the command pays by default, and the service runs it", async () => {
    const elite = eliteToken();
    const result = await cli(["dispatch", "intel", "--token-id", String(elite.tokenId), "--json"], elite.account);
    expect(result.status, result.stderr).toBe(0);
    expect(result.stderr).toMatch(overChannel("0.01", DEVNET_ACCOUNTS[elite.account]!.address));
    const { mission } = dispatchResponseSchema.parse(JSON.parse(result.stdout));
    await service.printed(new RegExp(`"mission":"${mission.id}".*"msg":"mission done"`));
  });

  it("an unrevealed token (6001) exits 4", async () => {
    // Token 6001 belongs to demo account ((6001 - 1) mod 9) + 1 = 7.
    const result = await cli(["--no-channel", "dispatch", "intel", "--token-id", "6001"], 7);
    expect(result.status).toBe(4);
    expect(result.stderr).toMatch(/Intel and missions are for revealed agents/);
    expect(result.stderr).not.toMatch(/(paid|charged) \d/);
  });

  it("the ledger, read with the operator's key #0, shows the payments made", async () => {
    const result = await cli(["ledger", "--limit", "500", "--json"], 0);
    expect(result.stderr).toBe("");
    expect(result.status).toBe(0);
    const report = ledgerReportSchema.parse(JSON.parse(result.stdout));
    const settled = new Set(report.entries.map((e) => e.transaction));
    expect(transactions.length).toBeGreaterThan(1);
    for (const tx of transactions) expect(settled).toContain(tx);
    expect(report.byRoute.map((r) => r.route)).toContain("/dispatch");
    const human = await cli(["ledger"], 0);
    expect(human.status).toBe(0);
    expect(human.stdout).toMatch(/by route\nroute\s+payments\s+usd/);
    expect(human.stdout).toMatch(/\/dispatch\s+\d+\s+\d+\.\d{2}/);
    expect(human.stdout + human.stderr).not.toContain(DEVNET_ACCOUNTS[0]!.privateKey.slice(2));
  });

  it("the ledger exports every payment as CSV to a file, and as JSON Lines to stdout: the same payments", async () => {
    const dir = mkdtempSync(join(tmpdir(), "agent-tools-ledger-"));
    try {
      const file = join(dir, "ledger.csv");
      const csv = await cli(["ledger", "--format", "csv", "--output", file], 0);
      expect(csv.status, csv.stderr).toBe(0);
      const records: Record<string, string>[] = parse(readFileSync(file, "utf8"), { columns: true });
      expect(csv.stderr).toContain(`Wrote ${records.length} payments to ${file}.`);
      const exported = new Set(records.map((r) => r.transaction));
      for (const tx of transactions) expect(exported).toContain(tx);

      const jsonl = await cli(["ledger", "--format", "jsonl"], 0);
      expect(jsonl.status, jsonl.stderr).toBe(0);
      const lines = jsonl.stdout.trimEnd().split("\n");
      // An entry by what names it: a call paid over a channel gets its claim's transaction once the service's claim
      // pass runs, which may be between the two exports.
      type Named = { kind: string; payer: string; nonce: string; cumulative: string | null; requestId: string };
      const name = (e: Named) => [e.kind, e.payer, e.nonce, e.cumulative || "", e.requestId].join(" ");
      expect(lines.map((line) => name(JSON.parse(line) as Named))).toEqual(records.map((r) => name(r as Named)));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("the ledger's export takes no --limit, and --output needs a --format: usage errors, exit 2", async () => {
    for (const args of [
      ["ledger", "--format", "csv", "--limit", "5"],
      ["ledger", "--output", "x.csv"],
    ]) {
      const result = await cli(args, 0);
      expect(result.status, args.join(" ")).toBe(2);
    }
  });

  it("the ledger with a key that is not the operator's exits 4", async () => {
    const result = await cli(["ledger"], 1);
    expect(result.status).toBe(4);
    expect(result.stderr).toMatch(/Use the operator's key/);
  });
});

describe("the runtime", () => {
  it("runs on the machine's Node", async () => {
    const version = await new Promise<string>((resolve) =>
      execFile(machineNode, ["--version"], (_e, stdout) => resolve(String(stdout).trim())),
    );
    expect(Number(version.slice(1).split(".")[0])).toBeGreaterThanOrEqual(20);
    const result = await cli(["--version"]);
    expect(result.stdout.trim()).toBe("1.0.0");
  });
});
