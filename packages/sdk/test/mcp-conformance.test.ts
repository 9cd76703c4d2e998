/**
 * The official MCP conformance suite (`@modelcontextprotocol/conformance`) against the embedded default's `/mcp`, as
 * users run the service: its server scenarios that apply to a stateless server of paid tools pass, at each protocol
 * revision the endpoint speaks; the others are listed with the reason each does not apply (docs/architecture.md,
 * "MCP"). It runs here, beside the SDK's own MCP client tests, on the embedded default this package starts anyway.
 */
import { execFile } from "node:child_process";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { attachEmbeddedService } from "@agent-tools/server/embedded-process";
import { describe, expect, inject, it } from "vitest";

const service = attachEmbeddedService(inject("embeddedService"));

/** Runs the official MCP conformance suite's command line (it needs Node 22+: the workspace's Node runs it). */
function conformance(args: string[]): Promise<{ code: number | null; output: string }> {
  const pkg = createRequire(import.meta.url).resolve("@modelcontextprotocol/conformance/package.json");
  const cli = join(dirname(pkg), "dist", "index.js");
  return new Promise((resolve) => {
    execFile(process.execPath, [cli, ...args], { encoding: "utf8", timeout: 110_000 }, (error, stdout, stderr) => {
      resolve({ code: error ? (typeof error.code === "number" ? error.code : 1) : 0, output: `${stdout}${stderr}` });
    });
  });
}

/**
 * The conformance suite's server scenarios that apply to this server, at the protocol revision each runs at: they run
 * and pass (below). 0.2 is the suite's first line to test 2026-07-28; its 2025 scenarios are those of 0.1.
 */
const APPLIED_SCENARIOS = {
  // tools-list and dns-rebinding-protection run at 2026-07-28 below: the tool list is the same server's, the stock
  // 2025 clients below list it too, and the Host/Origin check runs before a request is routed to its era.
  "2025-11-25": ["server-initialize", "ping"],
  "2026-07-28": [
    "server-stateless",
    "tools-list",
    "caching",
    "http-header-validation",
    "server-sse-multiple-streams",
    "dns-rebinding-protection",
  ],
} as const;
/** The checks of applied scenarios that do not apply, each with its reason in the file. */
const EXPECTED_FAILURES = join(import.meta.dirname, "mcp-conformance-baseline.yaml");
const OWN_TEST_TOOL = "calls a test tool of the suite's own reference server, which this server does not have";
const NO_RESOURCES = "the server offers tools only, no resources";
const NO_PROMPTS = "the server offers tools only, no prompts";
const NO_INPUT_REQUESTS =
  "the server never asks the client for input (elicitation, sampling, roots): a call's input is its arguments";
