import { type ChildProcess, spawn } from "node:child_process";
import { once } from "node:events";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { type RunningDevnet, startDevnet } from "@agent-tools/devnet";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { spawnReferenceFacilitator } from "../production/environment.js";
import { shortReason } from "../src/errors/startup-error.js";
import { freePort, runNodeScript, type ScriptProcess, waitForOutput } from "../src/startup/embedded-process.js";
import { storeDescription } from "../src/store/database.js";
import { postgresLocation } from "../src/store/postgres.js";

const mainScript = fileURLToPath(new URL("../dist/main.js", import.meta.url));
const embeddedScript = fileURLToPath(new URL("../dist/embedded.js", import.meta.url));
const dataDir = mkdtempSync(join(tmpdir(), "agent-tools-process-"));

const run = (env: Record<string, string>) =>
  runNodeScript(mainScript, { LOG_LEVEL: "warn", DATA_DIR: dataDir, ...env });

/** Who is paid and who settles: devnet account 0, whose public test key is accepted on the local payment chain. */
const devnetPayments = () => ({
  PAY_TO: devnet.deployment.accounts[0]!.address,
  FACILITATOR_PRIVATE_KEY: devnet.deployment.accounts[0]!.privateKey,
});

let devnet: RunningDevnet;
/** A port nothing listens on: an unreachable RPC, facilitator or database. */
let closedPort: number;
beforeAll(async () => {
  closedPort = await freePort();
  devnet = await startDevnet({ l1Port: 0, l2Port: 0 });
}, 120_000);
afterAll(async () => {
  await devnet?.close();
  rmSync(dataDir, { recursive: true, force: true });
});

