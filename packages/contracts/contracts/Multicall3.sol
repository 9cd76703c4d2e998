// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

/// @title Multicall3-compatible batcher
/// @notice The Multicall3 ABI (`aggregate3`, `tryAggregate`, ...) that viem's `multicall` and the x402 EVM
///         facilitator call at the canonical address `0xcA11bde05977b3631167028862bE2a173976CA11`.
/// @dev The devnet places this contract's runtime code at the canonical address with `hardhat_setCode`; it holds
///      no state and no immutables.
contract Multicall3 {
    struct Call {
        address target;
        bytes callData;
    }

    struct Call3 {
        address target;
        bool allowFailure;
        bytes callData;
    }

    struct Call3Value {
        address target;
        bool allowFailure;
        uint256 value;
        bytes callData;
    }

    struct Result {
        bool success;
        bytes returnData;
    }

    error CallFailed(uint256 index);
    error ValueMismatch(uint256 expected, uint256 received);

    function aggregate(Call[] calldata calls)
        public
        payable
        returns (uint256 blockNumber, bytes[] memory returnData)
    {
        blockNumber = block.number;
        returnData = new bytes[](calls.length);
        for (uint256 i; i < calls.length; ++i) {
            (bool success, bytes memory data) = calls[i].target.call(calls[i].callData);
            if (!success) revert CallFailed(i);
            returnData[i] = data;
        }
    }

    function tryAggregate(bool requireSuccess, Call[] calldata calls)
        public
        payable
        returns (Result[] memory returnData)
    {
        returnData = new Result[](calls.length);
        for (uint256 i; i < calls.length; ++i) {
            (bool success, bytes memory data) = calls[i].target.call(calls[i].callData);
            if (requireSuccess && !success) revert CallFailed(i);
            returnData[i] = Result(success, data);
        }
    }

    function tryBlockAndAggregate(bool requireSuccess, Call[] calldata calls)
        public
        payable
        returns (uint256 blockNumber, bytes32 blockHash, Result[] memory returnData)
    {
        blockNumber = block.number;
        blockHash = blockhash(block.number);
        returnData = tryAggregate(requireSuccess, calls);
    }

    function blockAndAggregate(Call[] calldata calls)
        external
        payable
        returns (uint256 blockNumber, bytes32 blockHash, Result[] memory returnData)
    {
        (blockNumber, blockHash, returnData) = tryBlockAndAggregate(true, calls);
    }

    function aggregate3(Call3[] calldata calls) external payable returns (Result[] memory returnData) {
        returnData = new Result[](calls.length);
        for (uint256 i; i < calls.length; ++i) {
            Call3 calldata c = calls[i];
            (bool success, bytes memory data) = c.target.call(c.callData);
            if (!success && !c.allowFailure) revert CallFailed(i);
            returnData[i] = Result(success, data);
        }
    }

    function aggregate3Value(Call3Value[] calldata calls) external payable returns (Result[] memory returnData) {
        uint256 total;
        returnData = new Result[](calls.length);
        for (uint256 i; i < calls.length; ++i) {
            Call3Value calldata c = calls[i];
            total += c.value;
            (bool success, bytes memory data) = c.target.call{value: c.value}(c.callData);
            if (!success && !c.allowFailure) revert CallFailed(i);
            returnData[i] = Result(success, data);
        }
        if (msg.value != total) revert ValueMismatch(total, msg.value);
    }

    function getBlockHash(uint256 blockNumber) external view returns (bytes32) {
        return blockhash(blockNumber);
    }

    function getBlockNumber() external view returns (uint256) {
        return block.number;
    }

    function getCurrentBlockCoinbase() external view returns (address) {
        return block.coinbase;
    }

    function getCurrentBlockDifficulty() external view returns (uint256) {
        return block.prevrandao;
    }

    function getCurrentBlockGasLimit() external view returns (uint256) {
        return block.gaslimit;
    }

    function getCurrentBlockTimestamp() external view returns (uint256) {
        return block.timestamp;
    }

    function getEthBalance(address addr) external view returns (uint256) {
        return addr.balance;
    }

    function getLastBlockHash() external view returns (bytes32) {
        return blockhash(block.number - 1);
    }

    function getBasefee() external view returns (uint256) {
        return block.basefee;
    }

    function getChainId() external view returns (uint256) {
        return block.chainid;
    }
}