/** The others, with the reason each does not apply (docs/architecture.md, "MCP"). */
const SCENARIOS_NOT_APPLYING: Record<string, string> = {
  "server-session-lifecycle": "the endpoint is stateless: it opens no session to resume or end (2025 sessions)",
  "logging-set-level": "the server declares no logging capability: its log goes to the operator, not the client",
  "completion-complete": "the server offers no prompts or resource templates to complete arguments of",
  "tools-call-simple-text": OWN_TEST_TOOL,
  "tools-call-image": OWN_TEST_TOOL,
  "tools-call-audio": OWN_TEST_TOOL,
  "tools-call-embedded-resource": OWN_TEST_TOOL,
  "tools-call-mixed-content": OWN_TEST_TOOL,
  "tools-call-with-logging": OWN_TEST_TOOL,
  "tools-call-error": OWN_TEST_TOOL,
  "tools-call-with-progress": OWN_TEST_TOOL,
  "tools-call-sampling": OWN_TEST_TOOL,
  "tools-call-elicitation": OWN_TEST_TOOL,
  "json-schema-2020-12": OWN_TEST_TOOL,
  "http-custom-header-server-validation": `${OWN_TEST_TOOL} (one whose arguments travel in x-mcp-header headers)`,
  "elicitation-sep1034-defaults": NO_INPUT_REQUESTS,
  "elicitation-sep1330-enums": NO_INPUT_REQUESTS,
  ...Object.fromEntries(
    [
      "basic-elicitation",
      "basic-sampling",
      "basic-list-roots",
      "request-state",
      "multiple-input-requests",
      "multi-round",
      "missing-input-response",
      "non-tool-request",
      "result-type",
      "unsupported-methods",
      "tampered-state",
      "capability-check",
      "ignore-extra-params",
      "validate-input",
    ].map((name) => [`input-required-result-${name}`, NO_INPUT_REQUESTS]),
  ),
  "server-sse-polling": "the endpoint is stateless and answers JSON: it opens no SSE stream to poll (GET is 405)",
  "resources-list": NO_RESOURCES,
  "resources-read-text": NO_RESOURCES,
  "resources-read-binary": NO_RESOURCES,
  "resources-templates-read": NO_RESOURCES,
  "resources-subscribe": NO_RESOURCES,
  "resources-unsubscribe": NO_RESOURCES,
  "sep-2164-resource-not-found": NO_RESOURCES,
  "prompts-list": NO_PROMPTS,
  "prompts-get-simple": NO_PROMPTS,
  "prompts-get-with-args": NO_PROMPTS,
  "prompts-get-embedded-resource": NO_PROMPTS,
  "prompts-get-with-image": NO_PROMPTS,
  ...Object.fromEntries(
    ["directory", "enumeration", "manifest"].map((name) => [
      `sep-2640-skills-${name}`,
      "an extension (skills) the server does not offer",
    ]),
  ),
  ...Object.fromEntries(
    [
      "lifecycle",
      "capability-negotiation",
      "wire-fields",
      "request-state-removal",
      "mrtr-input",
      "request-headers",
      "dispatch-and-envelope",
      "status-notifications",
      "required-task-error",
      "mrtr-composition",
    ].map((name) => [
      `tasks-${name}`,
      "an extension (tasks) the server does not offer: a tool answers in one response, long work goes to /dispatch",
    ]),
  ),
};

describe("the official MCP conformance suite against /mcp", () => {
  it.each(Object.keys(APPLIED_SCENARIOS) as (keyof typeof APPLIED_SCENARIOS)[])(
    "passes the official MCP conformance suite's server scenarios that apply to it, at %s",
    async (revision) => {
      for (const scenario of APPLIED_SCENARIOS[revision]) {
        const run = await conformance([
          ...["server", "--url", `${service.url}/mcp`, "--scenario", scenario, "--spec-version", revision],
          ...["--expected-failures", EXPECTED_FAILURES],
        ]);
        expect(run.code, `${scenario} at ${revision}:\n${run.output}`).toBe(0);
        // Checks ran (a scenario of another revision would be skipped) and none failed but those of the baseline.
        expect(run.output, scenario).toMatch(/Passed: [1-9]\d*\/\d+/);
        expect(run.output, scenario).toMatch(/Baseline check passed|Passed: (\d+)\/\1, 0 failed/);
      }
    },
    120_000,
  );

  it("has a reason for each of the suite's other server scenarios: none is left unsorted", async () => {
    const listed = await conformance(["list", "--server"]);
    expect(listed.code, listed.output).toBe(0);
    const revisionsOf = new Map(
      [...listed.output.matchAll(/^ {2}- (\S+) \[([^\]]*)\]/gm)].map((m) => [m[1]!, m[2]!.split(",")]),
    );
    expect(revisionsOf.size).toBeGreaterThan(40);
    const applied = new Set(Object.values(APPLIED_SCENARIOS).flat());
    // A scenario a new version of the suite adds fails here until it runs above or has its reason below.
    expect([...revisionsOf.keys()].toSorted()).toEqual([...applied, ...Object.keys(SCENARIOS_NOT_APPLYING)].toSorted());
    for (const [revision, scenarios] of Object.entries(APPLIED_SCENARIOS)) {
      for (const scenario of scenarios) expect(revisionsOf.get(scenario), scenario).toContain(revision);
    }
  });
});