describe("the server process", () => {
  it("starts on the configured port, serves /healthz and exits 0 on SIGTERM", async () => {
    const env = {
      HOST: "127.0.0.1",
      L1_RPC_URL: devnet.deployment.l1.rpcUrl!,
      L2_RPC_URL: devnet.deployment.l2.rpcUrl!,
      ...devnetPayments(),
    };
    // A port found free may be taken by another process before the server binds it: then ask for another.
    let started: { port: number; child: ChildProcess; output: () => string } | undefined;
    while (!started) {
      const port = await freePort();
      const proc = run({ ...env, PORT: String(port) });
      try {
        await waitForOutput(proc, "Agent Tools API on", 120_000, "the server");
        started = { port, ...proc };
      } catch (error) {
        if (!proc.output().includes("EADDRINUSE")) throw error;
      }
    }
    const { port, child, output } = started;
    const exited = once(child, "exit");
    try {
      expect(output()).toContain(`Agent Tools API on http://127.0.0.1:${port}`);
      // Which store holds the ledger is said at every start.
      expect(output()).toContain(`Ledger and missions: PGlite in ${dataDir} (the embedded store: one instance only;`);
      const res = await fetch(`http://127.0.0.1:${port}/healthz`);
      expect(await res.json()).toEqual({ ok: true, service: "agent-tools" });
      const agent = await fetch(`http://127.0.0.1:${port}/agents/info/1`);
      expect(agent.status).toBe(200);
    } finally {
      // Stopped whatever was found: a failed expectation leaves no server holding the data directory.
      child.kill("SIGTERM");
    }
    const [code] = await exited;
    expect(code).toBe(0);
  }, 150_000);

  it("on PORT=0 listens on a port the OS picks and makes that address its public origin", async () => {
    const proc = run({
      PORT: "0",
      L1_RPC_URL: devnet.deployment.l1.rpcUrl!,
      L2_RPC_URL: devnet.deployment.l2.rpcUrl!,
      ...devnetPayments(),
    });
    const [, url] = await waitForOutput(
      proc,
      /Agent Tools API on (http:\/\/127\.0\.0\.1:(\d+))/,
      120_000,
      "the server",
    );
    try {
      expect(url).not.toMatch(/:0$/);
      const openapi = (await (await fetch(`${url}/openapi.json`)).json()) as { servers: { url: string }[] };
      expect(openapi.servers[0]!.url).toBe(url);
    } finally {
      const exited = once(proc.child, "exit");
      proc.child.kill("SIGTERM");
      await exited;
    }
  }, 150_000);

  it("says why it cannot start when the collection chain is unreachable, without the API key of its URL", async () => {
    const closed = await freePort();
    const { child, output } = run({
      PORT: "0",
      L1_RPC_URL: `http://127.0.0.1:${closed}/v2/SECRET-API-KEY?token=SECRET-TOKEN`,
      RPC_TIMEOUT_MS: "500",
      ...devnetPayments(),
    });
    const [code] = await once(child, "close");
    expect(code).toBe(1);
    expect(output()).toMatch(
      new RegExp(
        `^agent-tools failed to start: L1_RPC_URL: the RPC of the collection chain at http://127\\.0\\.0\\.1:${closed} did not answer: .*ECONNREFUSED.*\n$`,
      ),
    );
    expect(output()).not.toMatch(/SECRET-API-KEY|SECRET-TOKEN/);
  });

  it("refuses to start without a payment recipient and a way to settle, and says which variables to set", async () => {
    const { child, output } = run({ PORT: "0", L1_RPC_URL: devnet.deployment.l1.rpcUrl! });
    const [code] = await once(child, "close");
    expect(code).toBe(1);
    expect(output()).toMatch(/PAY_TO must be set/);
    expect(output()).toMatch(/FACILITATOR_URLS or FACILITATOR_PRIVATE_KEY \(or FACILITATOR_PRIVATE_KEYS\) must be set/);
  });

  it("refuses the public test accounts when payments are on a real network", async () => {
    const { child, output } = run({
      PORT: "0",
      L1_RPC_URL: devnet.deployment.l1.rpcUrl!,
      PAYMENT_NETWORK: "eip155:8453",
      ...devnetPayments(),
    });
    const [code] = await once(child, "close");
    expect(code).toBe(1);
    expect(output()).toMatch(
      /PAY_TO 0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266 is an account of the public test mnemonic/,
    );
    expect(output()).toMatch(/FACILITATOR_PRIVATE_KEY holds the key of 0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266/);
  });

  it("refuses a data directory another process holds in one whole line naming DATA_DIR and the holder", async () => {
    const held = mkdtempSync(join(tmpdir(), "agent-tools-held-"));
    const holder = spawn(process.execPath, ["-e", "setTimeout(() => {}, 60000)"], { stdio: "ignore" });
    try {
      writeFileSync(join(held, "agent-tools.pid"), String(holder.pid));
      // The embedded default (pnpm start) checks its data directory before it starts anything else.
      const proc = runNodeScript(embeddedScript, { PORT: "0", L1_PORT: "0", L2_PORT: "0", DATA_DIR: held });
      const [code] = await once(proc.child, "close");
      expect(code).toBe(1);
      expect(startFailure(proc.output())).toBe(
        `agent-tools failed to start: DATA_DIR: the data directory ${held} is in use by process ${holder.pid}; stop ` +
          "that process, or point DATA_DIR elsewhere (several instances share one database through DATABASE_URL, a " +
          "Postgres server).",
      );
    } finally {
      holder.kill("SIGKILL");
      rmSync(held, { recursive: true, force: true });
    }
  });

  it("names a Postgres store by its host, port and database only: no user, password or parameters", () => {
    expect(
      storeDescription({
        kind: "postgres",
        location: postgresLocation("postgres://u:pw@db.example.org:5433/ledger?sslpassword=x"),
      }),
    ).toBe("Postgres at db.example.org:5433/ledger");
    expect(postgresLocation("postgresql://u@/ledger?host=/var/run/postgresql")).toBe("/var/run/postgresql/ledger");
  });

  it("quotes a library's reason for a failed start whole, however long its first line", () => {
    const long = `could not connect: ${"the server said something rather long about itself, ".repeat(6)}and stopped`;
    const error = new Error(`${long}\nsecond line`, {
      cause: Object.assign(new Error("refused"), { code: "ECONNREFUSED" }),
    });
    expect(shortReason(error)).toBe(`${long} (ECONNREFUSED)`);
  });

  it("refuses to start on a bad variable and names it", async () => {
    const { child, output } = run({ PORT: "not-a-port" });
    const [code] = await once(child, "close");
    expect(code).toBe(1);
    expect(output()).toMatch(/Invalid configuration: PORT must be a port number/);
  });
});

/** The secrets of a production configuration: none may appear in anything the server prints. */
const SECRETS = {
  rpcKey: "SECRET-RPC-KEY",
  marketplaceKey: "SECRET-OPENSEA-KEY",
  facilitatorKey: "SECRET-BEARER-KEY",
  cdpSecret: "SECRET-CDP-SECRET",
  databasePassword: "SECRET-DB-PASSWORD",
};

/**
 * A configuration for Ethereum and Base mainnet as an operator writes it from deploy/agent-tools.env.example: every
 * address and upstream given, accounts of its own, facilitators over HTTP with credentials.
 */
