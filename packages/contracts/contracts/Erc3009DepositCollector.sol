// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

import {IERC20} from "@openzeppelin/contracts/token/ERC20/IERC20.sol";
import {SafeERC20} from "@openzeppelin/contracts/token/ERC20/utils/SafeERC20.sol";

import {IDepositCollector} from "./interfaces/IDepositCollector.sol";
import {IERC3009Receive} from "./interfaces/IERC3009Receive.sol";

/// @title EIP-3009 deposit collector of the batch-settlement channels
/// @notice Pulls a channel deposit with the payer's `receiveWithAuthorization` signature (addressed to this
///         collector, which EIP-3009 requires to be the caller) and forwards it to the settlement contract.
/// @dev `collectorData` is `abi.encode(uint256 validAfter, uint256 validBefore, uint256 salt, bytes signature)`; the
///      authorization's nonce is `keccak256(abi.encode(channelId, salt))`, binding it to one channel. The settlement
///      contract's address is a constant (the scheme's canonical address): the devnet places this code with
///      `hardhat_setCode`, so there is no constructor and no immutable.
contract Erc3009DepositCollector is IDepositCollector {
    using SafeERC20 for IERC20;

    /// @notice The only caller allowed to collect: the batch-settlement contract at its canonical address.
    address public constant BATCH_SETTLEMENT = 0x4020074e9dF2ce1deE5A9C1b5c3f541D02a10003;

    error OnlyBatchSettlement();

    /// @inheritdoc IDepositCollector
    function collect(address payer, address token, uint256 amount, bytes32 channelId, bytes calldata collectorData)
        external
    {
        if (msg.sender != BATCH_SETTLEMENT) revert OnlyBatchSettlement();
        (uint256 validAfter, uint256 validBefore, uint256 salt, bytes memory signature) =
            abi.decode(collectorData, (uint256, uint256, uint256, bytes));
        IERC3009Receive(token).receiveWithAuthorization(
            payer, address(this), amount, validAfter, validBefore, keccak256(abi.encode(channelId, salt)), signature
        );
        IERC20(token).safeTransfer(msg.sender, amount);
    }
}
