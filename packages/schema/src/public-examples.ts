import { registrationServices } from "./registration.js";

/** The embedded default's origin, which the examples' URLs name. */
const ORIGIN = "http://127.0.0.1:8402";

/**
 * Public answers about token 7 as the embedded default serves them at http://127.0.0.1:8402 (the devnet's fixed
 * seeding): the reference page shows real records, and a server test compares each with the live answer.
 */
export const publicExamples = {
  agentInfo: {
    tokenId: 7,
    name: "Agent #7",
    edition: "Genesis",
    owner: "0x14dC79964da2C08b23698B3D3cc7Ca32193d9955",
    image: `${ORIGIN}/agents/7/image.svg`,
    traits: {
      Class: "Scout",
      Core: "Copper",
      Signal: "Mid-band",
      Mission: "Liquidity",
      Visor: "Mirror",
      Aura: "Frost",
    },
    rarity: {
      tier: "Common",
      score: 14.9853,
      rank: 3056,
      of: 6000,
    },
    clearance: "Holder",
    registration: {
      agentId: "7",
      agentRegistry: "eip155:31337:0xe7f1725E7734CE288F8367e1Bb143E90bb3F0512",
      registrationFile: `${ORIGIN}/.well-known/agents/7.json`,
      binding: {
        bound: true,
        standard: "ERC-8217",
        statusUrl: `${ORIGIN}/agents/7/binding`,
      },
    },
  },
  registrationFile: {
    type: "https://eips.ethereum.org/EIPS/eip-8004#registration-v1",
    name: "Agent #7",
    description:
      "Agent #7 is a Common token-bound agent of the Agent Tools collection: a Scout on Liquidity missions, rarity rank 3056. Clearance Holder.",
    image: `${ORIGIN}/agents/7/image.svg`,
    services: registrationServices(ORIGIN, 7),
    x402Support: true,
    active: true,
    registrations: [
      {
        agentId: 7,
        agentRegistry: "eip155:31337:0xe7f1725E7734CE288F8367e1Bb143E90bb3F0512",
      },
    ],
    supportedTrust: [],
  },
  bindingStatus: {
    tokenId: 7,
    agentId: "7",
    agentRegistry: "eip155:31337:0xe7f1725E7734CE288F8367e1Bb143E90bb3F0512",
    bound: true,
    standard: "ERC-8217",
    bindingContract: "0x9fE46736679d2D9a65F0992F2272dE9f3c7fa6e0",
    tokenStandard: "ERC721",
    tokenContract: "0x5FbDB2315678afecb367f032d93F642f64180aa3",
    boundTokenId: "7",
    owner: "0x14dC79964da2C08b23698B3D3cc7Ca32193d9955",
    blockNumber: "53",
  },
};