function mainnetShaped(): Record<string, string> {
  return {
    PORT: "0",
    PUBLIC_URL: "https://tools.example.org",
    PAYMENT_NETWORK: "eip155:8453",
    PAYMENT_ASSET: "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913",
    PAY_TO: privateKeyToAccount(generatePrivateKey()).address,
    L2_RPC_URL: `${devnet.deployment.l2.rpcUrl}/v2/${SECRETS.rpcKey}`,
    COLLECTION_NETWORK: "eip155:1",
    L1_RPC_URL: `${devnet.deployment.l1.rpcUrl}/v2/${SECRETS.rpcKey}`,
    COLLECTION_ADDRESS: "0x3333333333333333333333333333333333333333",
    IDENTITY_REGISTRY_ADDRESS: "0x4444444444444444444444444444444444444444",
    MARKETPLACE_URL: "https://api.opensea.io",
    MARKETPLACE_API_KEY: SECRETS.marketplaceKey,
    MARKET_DATA_URL: "https://api.dexscreener.com",
    FACILITATOR_URLS: `http://127.0.0.1:${closedPort},cdp`,
    FACILITATOR_API_KEYS: `${SECRETS.facilitatorKey},`,
    CDP_API_KEY_ID: "cdp-key-id",
    CDP_API_KEY_SECRET: SECRETS.cdpSecret,
    DATABASE_URL: `postgres://agent_tools:${SECRETS.databasePassword}@127.0.0.1:${closedPort}/agent_tools`,
  };
}

/** Runs the server to its exit; its exit code and everything it printed. */
async function refusal(env: Record<string, string>): Promise<{ code: number; output: string }> {
  const proc = run(env);
  const [code] = await once(proc.child, "close");
  return { code: code as number, output: proc.output() };
}

/** The output is one line, and holds no secret of the configuration. */
function expectOneLineWithoutSecrets(output: string): void {
  expect(output.split("\n").filter(Boolean)).toHaveLength(1);
  for (const secret of Object.values(SECRETS)) expect(output).not.toContain(secret);
}

describe("a production configuration that cannot go wrong quietly", () => {
  it.each(["COLLECTION_ADDRESS", "PAYMENT_ASSET", "MARKETPLACE_URL", "IDENTITY_REGISTRY_ADDRESS"])(
    "refuses a mainnet configuration without %s in one line naming it, no devnet value standing in",
    async (variable) => {
      const { code, output } = await refusal({ ...mainnetShaped(), [variable]: "" });
      expect(code).toBe(1);
      expect(output).toMatch(new RegExp(`^Invalid configuration: ${variable} must be set on eip155:(1|8453)`));
      expectOneLineWithoutSecrets(output);
    },
  );

  it("refuses the example file's placeholders left in place", async () => {
    const { code, output } = await refusal({ ...mainnetShaped(), PAY_TO: "<the address that receives payments>" });
    expect(code).toBe(1);
    expect(output).toMatch(/^Invalid configuration: PAY_TO /);
    expectOneLineWithoutSecrets(output);
  });

  it("refuses an RPC of another chain than the one it must serve, naming the variable", async () => {
    // The devnet's L1 says it is chain 31337, not Ethereum mainnet.
    const l1 = await refusal(mainnetShaped());
    expect(l1.code).toBe(1);
    expect(l1.output).toBe(
      `agent-tools failed to start: L1_RPC_URL: ${devnet.deployment.l1.rpcUrl} serves chain eip155:31337, but the collection chain is eip155:1 (COLLECTION_NETWORK)\n`,
    );
    expectOneLineWithoutSecrets(l1.output);
    // The devnet's L2 says it is chain 31338, not Base.
    const l2 = await refusal({ ...mainnetShaped(), COLLECTION_NETWORK: "eip155:31337" });
    expect(l2.code).toBe(1);
    expect(l2.output).toBe(
      `agent-tools failed to start: L2_RPC_URL: ${devnet.deployment.l2.rpcUrl} serves chain eip155:31338, but the payment chain is eip155:8453 (PAYMENT_NETWORK)\n`,
    );
    expectOneLineWithoutSecrets(l2.output);
  }, 60_000);

  it("refuses batched settlements on a payment chain without Multicall3 at the address, saying what to set", async () => {
    const nothing = "0x000000000000000000000000000000000000dEaD";
    const { code, output } = await refusal({
      L1_RPC_URL: devnet.deployment.l1.rpcUrl!,
      L2_RPC_URL: devnet.deployment.l2.rpcUrl!,
      ...devnetPayments(),
      MULTICALL3_ADDRESS: nothing,
    });
    expect(code).toBe(1);
    expect(output).toBe(
      `agent-tools failed to start: MULTICALL3_ADDRESS: no Multicall3 contract at ${nothing} on eip155:31338, which batched settlements need: set MULTICALL3_ADDRESS to one, or SETTLEMENT_BATCH_SIZE=1 to send each settlement alone\n`,
    );
  }, 60_000);

  it.each(["PORT", "METRICS_PORT"])("reports a taken %s in one line, before any other work", async (variable) => {
    const taken = await holdPort();
    try {
      // Every RPC unreachable: had the server started any work before binding its ports, it would say so instead.
      const { code, output } = await refusal({
        ...mainnetShaped(),
        L1_RPC_URL: `http://127.0.0.1:${closedPort}`,
        L2_RPC_URL: `http://127.0.0.1:${closedPort}`,
        [variable]: String(taken.port),
        ...(variable === "METRICS_PORT" ? { PORT: "0" } : {}),
      });
      expect(code).toBe(1);
      expect(output).toBe(
        `agent-tools failed to start: ${variable}: port ${taken.port} on 127.0.0.1 is in use; set ${variable} to a free port, or 0 for any\n`,
      );
    } finally {
      await new Promise((resolve) => taken.server.close(resolve));
    }
  });
});

