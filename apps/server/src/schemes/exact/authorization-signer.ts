/**
 * Who signed an EIP-3009 payment: the one signature recovery of a paid call. The paid-call core asks it first, so
 * that nothing is done in a payer's name (its slot, its rate, its claims, its log lines) before the payment is
 * known to be the payer's; the built-in facilitator asks it again when it verifies, and gets the answer already
 * recovered for that payment (docs/threat-model.md, "Payers").
 */
import type { PaymentPayload } from "@x402/core/types";
import { type Address, getAddress, type Hex, type TypedDataDefinition } from "viem";
import type { SignedRequirement } from "../../paid-call/payment-scheme.js";
import { recoverTypedDataSigner } from "../../signatures/recover-signer.js";
import { eip3009PayloadSchema } from "./payment-payload.js";

/** EIP-712 types of an EIP-3009 `TransferWithAuthorization`: what the payer signs. */
export const transferWithAuthorizationTypes = {
  TransferWithAuthorization: [
    { name: "from", type: "address" },
    { name: "to", type: "address" },
    { name: "value", type: "uint256" },
    { name: "validAfter", type: "uint256" },
    { name: "validBefore", type: "uint256" },
    { name: "nonce", type: "bytes32" },
  ],
} as const;

/** Recovers a typed-data signer (replaceable, so that a test can count recoveries). */
export type RecoverTypedDataSigner = (parameters: TypedDataDefinition & { signature: Hex }) => Promise<Address>;

/** The signer of a payment's authorization, or undefined when the payment carries none that can be read. */
export type AuthorizationSigner = (
  payload: PaymentPayload,
  requirements: SignedRequirement,
) => Promise<Address | undefined>;

/**
 * An {@link AuthorizationSigner} that recovers each payment once: the answer is kept with the payment object (and
 * the domain it was recovered under) for as long as that object lives.
 */
export function createAuthorizationSigner(
  recover: RecoverTypedDataSigner = recoverTypedDataSigner,
): AuthorizationSigner {
  const recovered = new WeakMap<PaymentPayload, { domain: string; signer: Promise<Address | undefined> }>();
  return (payload, requirements) => {
    const extra = requirements.extra as { name?: string; version?: string } | undefined;
    const domain = `${requirements.network}|${requirements.asset}|${extra?.name}|${extra?.version}`.toLowerCase();
    const known = recovered.get(payload);
    if (known?.domain === domain) return known.signer;
    const signer = recoverSigner(recover, payload, requirements, extra);
    recovered.set(payload, { domain, signer });
    return signer;
  };
}

async function recoverSigner(
  recover: RecoverTypedDataSigner,
  payload: PaymentPayload,
  requirements: SignedRequirement,
  extra: { name?: string; version?: string } | undefined,
): Promise<Address | undefined> {
  const parsed = eip3009PayloadSchema.safeParse(payload.payload);
  if (!parsed.success || !extra?.name || !extra.version) return undefined;
  const { authorization, signature } = parsed.data;
  const chainId = Number(requirements.network.split(":")[1]);
  try {
    return await recover({
      domain: { name: extra.name, version: extra.version, chainId, verifyingContract: getAddress(requirements.asset) },
      types: transferWithAuthorizationTypes,
      primaryType: "TransferWithAuthorization",
      message: {
        from: getAddress(authorization.from),
        to: getAddress(authorization.to),
        value: BigInt(authorization.value),
        validAfter: BigInt(authorization.validAfter),
        validBefore: BigInt(authorization.validBefore),
        nonce: authorization.nonce as Hex,
      },
      signature: signature as Hex,
    });
  } catch {
    return undefined;
  }
}
