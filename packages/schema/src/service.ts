/* Names and paths of the service shared by its discovery documents. */

/** Name of the service in the payment catalog, its items and the tool manifests. */
export const SERVICE_DISPLAY_NAME = "Agent Tools";

/** One-paragraph description of the service (payment catalog, tool manifests). */
export const SERVICE_DESCRIPTION =
  "Pay-per-call intelligence for the 6666 token-bound agents of the collection: agent intel, NFT drop, token, " +
  "portfolio, allowlist and offer radars. Pay with x402 v2 in a USD stablecoin: 1.00 USD a call for any caller, " +
  "no token or account needed; 0.01 USD for a holder whose token has the tool's clearance, signed in with Ethereum.";

/** Path of the service's icon (the server's reference routes serve it). */
export const SERVICE_ICON_PATH = "/icon.svg";
/** Path of the payment catalog. */
export const PAYMENT_CATALOG_PATH = "/.well-known/x402";

/** The API's version, as the OpenAPI document and the MCP endpoint's `initialize` answer it. */
export const API_VERSION = "1.0.0";
