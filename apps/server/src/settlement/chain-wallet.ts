/**
 * A viem wallet of a facilitator key over the payment chain's client, and x402's EVM facilitator signer over such a
 * wallet, as x402's facilitator READMEs compose one: the built-in channel and `upto` facilitators and the tests'
 * reference facilitators build theirs here.
 */
import { type FacilitatorEvmSigner, toFacilitatorEvmSigner } from "@x402/evm";
import {
  type Chain,
  createWalletClient,
  custom,
  defineChain,
  type LocalAccount,
  type PublicActions,
  type PublicClient,
  publicActions,
  type Transport,
  type WalletClient,
} from "viem";

/** A wallet of one key over the payment chain, with the public actions. */
export type ChainWallet = WalletClient<Transport, Chain, LocalAccount> & PublicActions<Transport, Chain, LocalAccount>;

export interface ChainWalletParameters {
  account: LocalAccount;
  /** CAIP-2 network of the chain, `eip155:<chainId>`. */
  network: string;
  /** The chain's client: its transport carries the wallet's reads and sends. */
  chain: Pick<PublicClient, "request">;
  /** How often a receipt is polled for, in ms. */
  pollingInterval: number;
  /** The wallet's own retries of a failed request (viem's default unless given). */
  retryCount?: number;
}

/** A wallet of `account` with the public actions (its reads carry the account, as a simulation from it needs). */
export function chainWalletOf({
  account,
  network,
  chain,
  pollingInterval,
  retryCount,
}: ChainWalletParameters): ChainWallet {
  return createWalletClient({
    account,
    chain: defineChain({
      id: Number(network.split(":")[1]),
      name: network,
      nativeCurrency: { name: "Ether", symbol: "ETH", decimals: 18 },
      rpcUrls: { default: { http: [] } },
    }),
    transport: custom(
      { request: (args) => chain.request(args as never) },
      retryCount !== undefined ? { retryCount } : {},
    ),
    pollingInterval,
  }).extend(publicActions);
}

/** What x402's facilitator signer needs of a wallet: its account, reads, sends and receipts. */
type SigningWallet = Pick<
  ChainWallet,
  "readContract" | "verifyTypedData" | "writeContract" | "sendTransaction" | "waitForTransactionReceipt" | "getCode"
> & { account: { address: `0x${string}` } };

/** x402's EVM facilitator signer over `wallet`: every read and send goes through it. */
export function facilitatorSignerOf(wallet: SigningWallet): FacilitatorEvmSigner {
  return toFacilitatorEvmSigner({
    address: wallet.account.address,
    readContract: (args) => wallet.readContract(args as never),
    verifyTypedData: (args) => wallet.verifyTypedData(args as never),
    writeContract: (args) => wallet.writeContract(args as never),
    sendTransaction: (args) => wallet.sendTransaction(args as never),
    waitForTransactionReceipt: (args) => wallet.waitForTransactionReceipt(args as never),
    getCode: (args) => wallet.getCode(args as never),
  });
}
