/**
 * x402 `exact` payments with real EIP-3009 signatures whose every field can be chosen: the payment abuse cases sign
 * what an attacker would (a lower value, another payee, an expired window, a second authorization on the nonce of
 * the first...) with a real key, and do on chain what an attacker would (spend or cancel a nonce first).
 */
import { usdTokenAbi } from "@agent-tools/contracts";
import type { PaymentRequirements } from "@x402/core/types";
import {
  type Account,
  type Address,
  type Chain,
  type Hex,
  type PrivateKeyAccount,
  type PublicClient,
  type Transport,
  toHex,
  type WalletClient,
} from "viem";
import { transferWithAuthorizationTypes } from "../../src/schemes/exact/authorization-signer.js";

export interface AuthorizationFields {
  from?: Address;
  to?: Address;
  value?: string;
  validAfter?: number;
  validBefore?: number;
  nonce?: Hex;
  /** The EIP-712 domain's contract (the asset) and chain. */
  verifyingContract?: Address;
  chainId?: number;
  /** Fields of `accepted` (the requirement the payment says it pays). */
  accepted?: Partial<PaymentRequirements>;
}

/** A PAYMENT-SIGNATURE header for `requirements`, signed by `signer`, with `fields` overriding what a client sets. */
export async function signedPayment(
  signer: PrivateKeyAccount,
  requirements: PaymentRequirements,
  chainId: number,
  fields: AuthorizationFields = {},
): Promise<string> {
  const now = Math.floor(Date.now() / 1000);
  const authorization = {
    from: fields.from ?? signer.address,
    to: fields.to ?? (requirements.payTo as Address),
    value: fields.value ?? requirements.amount,
    validAfter: String(fields.validAfter ?? now - 600),
    validBefore: String(fields.validBefore ?? now + requirements.maxTimeoutSeconds),
    nonce: fields.nonce ?? toHex(crypto.getRandomValues(new Uint8Array(32))),
  };
  const extra = requirements.extra as { name: string; version: string };
  const signature = await signer.signTypedData({
    domain: {
      name: extra.name,
      version: extra.version,
      chainId: fields.chainId ?? chainId,
      verifyingContract: fields.verifyingContract ?? (requirements.asset as Address),
    },
    types: transferWithAuthorizationTypes,
    primaryType: "TransferWithAuthorization",
    message: {
      ...authorization,
      value: BigInt(authorization.value),
      validAfter: BigInt(authorization.validAfter),
      validBefore: BigInt(authorization.validBefore),
    },
  });
  const payload = {
    x402Version: 2,
    accepted: { ...requirements, ...fields.accepted },
    payload: { signature, authorization },
  };
  return Buffer.from(JSON.stringify(payload)).toString("base64");
}

/** The payment a PAYMENT-SIGNATURE header carries: its authorization and signature. */
export function authorizationOf(header: string): {
  authorization: { from: Address; to: Address; value: string; validAfter: string; validBefore: string; nonce: Hex };
  signature: Hex;
} {
  return JSON.parse(Buffer.from(header, "base64").toString("utf8")).payload;
}

/**
 * Sends the authorization of `header` on chain from `wallet` (anyone may submit a signed authorization), and waits
 * for it to be mined: what a payer does to spend its nonce before the service settles.
 */
export async function submitAuthorization(
  wallet: WalletClient<Transport, Chain | undefined, Account>,
  chain: PublicClient,
  asset: Address,
  header: string,
): Promise<Hex> {
  const { authorization: a, signature } = authorizationOf(header);
  const hash = await wallet.writeContract({
    chain: null,
    address: asset,
    abi: usdTokenAbi,
    functionName: "transferWithAuthorization",
    args: [a.from, a.to, BigInt(a.value), BigInt(a.validAfter), BigInt(a.validBefore), a.nonce, signature],
  });
  await chain.waitForTransactionReceipt({ hash });
  return hash;
}

/** The payer cancels its authorization's nonce on chain (EIP-3009 `cancelAuthorization`), and waits for it. */
export async function cancelAuthorization(
  payer: PrivateKeyAccount,
  wallet: WalletClient<Transport, Chain | undefined, Account>,
  chain: PublicClient,
  requirements: PaymentRequirements,
  chainId: number,
  nonce: Hex,
): Promise<Hex> {
  const extra = requirements.extra as { name: string; version: string };
  const signature = await payer.signTypedData({
    domain: { name: extra.name, version: extra.version, chainId, verifyingContract: requirements.asset as Address },
    types: {
      CancelAuthorization: [
        { name: "authorizer", type: "address" },
        { name: "nonce", type: "bytes32" },
      ],
    },
    primaryType: "CancelAuthorization",
    message: { authorizer: payer.address, nonce },
  });
  const hash = await wallet.writeContract({
    chain: null,
    address: requirements.asset as Address,
    abi: usdTokenAbi,
    functionName: "cancelAuthorization",
    args: [payer.address, nonce, signature],
  });
  await chain.waitForTransactionReceipt({ hash });
  return hash;
}
