/**
 * The built-in x402 facilitator for the `exact` scheme on EVM chains (EIP-3009 `transferWithAuthorization`), shaped for
 * one signature recovery per paid call: `verify` checks everything once, `settle` only sends the transfer, in a batch
 * with the settlements of the moment (../../settlement/settlement-batcher.ts), and reads its receipt. The failure
 * reasons are x402's own names (docs/architecture.md, "Settlement").
 */
import type { PaymentPayload, PaymentRequirements, SettleResponse, VerifyResponse } from "@x402/core/types";
import {
  encodeFunctionData,
  getAddress,
  type Hash,
  type Hex,
  type PublicClient,
  parseSignature,
  WaitForTransactionReceiptTimeoutError,
} from "viem";
import type { BlockClock } from "../../settlement/block-clock.js";
import type { Facilitator } from "../../settlement/facilitator.js";
import { SETTLEMENT_PENDING } from "../../settlement/facilitator.js";
import type { SettlementBatcher } from "../../settlement/settlement-batcher.js";
import { type AuthorizationSigner, createAuthorizationSigner } from "./authorization-signer.js";
import { isCountingSettlement } from "./chain-settlements.js";
import {
  type Eip3009Payload,
  eip3009PayloadSchema,
  SETTLEMENT_MARGIN_SECONDS,
  VALID_BEFORE_SKEW_SECONDS,
} from "./payment-payload.js";

/** EIP-3009's functions and event as the facilitator uses them (eips.ethereum.org/EIPS/eip-3009; USDC v2.2). */
export const eip3009Abi = [
  {
    type: "function",
    name: "transferWithAuthorization",
    stateMutability: "nonpayable",
    inputs: [
      { name: "from", type: "address" },
      { name: "to", type: "address" },
      { name: "value", type: "uint256" },
      { name: "validAfter", type: "uint256" },
      { name: "validBefore", type: "uint256" },
      { name: "nonce", type: "bytes32" },
      { name: "v", type: "uint8" },
      { name: "r", type: "bytes32" },
      { name: "s", type: "bytes32" },
    ],
    outputs: [],
  },
  {
    type: "function",
    name: "transferWithAuthorization",
    stateMutability: "nonpayable",
    inputs: [
      { name: "from", type: "address" },
      { name: "to", type: "address" },
      { name: "value", type: "uint256" },
      { name: "validAfter", type: "uint256" },
      { name: "validBefore", type: "uint256" },
      { name: "nonce", type: "bytes32" },
      { name: "signature", type: "bytes" },
    ],
    outputs: [],
  },
  {
    type: "function",
    name: "authorizationState",
    stateMutability: "view",
    inputs: [
      { name: "authorizer", type: "address" },
      { name: "nonce", type: "bytes32" },
    ],
    outputs: [{ type: "bool" }],
  },
  {
    type: "function",
    name: "balanceOf",
    stateMutability: "view",
    inputs: [{ name: "account", type: "address" }],
    outputs: [{ type: "uint256" }],
  },
  {
    type: "event",
    name: "AuthorizationUsed",
    inputs: [
      { name: "authorizer", type: "address", indexed: true },
      { name: "nonce", type: "bytes32", indexed: true },
    ],
  },
] as const;

/** x402's reason for a settlement transaction that was mined and reverted: it moved nothing. */
export const SETTLEMENT_REVERTED = "invalid_exact_evm_transaction_failed";

export interface ExactEvmFacilitatorOptions {
  /** Reads on the payment chain (a client that batches concurrent calls makes verify one round trip). */
  client: PublicClient;
  /** Sends settlements, alone or in batches (../../settlement/settlement-batcher.ts). */
  sender: Pick<SettlementBatcher, "send">;
  /** CAIP-2 id of the payment chain, `eip155:<chainId>`. */
  network: string;
  /** How long `settle` waits for a receipt before reporting the settlement as sent but unconfirmed. */
  receiptTimeoutMs?: number;
  /**
   * Who signed a payment: the paid-call core's signer, which has recovered it already for that payment, so a paid
   * call costs one recovery (./authorization-signer.ts). Default: a signer of its own.
   */
  signer?: AuthorizationSigner;
  /**
   * Seconds an authorization must still be valid for to be verified: the settlement margin plus the batch window
   * (./payment-payload.ts, `settlementMarginSeconds`). Default: the margin alone.
   */
  marginSeconds?: number;
  /** Told the block of each receipt read, so batches learn when blocks come (../../settlement/block-clock.ts). */
  blockClock?: Pick<BlockClock, "mined">;
  /** The clock, in milliseconds. */
  now?: () => number;
}

