import { DEVNET_ACCOUNTS } from "@agent-tools/devnet";

/** The payment recipient and settlement key of the local chains: devnet account 0 (a public test key). */
export const DEVNET_PAYMENTS = {
  PAY_TO: DEVNET_ACCOUNTS[0]!.address,
  FACILITATOR_PRIVATE_KEY: DEVNET_ACCOUNTS[0]!.privateKey,
};
