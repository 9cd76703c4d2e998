// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

/// @title ERC-8217 Agent NFT Identity Bindings (draft), as published in ethereum/ERCs `ERCS/erc-8217.md`.
/// @dev The ERC-8004 registry stores, under the reserved metadata key `agent-binding`, exactly the 20-byte
///      address of the binding contract; token standard, token contract and token id come only from
///      `bindingOf(agentId)`. Bindings are immutable once written.
interface IERCAgentBindings {
    enum TokenStandard {
        ERC721,
        ERC1155,
        ERC6909
    }

    struct Binding {
        TokenStandard standard;
        address tokenContract;
        uint256 tokenId;
    }

    event AgentBound(
        uint256 indexed agentId,
        TokenStandard indexed standard,
        address indexed tokenContract,
        uint256 tokenId,
        address registeredBy
    );

    function bindingOf(uint256 agentId) external view returns (Binding memory);
}
