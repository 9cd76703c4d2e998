/**
 * The operator console (docs/api.md, "The operator console"): a page at `/operator`, its script (built from
 * transports/http/console/ into dist/console/, served from here: no CDN), a session opened by one Sign-In-With-X (made in the
 * browser with the operator's wallet, or carried in a one-time link that `agent-tools console` prints), and
 * `GET /operator/overview`, everything the page shows in one answer.
 */
import { existsSync, readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import {
  OPERATOR_CONSOLE_PATH,
  OPERATOR_OVERVIEW_PATH,
  OPERATOR_SESSION_PATH,
  type OperatorOverview,
  type OperatorSession,
  type OperatorSessionState,
  operatorOverviewSchema,
  operatorSessionSchema,
  operatorSessionStateSchema,
} from "@agent-tools/schema";
import { Router } from "express";
import type { PaymentService } from "../../../paid-call/payment-service.js";
import { SIGN_IN_MAX_AGE_MS } from "../../../paid-call/verify-sign-in.js";
import type { OperatorSessionStore } from "../../../store/operator-sessions.js";
import type { UpstreamHealth } from "../../../upstream/upstream-health.js";
import { ledgerReport } from "./ledger-report.js";
import type { OperatorAuth } from "./operator-auth.js";
import { SESSION_COOKIE, sessionTokenOf } from "./operator-auth.js";

/** What the console reads beside the ledger. */
export interface OperatorConsoleDeps {
  sessions: OperatorSessionStore;
  missionQueue(): Promise<Record<string, number>>;
  pendingSettlements(): Promise<{ recent: number; older: number }>;
  upstreams(): UpstreamHealth[];
  /** Payment refusals by reason since this instance started (counted with metrics on or off). */
  refusals(): Record<string, number>;
}

/** How long a console session lasts. */
export const SESSION_MS = 60 * 60_000;
const CONSOLE_SCRIPT_PATH = `${OPERATOR_CONSOLE_PATH}/console.js`;

/** Block explorers' transaction pages for the networks a service is paid on; none for a local chain. */
const EXPLORERS: Record<string, string> = {
  "eip155:1": "https://etherscan.io/tx/{hash}",
  "eip155:11155111": "https://sepolia.etherscan.io/tx/{hash}",
  "eip155:8453": "https://basescan.org/tx/{hash}",
  "eip155:84532": "https://sepolia.basescan.org/tx/{hash}",
};

/** The console's script, built by tsup next to the server's bundle (dist/console/), or from the sources' dist. */
function consoleScript(): string {
  for (const candidate of ["./console/console.js", "../../../../dist/console/console.js"]) {
    const path = fileURLToPath(new URL(candidate, import.meta.url));
    if (existsSync(path)) return readFileSync(path, "utf8");
  }
  throw new Error("The operator console's script is not built: run pnpm build.");
}

const CONSOLE_PAGE = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Agent Tools · operator console</title>
<link rel="icon" href="data:,">
<style>
  :root { color-scheme: light dark; font-family: system-ui, sans-serif; }
  body { margin: 0; padding: 1rem; max-width: 72rem; margin-inline: auto; }
  header { display: flex; flex-wrap: wrap; gap: .5rem 1rem; align-items: baseline; justify-content: space-between; }
  h1 { font-size: 1.3rem; margin: 0; }
  h2 { font-size: 1rem; margin: 1.5rem 0 .5rem; }
  button, a.button { font: inherit; padding: .5rem .9rem; border-radius: .4rem; border: 1px solid #888; background: none; color: inherit; cursor: pointer; text-decoration: none; }
  .cards { display: grid; grid-template-columns: repeat(auto-fit, minmax(10rem, 1fr)); gap: .75rem; }
  .card { border: 1px solid #8884; border-radius: .5rem; padding: .75rem; }
  .card b { display: block; font-size: 1.4rem; }
  .grid { display: grid; grid-template-columns: repeat(auto-fit, minmax(20rem, 1fr)); gap: 1rem; }
  .scroll { overflow-x: auto; }
  table { border-collapse: collapse; width: 100%; font-size: .85rem; }
  th, td { text-align: left; padding: .3rem .5rem; border-bottom: 1px solid #8883; white-space: nowrap; }
  svg { width: 100%; height: auto; max-height: 16rem; }
  svg text { font-size: 10px; fill: currentColor; }
  svg .grid { stroke: currentColor; stroke-opacity: .2; }
  .bar { fill: #3b82f6; }
  .warn { color: #c2410c; }
  .nowrap { white-space: nowrap; }
  .address { font-family: ui-monospace, monospace; font-size: .85rem; overflow-wrap: anywhere; }
  code { font-family: ui-monospace, monospace; }
  pre { white-space: pre-wrap; overflow-wrap: anywhere; padding: .5rem; border-radius: .3rem; background: #8882; }
  h3 { font-size: 1rem; margin: 0 0 .5rem; }
  #status { border: 1px solid #c2410c; border-radius: .5rem; padding: .75rem; }
  #status:empty { display: none; }
  #signin .cards { grid-template-columns: repeat(auto-fit, minmax(18rem, 1fr)); }
  @media (max-width: 40rem) { svg text { font-size: 12px; } }
  [hidden] { display: none !important; }
</style>
</head>
<body>
<header>
  <h1>Agent Tools · operator</h1>
  <span id="who"></span>
</header>
<section id="signin">
  <p id="status" role="status"></p>
  <h2>Sign in as the operator</h2>
  <div class="cards">
    <div class="card">
      <h3>With a link, no wallet needed</h3>
      <p>Where the operator's key is kept, run</p>
      <pre><code>agent-tools console --key-file operator.key</code></pre>
      <p>and open the link it prints, in this browser or any other. It works once, within ${SIGN_IN_MAX_AGE_MS / 60_000} minutes.</p>
    </div>
    <div class="card">
      <h3>With a wallet in this browser</h3>
      <p>Your Ethereum wallet signs a Sign-In with Ethereum message. No key is typed here.</p>
      <button id="connect" type="button">Sign in with your wallet</button>
    </div>
  </div>
</section>
<main id="console" hidden></main>
<script type="module" src="${CONSOLE_SCRIPT_PATH}"></script>
</body>
</html>
`;

export function operatorConsoleRoutes(
  deps: OperatorConsoleDeps & { auth: OperatorAuth; payments: PaymentService; publicUrl: string },
): Router {
  const router = Router();
  const { auth, payments, sessions } = deps;
  const secure = deps.publicUrl.startsWith("https:");
  let script: string | undefined;

  router.get(OPERATOR_CONSOLE_PATH, (_req, res) => {
    res
      .type("html")
      .set(
        "Content-Security-Policy",
        "default-src 'none'; script-src 'self'; connect-src 'self'; style-src 'unsafe-inline'; img-src 'self' data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
      )
      .send(CONSOLE_PAGE);
  });
  router.get(CONSOLE_SCRIPT_PATH, (_req, res) => {
    script ??= consoleScript();
    res.type("text/javascript").set("Cache-Control", "no-cache").send(script);
  });

  // Whether the request carries a session, answered 200 either way: the page asks it at every load, and a page
  // signed out is not a failure. What a sign-in is made for comes with it (the SDK makes console links from it).
  router.get(OPERATOR_SESSION_PATH, async (req, res) => {
    const session = await auth.sessionOf(req);
    const answer: OperatorSessionState = {
      session: session ? { address: session.address, expiresAt: session.expiresAt.toISOString() } : null,
      signIn: {
        origin: new URL(deps.publicUrl).origin,
        chains: [...payments.signInChains],
        maxAgeSeconds: SIGN_IN_MAX_AGE_MS / 1000,
      },
    };
    res.set("Cache-Control", "no-store").json(operatorSessionStateSchema.parse(answer));
  });
  // A Sign-In-With-X made for this path, by the operator, opens an hour's session (an HttpOnly cookie).
  router.post(OPERATOR_SESSION_PATH, async (req, res) => {
    const address = await auth.operatorOf(req, OPERATOR_SESSION_PATH);
    const expiresAt = new Date(payments.now().getTime() + SESSION_MS);
    const token = await sessions.open(address, expiresAt);
    res.cookie(SESSION_COOKIE, token, {
      httpOnly: true,
      sameSite: "strict",
      secure,
      path: OPERATOR_CONSOLE_PATH,
      maxAge: SESSION_MS,
    });
    const answer: OperatorSession = { address, expiresAt: expiresAt.toISOString() };
    res.json(operatorSessionSchema.parse(answer));
  });
  router.delete(OPERATOR_SESSION_PATH, async (req, res) => {
    const token = sessionTokenOf(req);
    if (token) await sessions.close(token);
    res.clearCookie(SESSION_COOKIE, { path: OPERATOR_CONSOLE_PATH }).status(204).end();
  });

  router.get(OPERATOR_OVERVIEW_PATH, async (req, res) => {
    await auth.operatorOf(req, OPERATOR_OVERVIEW_PATH, { session: true });
    const [report, pending, missions] = await Promise.all([
      ledgerReport(payments, { limit: 50 }),
      deps.pendingSettlements(),
      deps.missionQueue(),
    ]);
    const overview: OperatorOverview = {
      report,
      pending,
      missions,
      upstreams: deps.upstreams(),
      refusals: deps.refusals(),
      transactionUrl: EXPLORERS[payments.terms.network] ?? null,
    };
    res.set("Cache-Control", "no-store").json(operatorOverviewSchema.parse(overview));
  });
  return router;
}
