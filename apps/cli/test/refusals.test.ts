/**
 * The command line's refusals, as a user meets them: bad flags, bad values, bad mission params, bad keys, a service
 * that cannot be reached, and the SDK's refusal of a bad key. Each says what is wrong in whole sentences (the last
 * ends with a full stop or a mark like one: nothing is cut), names the flag or the variable, exits with its code,
 * and shows no library's raw text (Zod's, viem's, commander's own framing, fetch's, a stack trace).
 */
import { execFile } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { accountFromPrivateKey } from "@agent-tools/sdk";
import { InvalidPrivateKeyError } from "@agent-tools/sdk/contracts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { stateHome } from "./helpers/state-home.js";

const bin = fileURLToPath(new URL("../dist/bin.js", import.meta.url));
const ELITE_KEY = "0x8b3a350cf5c34c9194ca85829a2df0ec3153be0318b5e2d3348e872092edffba";

/** What a library says in its own words, which a user of the CLI must never read. */
const RAW_LIBRARY_TEXT = [
  /Invalid input/,
  /Invalid (option|string|number|key|element|enum value)/,
  /expected \w+, received/,
  /Too (big|small):/,
  /Unrecognized key/,
  /\bZod/i,
  /Version: viem@/,
  /Details: /,
  /Docs: https:\/\/viem\.sh/,
  /expected valid private key|invalid private key, expected/,
  /fetch failed/,
  /^error: /m,
  /^\s{4}at /m,
  /in JSON at position/,
];

let dir: string;
/** A port nothing listens on. */
let closedUrl: string;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "agent-tools-cli-refusals-"));
  const probe = createServer();
  await new Promise<void>((done) => probe.listen(0, "127.0.0.1", done));
  closedUrl = `http://127.0.0.1:${(probe.address() as { port: number }).port}`;
  await new Promise<void>((done) => probe.close(() => done()));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Runs the built CLI with only PATH and `env` in its environment. */
function cli(args: string[], env: Record<string, string> = {}) {
  return new Promise<{ status: number | null; stdout: string; stderr: string }>((resolve) => {
    execFile(
      process.execPath,
      [bin, "--base-url", closedUrl, ...args],
      { encoding: "utf8", env: { PATH: process.env.PATH ?? "", XDG_STATE_HOME: stateHome, ...env } },
      (error, stdout, stderr) => {
        resolve({ status: error ? (typeof error.code === "number" ? error.code : 1) : 0, stdout, stderr });
      },
    );
  });
}

/** The refusal's text: whole sentences, in the CLI's own words, naming `names`. */
function expectRefusal(stderr: string, names: string | RegExp, what: string): void {
  expect(stderr, `${what}: said on stderr`).toMatch(/^agent-tools: /);
  expect(stderr.trim(), `${what}: ends as a sentence, not cut`).toMatch(/[.!?)]$/);
  if (typeof names === "string") expect(stderr, `${what}: names ${names}`).toContain(names);
  else expect(stderr, `${what}: names the field`).toMatch(names);
  for (const raw of RAW_LIBRARY_TEXT) expect(stderr, `${what}: no library text`).not.toMatch(raw);
}

