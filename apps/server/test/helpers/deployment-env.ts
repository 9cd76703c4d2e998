import type { DevnetDeployment } from "@agent-tools/devnet";

/**
 * The server's environment for a devnet deployment, as an operator would write it: the chains' RPC URLs (or
 * `rpc`, for a proxy in front of them; none for an in-process devnet, whose clients are handed to `composeService`),
 * the contracts, and the payment terms (paid in the devnet's USD token to account 0). What settles (a facilitator
 * key or URL) and everything else is the caller's.
 */
export function deploymentEnv(deployment: DevnetDeployment, rpc?: { l1: string; l2: string }): Record<string, string> {
  const l1 = rpc?.l1 ?? deployment.l1.rpcUrl;
  const l2 = rpc?.l2 ?? deployment.l2.rpcUrl;
  return {
    ...(l1 ? { L1_RPC_URL: l1 } : {}),
    ...(l2 ? { L2_RPC_URL: l2 } : {}),
    COLLECTION_ADDRESS: deployment.addresses.collection,
    IDENTITY_REGISTRY_ADDRESS: deployment.addresses.identityRegistry,
    PAYMENT_NETWORK: `eip155:${deployment.l2.chainId}`,
    PAYMENT_ASSET: deployment.addresses.usdToken,
    PAY_TO: deployment.accounts[0]!.address,
  };
}
