import { DEVNET_ACCOUNTS } from "@agent-tools/devnet";
import pino from "pino";
import { type AppDeps, createApp } from "../../src/app.js";
import { loadConfig } from "../../src/config.js";
import { listen, type RunningServer } from "../../src/server.js";

/** The payment recipient and settlement key of the local chains: devnet account 0 (a public test key). */
export const DEVNET_PAYMENTS = {
  PAY_TO: DEVNET_ACCOUNTS[0]!.address,
  FACILITATOR_PRIVATE_KEY: DEVNET_ACCOUNTS[0]!.privateKey,
};

/** Starts the app on 127.0.0.1 with an ephemeral port; the caller closes it. */
export async function startTestServer(
  overrides: Partial<AppDeps> = {},
  env: Record<string, string> = {},
): Promise<RunningServer> {
  const config = loadConfig({ PORT: "0", PUBLIC_URL: "https://tools.test", ...DEVNET_PAYMENTS, ...env });
  const app = createApp({ config, logger: pino({ level: "silent" }), ...overrides });
  const running = await listen(app, "127.0.0.1", 0);
  return running;
}
