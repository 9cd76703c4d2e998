// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

/// @title Deposit collector of the batch-settlement channels
/// @notice The settlement contract asks a collector to pull a payer's tokens for a channel deposit; the collector
///         must send exactly `amount` of `token` to its caller. The settlement contract checks its own balance
///         afterwards, so a collector that sends less makes the deposit revert.
interface IDepositCollector {
    /// @param payer Owner of the tokens.
    /// @param token ERC-20 to pull.
    /// @param amount Exact amount the caller must receive.
    /// @param channelId Channel the deposit is for (collectors bind their authorization to it).
    /// @param collectorData Collector-specific encoding of the payer's authorization.
    function collect(address payer, address token, uint256 amount, bytes32 channelId, bytes calldata collectorData)
        external;
}