describe("the command line's refusals", () => {
  it.each([
    ["an unknown option", ["intel", "--token-id", "1", "--bogus"], "--bogus"],
    ["an unknown command", ["bogus"], "bogus"],
    ["a day that is not one", ["ledger", "--from", "yesterday"], '--from "yesterday" is not valid'],
    ["a price that is not one", ["intel", "--token-id", "1", "--max-price", "lots"], '--max-price "lots"'],
    ["a status the queue has not", ["missions", "--token-id", "5", "--status", "weird"], "use one of queued"],
    ["a tool a mission cannot run", ["dispatch", "nope", "--token-id", "5"], '"nope" is not a tool'],
    ["a flag without its value", ["intel", "--token-id"], "--token-id needs a value"],
    ["a missing mandatory flag", ["missions"], "--token-id is required"],
    ["a token id that is not a number", ["intel", "--token-id", "abc"], '--token-id: must be an integer, got "abc"'],
    [
      "a limit that is not a number",
      ["drop-radar", "--token-id", "1", "--limit", "abc"],
      '--limit: must be a number, got "abc"',
    ],
    [
      "a mission param that is not a number",
      ["dispatch", "allowlist-scan", "--token-id", "5", "--param", "limit=abc"],
      '--param limit: must be a number, got "abc"',
    ],
    [
      "a mission param out of its bounds",
      ["dispatch", "allowlist-scan", "--token-id", "5", "--param", "limit=1000"],
      "--param limit: must be at most 50, got 1000",
    ],
    [
      "a mission param the tool has not",
      ["dispatch", "allowlist-scan", "--token-id", "5", "--param", "nope=1"],
      "allowlist-scan has no field nope",
    ],
    [
      "mission params that are not JSON",
      ["dispatch", "intel", "--token-id", "5", "--params", "{bad"],
      "--params is not JSON",
    ],
    ["--watch with dispatch", ["--watch", "10", "dispatch", "intel", "--token-id", "5"], "--watch"],
    ["the ledger anonymously", ["--anonymous", "ledger"], "--anonymous"],
  ])("%s: exit 2, a whole sentence naming it", async (what, args, names) => {
    const result = await cli(args as string[], { AGENT_TOOLS_PRIVATE_KEY: ELITE_KEY });
    expect(result.status, `${what}: ${result.stderr}`).toBe(2);
    expectRefusal(result.stderr, names as string, what as string);
  });

  it.each([
    ["too short", "0x12", "is not a 32-byte hex private key"],
    ["zero, outside secp256k1's range", `0x${"0".repeat(64)}`, "outside the range of secp256k1 keys"],
  ])(
    "a key that is %s: exit 2, naming where it came from and what is wrong, never the key",
    async (_what, key, says) => {
      const fromEnv = await cli(["intel", "--token-id", "1"], { AGENT_TOOLS_PRIVATE_KEY: key });
      expect(fromEnv.status).toBe(2);
      expectRefusal(fromEnv.stderr, "AGENT_TOOLS_PRIVATE_KEY", `a key ${key} in the environment`);
      expect(fromEnv.stderr).toContain(says);
      const file = join(dir, "bad.key");
      writeFileSync(file, `${key}\n`);
      const fromFile = await cli(["--key-file", file, "intel", "--token-id", "1"]);
      expect(fromFile.status).toBe(2);
      expectRefusal(fromFile.stderr, file, `a key ${key} in a file`);
      if (key.length > 10) expect(`${fromEnv.stderr}${fromFile.stderr}`).not.toContain(key.slice(2, 20));
    },
  );

  it("a service that cannot be reached: exit 5, said in words and not fetch's", async () => {
    const result = await cli(["health"]);
    expect(result.status).toBe(5);
    // The first line is the SDK's sentence; the hint after it ends with the command to run.
    const [first] = result.stderr.split("\n");
    expectRefusal(first!, `Could not reach ${closedUrl}: nothing accepts connections there`, "no service");
    for (const raw of RAW_LIBRARY_TEXT) expect(result.stderr).not.toMatch(raw);
  });

  it("the SDK refuses a bad key with its own error, in a whole sentence, never the key", () => {
    for (const key of ["0x12", `0x${"0".repeat(64)}`, "not a key"]) {
      let thrown: unknown;
      try {
        accountFromPrivateKey(key);
      } catch (error) {
        thrown = error;
      }
      expect(thrown).toBeInstanceOf(InvalidPrivateKeyError);
      const { message } = thrown as InvalidPrivateKeyError;
      expect(message).toMatch(/^The private key .*\.$/);
      for (const raw of RAW_LIBRARY_TEXT) expect(message).not.toMatch(raw);
    }
  });
});
