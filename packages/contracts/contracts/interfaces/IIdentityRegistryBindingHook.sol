// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

/// @title The identity registry's entry point for its ERC-8217 binding contract.
/// @dev Only the binding contract configured in the registry may call it; the registry then writes the
///      reserved `agent-binding` metadata (the binding contract's 20-byte address) for each agent.
interface IIdentityRegistryBindingHook {
    function recordBindings(uint256 firstAgentId, uint256 count) external;
}