type Parsed = { ok: true; payload: Eip3009Payload } | { ok: false; response: VerifyResponse };
type Receipt = Awaited<ReturnType<PublicClient["waitForTransactionReceipt"]>>;

export function createExactEvmFacilitator(options: ExactEvmFacilitatorOptions): Facilitator {
  const { client, sender, network } = options;
  const signerOf = options.signer ?? createAuthorizationSigner();
  const now = options.now ?? Date.now;
  const receiptTimeoutMs = options.receiptTimeoutMs ?? 30_000;
  const marginSeconds = options.marginSeconds ?? SETTLEMENT_MARGIN_SECONDS;

  function parse(payload: PaymentPayload, requirements: PaymentRequirements): Parsed {
    const parsed = eip3009PayloadSchema.safeParse(payload.payload);
    const payer = parsed.data?.authorization.from;
    const invalid = (invalidReason: string, invalidMessage?: string): Parsed => ({
      ok: false,
      response: {
        isValid: false,
        invalidReason,
        ...(invalidMessage ? { invalidMessage } : {}),
        ...(payer ? { payer } : {}),
      },
    });
    if (!parsed.success)
      return invalid("invalid_payload", "the payload is not an EIP-3009 authorization and signature");
    if (payload.accepted?.scheme !== "exact" || requirements.scheme !== "exact")
      return invalid("invalid_exact_evm_scheme");
    if (payload.accepted.network !== network || requirements.network !== network) {
      return invalid("invalid_network", `this facilitator settles on ${network}`);
    }
    return { ok: true, payload: parsed.data };
  }

  /** The receipts being waited for: the settlements of one batch wait for their transaction's receipt once. */
  const waiting = new Map<Hash, Promise<Receipt>>();
  function receiptOf(hash: Hash): Promise<Receipt> {
    let receipt = waiting.get(hash);
    if (!receipt) {
      receipt = client.waitForTransactionReceipt({ hash, timeout: receiptTimeoutMs });
      waiting.set(hash, receipt);
      void receipt.then(
        (mined) => {
          waiting.delete(hash);
          options.blockClock?.mined(hash, mined.blockNumber, now());
        },
        () => waiting.delete(hash),
      );
    }
    return receipt;
  }

  return {
    async verify(payload, requirements) {
      const parsed = parse(payload, requirements);
      if (!parsed.ok) return parsed.response;
      const { authorization } = parsed.payload;
      const payer = getAddress(authorization.from);
      const invalid = (invalidReason: string, invalidMessage?: string): VerifyResponse => ({
        isValid: false,
        invalidReason,
        ...(invalidMessage ? { invalidMessage } : {}),
        payer,
      });
      const extra = requirements.extra as { name?: string; version?: string } | undefined;
      if (!extra?.name || !extra.version) return invalid("invalid_exact_evm_missing_eip712_domain");
      if (getAddress(authorization.to) !== getAddress(requirements.payTo)) {
        return invalid("invalid_exact_evm_recipient_mismatch");
      }
      if (BigInt(authorization.value) !== BigInt(requirements.amount)) {
        return invalid("invalid_exact_evm_payload_authorization_value_mismatch");
      }
      const seconds = Math.floor(now() / 1000);
      // EIP-3009 settles only in a block whose timestamp is after validAfter: one valid from this very second on
      // would revert, and the facilitator would pay its gas for nothing.
      if (BigInt(authorization.validAfter) >= BigInt(seconds)) {
        return invalid("invalid_exact_evm_payload_authorization_valid_after", "the authorization is not valid yet");
      }
      const validBefore = BigInt(authorization.validBefore);
      if (validBefore < BigInt(seconds + marginSeconds)) {
        return invalid("invalid_exact_evm_payload_authorization_valid_before", "the authorization has expired");
      }
      if (validBefore > BigInt(seconds + requirements.maxTimeoutSeconds + VALID_BEFORE_SKEW_SECONDS)) {
        return invalid(
          "invalid_exact_evm_payload_authorization_valid_before",
          `the authorization is valid for longer than the ${requirements.maxTimeoutSeconds} s the price allows`,
        );
      }
      const asset = getAddress(requirements.asset);
      const signer = await signerOf(payload, requirements);
      if (!signer) return invalid("invalid_exact_evm_signature", "the signature cannot be read");
      if (signer !== payer)
        return invalid("invalid_exact_evm_signature", "the authorization is not signed by its payer");
      const [balance, used] = await Promise.all([
        client.readContract({ address: asset, abi: eip3009Abi, functionName: "balanceOf", args: [payer] }),
        client.readContract({
          address: asset,
          abi: eip3009Abi,
          functionName: "authorizationState",
          args: [payer, authorization.nonce as Hex],
        }),
      ]);
      if (used) return invalid("invalid_exact_evm_nonce_already_used", "the authorization was already used");
      if (balance < BigInt(authorization.value)) {
        return invalid("invalid_exact_evm_insufficient_balance", "the payer's balance does not cover the price");
      }
      return { isValid: true, payer };
    },

    async settle(payload, requirements) {
      const parsed = parse(payload, requirements);
      if (!parsed.ok) {
        return {
          success: false,
          errorReason: parsed.response.invalidReason ?? "invalid_payload",
          transaction: "",
          network: requirements.network,
          ...(parsed.response.payer ? { payer: parsed.response.payer } : {}),
        } as SettleResponse;
      }
      const { authorization, signature } = parsed.payload;
      const payer = getAddress(authorization.from);
      const asset = getAddress(requirements.asset);
      const args = [
        payer,
        getAddress(authorization.to),
        BigInt(authorization.value),
        BigInt(authorization.validAfter),
        BigInt(authorization.validBefore),
        authorization.nonce as Hex,
      ] as const;
      // A 65-byte ECDSA signature goes as (v, r, s), which every EIP-3009 token has; anything else as bytes.
      const data =
        signature.length === 132
          ? (() => {
              const { r, s, v, yParity } = parseSignature(signature as Hex);
              return encodeFunctionData({
                abi: eip3009Abi,
                functionName: "transferWithAuthorization",
                args: [...args, Number(v ?? BigInt(yParity + 27)), r, s],
              });
            })()
          : encodeFunctionData({
              abi: eip3009Abi,
              functionName: "transferWithAuthorization",
              args: [...args, signature as Hex],
            });
      const sent = await sender.send({ to: asset, data });
      const result = (errorReason?: string): SettleResponse =>
        ({
          success: errorReason === undefined,
          transaction: sent.hash,
          network: requirements.network,
          payer,
          ...(errorReason ? { errorReason } : {}),
        }) as SettleResponse;
      let receipt: Receipt;
      try {
        receipt = await receiptOf(sent.hash);
      } catch (error) {
        // Sent, not seen through: the caller keeps the claim for reconciliation (the chain decides).
        if (error instanceof WaitForTransactionReceiptTimeoutError) return result(SETTLEMENT_PENDING);
        throw error;
      }
      if (receipt.status !== "success") return result(SETTLEMENT_REVERTED);
      const paid = isCountingSettlement(receipt, {
        asset,
        payer,
        payTo: getAddress(requirements.payTo),
        amount: BigInt(requirements.amount),
        nonce: authorization.nonce as Hex,
      });
      if (paid) return result();
      // In a batch, an authorization that reverted fails alone, inside a transaction that succeeded: it moved
      // nothing, as a single settlement that reverted.
      return result(sent.batchSize > 1 ? SETTLEMENT_REVERTED : "invalid_exact_evm_transfer_event_mismatch");
    },
  };
}
