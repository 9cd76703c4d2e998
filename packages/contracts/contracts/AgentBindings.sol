// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

import {Ownable} from "@openzeppelin/contracts/access/Ownable.sol";
import {ERC165} from "@openzeppelin/contracts/utils/introspection/ERC165.sol";
import {IERC721} from "@openzeppelin/contracts/token/ERC721/IERC721.sol";
import {IERC1155} from "@openzeppelin/contracts/token/ERC1155/IERC1155.sol";
import {IERC6909} from "@openzeppelin/contracts/interfaces/IERC6909.sol";
import {IERCAgentBindings} from "./interfaces/IERCAgentBindings.sol";
import {IAgentBindingsControl} from "./interfaces/IAgentBindingsControl.sol";
import {IIdentityRegistryBindingHook} from "./interfaces/IIdentityRegistryBindingHook.sol";

/// @title ERC-8217 binding contract of the Agent Tools identity registry
/// @notice Binds ERC-8004 agents of one identity registry to master tokens. Bindings are immutable; writing one
///         makes the registry record `agent-binding` = this contract's 20-byte address for the agent.
///
/// @dev Bindings are stored as ranges: `bindRange(firstAgentId, count, standard, tokenContract, firstTokenId)`
///      binds agent `firstAgentId + i` to token `firstTokenId + i`; each agent keeps only the 32-bit index of
///      its range (eight agents per storage word), so binding a whole collection costs a few transactions.
///      Control semantics (outside ERC-8217's scope): an ERC-721 binding is controlled by the master token's
///      current owner; ERC-1155 / ERC-6909 bindings by any holder of a non-zero balance of the token id.
contract AgentBindings is IERCAgentBindings, IAgentBindingsControl, ERC165, Ownable {
    struct BindingRange {
        uint256 firstAgentId;
        uint88 count;
        TokenStandard standard;
        address tokenContract;
        uint256 firstTokenId;
    }

    error InvalidBinding();
    error AlreadyBound(uint256 agentId);

    /// @notice The ERC-8004 identity registry whose agents this contract binds.
    address public immutable identityRegistry;

    BindingRange[] private _ranges;
    /// @dev agentId >> 3 => eight packed uint32 range indexes (index + 1; 0 = unbound).
    mapping(uint256 slot => uint256 packed) private _rangeIndexes;

    constructor(address initialOwner, address identityRegistry_) Ownable(initialOwner) {
        if (identityRegistry_ == address(0)) revert InvalidBinding();
        identityRegistry = identityRegistry_;
    }

    /// @notice Binds agent `agentId` to token `tokenId` of `tokenContract` (operator only).
    function bind(uint256 agentId, TokenStandard standard, address tokenContract, uint256 tokenId)
        external
        onlyOwner
    {
        _bindRange(agentId, 1, standard, tokenContract, tokenId);
    }

    /// @notice Binds agents `firstAgentId + i` to tokens `firstTokenId + i` for i < count (operator only).
    function bindRange(
        uint256 firstAgentId,
        uint256 count,
        TokenStandard standard,
        address tokenContract,
        uint256 firstTokenId
    ) external onlyOwner {
        _bindRange(firstAgentId, count, standard, tokenContract, firstTokenId);
    }

    /// @inheritdoc IERCAgentBindings
    /// @dev An unbound agent yields the zero binding (`tokenContract == address(0)`).
    function bindingOf(uint256 agentId) public view returns (Binding memory binding) {
        uint256 index = _rangeIndexOf(agentId);
        if (index == 0) return binding;
        BindingRange storage range = _ranges[index - 1];
        binding.standard = range.standard;
        binding.tokenContract = range.tokenContract;
        binding.tokenId = range.firstTokenId + (agentId - range.firstAgentId);
    }

    function isBound(uint256 agentId) external view returns (bool) {
        return _rangeIndexOf(agentId) != 0;
    }

    /// @inheritdoc IAgentBindingsControl
    function isController(uint256 agentId, address account) external view returns (bool) {
        if (account == address(0)) return false;
        Binding memory binding = bindingOf(agentId);
        if (binding.tokenContract == address(0)) return false;
        if (binding.standard == TokenStandard.ERC721) return _erc721Owner(binding) == account;
        if (binding.standard == TokenStandard.ERC1155) {
            try IERC1155(binding.tokenContract).balanceOf(account, binding.tokenId) returns (uint256 balance) {
                return balance != 0;
            } catch {
                return false;
            }
        }
        try IERC6909(binding.tokenContract).balanceOf(account, binding.tokenId) returns (uint256 balance) {
            return balance != 0;
        } catch {
            return false;
        }
    }

    /// @notice Current owner of the master token of an ERC-721 binding (zero otherwise, or if it has none).
    function controllerOf(uint256 agentId) external view returns (address) {
        Binding memory binding = bindingOf(agentId);
        if (binding.tokenContract == address(0) || binding.standard != TokenStandard.ERC721) return address(0);
        return _erc721Owner(binding);
    }

    /// @notice Number of binding ranges written.
    function rangeCount() external view returns (uint256) {
        return _ranges.length;
    }

    function supportsInterface(bytes4 interfaceId) public view override returns (bool) {
        return interfaceId == type(IERCAgentBindings).interfaceId || super.supportsInterface(interfaceId);
    }

    function _bindRange(
        uint256 firstAgentId,
        uint256 count,
        TokenStandard standard,
        address tokenContract,
        uint256 firstTokenId
    ) internal {
        if (tokenContract == address(0) || count == 0 || count > type(uint88).max) revert InvalidBinding();
        // Reject ranges whose agent or token ids would overflow.
        if (firstAgentId > type(uint256).max - count || firstTokenId > type(uint256).max - count) {
            revert InvalidBinding();
        }
        uint256 index = _ranges.length + 1;
        if (index > type(uint32).max) revert InvalidBinding();
        _ranges.push(
            BindingRange({
                firstAgentId: firstAgentId,
                count: uint88(count),
                standard: standard,
                tokenContract: tokenContract,
                firstTokenId: firstTokenId
            })
        );
        for (uint256 i; i < count;) {
            uint256 agentId = firstAgentId + i;
            uint256 slot = agentId >> 3;
            uint256 shift = (agentId & 7) * 32;
            uint256 packed = _rangeIndexes[slot];
            if ((packed >> shift) & 0xffffffff != 0) revert AlreadyBound(agentId);
            _rangeIndexes[slot] = packed | (index << shift);
            emit AgentBound(agentId, standard, tokenContract, firstTokenId + i, msg.sender);
            unchecked {
                ++i;
            }
        }
        IIdentityRegistryBindingHook(identityRegistry).recordBindings(firstAgentId, count);
    }

    function _rangeIndexOf(uint256 agentId) internal view returns (uint256) {
        return (_rangeIndexes[agentId >> 3] >> ((agentId & 7) * 32)) & 0xffffffff;
    }

    function _erc721Owner(Binding memory binding) internal view returns (address) {
        try IERC721(binding.tokenContract).ownerOf(binding.tokenId) returns (address tokenOwner) {
            return tokenOwner;
        } catch {
            return address(0);
        }
    }
}