describe("facilitators as x402's reference facilitator serves them, in a process of its own", () => {
  let facilitator: ScriptProcess;
  let facilitatorUrl: string;
  const apiKey = "reference-bearer-key";

  beforeAll(async () => {
    // It settles on Base Sepolia: not the chain the service is paid on below.
    facilitator = spawnReferenceFacilitator({
      RPC_URL: devnet.deployment.l2.rpcUrl!,
      PRIVATE_KEY: generatePrivateKey(),
      NETWORK: "eip155:84532",
      API_KEY: apiKey,
    });
    [, facilitatorUrl] = (await waitForOutput(
      facilitator,
      /reference facilitator on (http:\/\/\S+)/,
      60_000,
      "the reference facilitator",
    )) as RegExpMatchArray as [string, string];
  }, 90_000);
  afterAll(() => {
    facilitator?.child.kill("SIGTERM");
  });

  /** The devnet's configuration with the reference facilitator as its second, after one that cannot be reached. */
  const viaReference = (keys: string) => ({
    PORT: "0",
    L1_RPC_URL: devnet.deployment.l1.rpcUrl!,
    L2_RPC_URL: devnet.deployment.l2.rpcUrl!,
    PAY_TO: devnet.deployment.accounts[0]!.address,
    FACILITATOR_URLS: `http://127.0.0.1:${closedPort},${facilitatorUrl}`,
    FACILITATOR_API_KEYS: keys,
  });

  it("refuses to start when a facilitator does not settle the network quoted, and says what it lists", async () => {
    const { code, output } = await refusal(viaReference(`,${apiKey}`));
    expect(code).toBe(1);
    expect(startFailure(output)).toMatch(
      new RegExp(
        `^agent-tools failed to start: FACILITATOR_URLS: ${facilitatorUrl} does not settle x402 v2 exact payments on eip155:31338 \\(PAYMENT_NETWORK\\); it lists exact on eip155:84532 \\(v2\\)`,
      ),
    );
    expect(output).not.toContain(apiKey);
  }, 60_000);

  it("refuses to start when a facilitator refuses its credentials, naming the variable and not the key", async () => {
    const { code, output } = await refusal(viaReference(",not-the-key"));
    expect(code).toBe(1);
    expect(startFailure(output)).toBe(
      `agent-tools failed to start: FACILITATOR_API_KEYS: ${facilitatorUrl} refused the service's credentials (HTTP 401); check the key given for it`,
    );
    expect(output).not.toContain("not-the-key");
  }, 60_000);
});

/**
 * The one line that says why the server did not start (beside it, at LOG_LEVEL=warn, the log's warning that the
 * first facilitator did not answer).
 */
function startFailure(output: string): string | undefined {
  const lines = output.split("\n").filter((line) => line.startsWith("agent-tools failed to start:"));
  expect(lines).toHaveLength(1);
  return lines[0];
}

/** A port on 127.0.0.1 held by another listener. */
async function holdPort(): Promise<{ server: Server; port: number }> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return { server, port: (server.address() as { port: number }).port };
}
