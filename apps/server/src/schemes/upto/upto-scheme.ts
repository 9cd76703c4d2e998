/**
 * The `upto` scheme on EVM chains as a plug-in of the paid call (paid-call/payment-scheme.ts): a Permit2 witness
 * transfer of up to the price (./upto-payload.ts), its signer recovered natively before anything is done in the
 * payer's name, verified and settled by the facilitator for the call's metered charge (paid-call/settle-call.ts).
 * Its built-in facilitator (./upto-facilitator.ts) and its reconciler (./upto-settlements.ts) are composed beside it
 * (startup/compose-upto.ts, startup/compose.ts).
 */
import { PERMIT2_ADDRESS } from "@agent-tools/contracts";
import type { PaymentPayload } from "@x402/core/types";
import { uptoPermit2WitnessTypes } from "@x402/evm";
import { type Address, getAddress, type Hex } from "viem";
import type { PaymentScheme, SignedRequirement } from "../../paid-call/payment-scheme.js";
import { recoverTypedDataSigner } from "../../signatures/recover-signer.js";
import type { RecoverTypedDataSigner } from "../exact/authorization-signer.js";
import { SETTLEMENT_MARGIN_SECONDS } from "../exact/payment-payload.js";
import { readUptoAuthorization, uptoKeyOf, uptoPayloadSchema } from "./upto-payload.js";

/** x402's name of the scheme, as in `accepts[].scheme`. */
export const UPTO = "upto";

export interface UptoSchemeParameters {
  /** The signature recovery (tests count it). */
  recover?: RecoverTypedDataSigner;
  /** Seconds a permit must still be valid for when its call is admitted: time to run the tool and settle. */
  marginSeconds?: number;
}

export function createUptoScheme(parameters: UptoSchemeParameters = {}): PaymentScheme {
  const recover = parameters.recover ?? recoverTypedDataSigner;
  const marginSeconds = parameters.marginSeconds ?? SETTLEMENT_MARGIN_SECONDS;
  // One recovery per payment object and chain.
  const recovered = new WeakMap<PaymentPayload, { network: string; signer: Promise<Address | undefined> }>();
  return {
    scheme: UPTO,
    read: (payment, quoted, now) => readUptoAuthorization(payment, quoted, now, marginSeconds),
    payerOf: (payment) => {
      const parsed = uptoPayloadSchema.safeParse(payment.payload);
      return parsed.success ? getAddress(parsed.data.permit2Authorization.from) : undefined;
    },
    keyOf: uptoKeyOf,
    signer: (payment, requirements) => {
      const known = recovered.get(payment);
      if (known?.network === requirements.network) return known.signer;
      const signer = recoverPermitSigner(recover, payment, requirements);
      recovered.set(payment, { network: requirements.network, signer });
      return signer;
    },
  };
}

/**
 * Who signed an `upto` payment's permit: the EIP-712 `PermitWitnessTransferFrom` under Permit2's domain on the
 * payment chain, typed exactly as x402's client signs it (`uptoPermit2WitnessTypes` of `@x402/evm`).
 */
async function recoverPermitSigner(
  recover: RecoverTypedDataSigner,
  payment: PaymentPayload,
  requirements: SignedRequirement,
): Promise<Address | undefined> {
  const parsed = uptoPayloadSchema.safeParse(payment.payload);
  if (!parsed.success) return undefined;
  const { permit2Authorization: auth, signature } = parsed.data;
  const chainId = Number(requirements.network.split(":")[1]);
  try {
    return await recover({
      domain: { name: "Permit2", chainId, verifyingContract: PERMIT2_ADDRESS },
      types: uptoPermit2WitnessTypes,
      primaryType: "PermitWitnessTransferFrom",
      message: {
        permitted: { token: getAddress(auth.permitted.token), amount: BigInt(auth.permitted.amount) },
        spender: getAddress(auth.spender),
        nonce: BigInt(auth.nonce),
        deadline: BigInt(auth.deadline),
        witness: {
          to: getAddress(auth.witness.to),
          facilitator: getAddress(auth.witness.facilitator),
          validAfter: BigInt(auth.witness.validAfter),
        },
      },
      signature: signature as Hex,
    });
  } catch {
    return undefined;
  }
}
