// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

/// @title Control semantics of the Agent Tools binding contract (outside ERC-8217's verification scope).
/// @dev The identity registry asks the binding contract whether `account` currently controls a bound agent
///      (for ERC-721 bindings: owns the master token).
interface IAgentBindingsControl {
    function isController(uint256 agentId, address account) external view returns (bool);
}
