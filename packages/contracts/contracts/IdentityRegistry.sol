// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

import {ERC721} from "@openzeppelin/contracts/token/ERC721/ERC721.sol";
import {Ownable} from "@openzeppelin/contracts/access/Ownable.sol";
import {EIP712} from "@openzeppelin/contracts/utils/cryptography/EIP712.sol";
import {SignatureChecker} from "@openzeppelin/contracts/utils/cryptography/SignatureChecker.sol";
import {IERC165} from "@openzeppelin/contracts/utils/introspection/IERC165.sol";
import {IERC4906} from "@openzeppelin/contracts/interfaces/IERC4906.sol";
import {BitMaps} from "@openzeppelin/contracts/utils/structs/BitMaps.sol";
import {Strings} from "@openzeppelin/contracts/utils/Strings.sol";
import {IAgentBindingsControl} from "./interfaces/IAgentBindingsControl.sol";
import {IIdentityRegistryBindingHook} from "./interfaces/IIdentityRegistryBindingHook.sol";

/// @title ERC-8004 Identity Registry
/// @notice ERC-721 of agents (agentId = tokenId, agentURI = tokenURI) with on-chain metadata, the reserved
///         `agentWallet` key (EIP-712 proven wallet, cleared on transfer) and the ERC-8217 reserved key
///         `agent-binding` (20-byte address of the binding contract, written only by that contract, immutable).
///
/// @dev Agent ids are assigned incrementally starting at 1. Besides the draft's `register` overloads the
///      operator (owner) can `registerBatch` agents whose agentURI is `baseAgentURI + agentId + suffix`
///      (no per-agent string storage). `agentWallet` starts as the owner's address without a storage write.
contract IdentityRegistry is IERC4906, IIdentityRegistryBindingHook, ERC721, Ownable, EIP712 {
    using BitMaps for BitMaps.BitMap;
    using Strings for uint256;

    struct MetadataEntry {
        string metadataKey;
        bytes metadataValue;
    }

    event Registered(uint256 indexed agentId, string agentURI, address indexed owner);
    event MetadataSet(
        uint256 indexed agentId, string indexed indexedMetadataKey, string metadataKey, bytes metadataValue
    );
    event URIUpdated(uint256 indexed agentId, string newURI, address indexed updatedBy);
    event AgentBindingsSet(address indexed agentBindings);
    event BaseAgentURIUpdated(string baseURI, string suffix);

    error NotAgentAuthorized(uint256 agentId, address account);
    error ReservedMetadataKey(string metadataKey);
    error InvalidWallet();
    error SignatureExpired(uint256 deadline);
    error DeadlineTooFar(uint256 deadline);
    error InvalidWalletSignature();
    error AgentBindingsAlreadySet(address agentBindings);
    error InvalidAgentBindings();
    error NotAgentBindings(address caller);
    error AgentAlreadyBound(uint256 agentId);

    string public constant AGENT_WALLET_KEY = "agentWallet";
    string public constant AGENT_BINDING_KEY = "agent-binding";
    bytes32 private constant AGENT_WALLET_KEY_HASH = keccak256("agentWallet");
    bytes32 private constant AGENT_BINDING_KEY_HASH = keccak256("agent-binding");
    bytes32 private constant AGENT_WALLET_SET_TYPEHASH =
        keccak256("AgentWalletSet(uint256 agentId,address newWallet,address owner,uint256 deadline)");
    uint256 private constant MAX_DEADLINE_DELAY = 5 minutes;
    /// @dev Stored in `_agentWallets` when the wallet was cleared (transfer, `unsetAgentWallet`); zero means
    ///      "never set", which reads as the owner's address.
    address private constant WALLET_CLEARED = address(1);

    uint256 private _lastAgentId;
    string private _baseAgentURI;
    string private _agentURISuffix;
    mapping(uint256 agentId => string uri) private _agentURIs;
    BitMaps.BitMap private _hasCustomURI;
    mapping(uint256 agentId => mapping(string metadataKey => bytes metadataValue)) private _metadata;
    mapping(uint256 agentId => address wallet) private _agentWallets;
    BitMaps.BitMap private _bound;

    /// @notice The ERC-8217 binding contract whose address is the `agent-binding` metadata of bound agents.
    address public agentBindings;

    constructor(address initialOwner, string memory baseAgentURI_, string memory agentURISuffix_)
        ERC721("AgentIdentity", "AGENT")
        Ownable(initialOwner)
        EIP712("ERC8004IdentityRegistry", "1")
    {
        _baseAgentURI = baseAgentURI_;
        _agentURISuffix = agentURISuffix_;
    }

    /*//////////////////////////////////////////////////////////////
                               REGISTRATION
    //////////////////////////////////////////////////////////////*/

    function register() external returns (uint256 agentId) {
        agentId = _registerWithURI(msg.sender, "");
        _safeMint(msg.sender, agentId);
    }

    function register(string calldata agentURI) external returns (uint256 agentId) {
        agentId = _registerWithURI(msg.sender, agentURI);
        _safeMint(msg.sender, agentId);
    }

    function register(string calldata agentURI, MetadataEntry[] calldata metadata) external returns (uint256 agentId) {
        agentId = _registerWithURI(msg.sender, agentURI);
        for (uint256 i; i < metadata.length; ++i) {
            _checkNotReserved(metadata[i].metadataKey);
            _metadata[agentId][metadata[i].metadataKey] = metadata[i].metadataValue;
            emit MetadataSet(agentId, metadata[i].metadataKey, metadata[i].metadataKey, metadata[i].metadataValue);
        }
        _safeMint(msg.sender, agentId);
    }

    /// @notice Operator batch registration: agent `firstAgentId + i` goes to `owners[i]`, with the default
    ///         agentURI `baseAgentURI + agentId + suffix`.
    function registerBatch(address[] calldata owners) external onlyOwner returns (uint256 firstAgentId) {
        uint256 n = owners.length;
        firstAgentId = _lastAgentId + 1;
        string memory base = _baseAgentURI;
        string memory suffix = _agentURISuffix;
        for (uint256 i; i < n; ++i) {
            uint256 agentId = firstAgentId + i;
            address to = owners[i];
            _mint(to, agentId);
            emit Registered(agentId, _composeURI(base, agentId, suffix), to);
            emit MetadataSet(agentId, AGENT_WALLET_KEY, AGENT_WALLET_KEY, abi.encodePacked(to));
        }
        _lastAgentId += n;
    }

    /// @notice Number of agents registered (the highest agentId).
    function totalAgents() external view returns (uint256) {
        return _lastAgentId;
    }

    function _registerWithURI(address to, string memory agentURI) internal returns (uint256 agentId) {
        agentId = ++_lastAgentId;
        if (bytes(agentURI).length != 0) _agentURIs[agentId] = agentURI;
        _hasCustomURI.set(agentId);
        emit Registered(agentId, agentURI, to);
        emit MetadataSet(agentId, AGENT_WALLET_KEY, AGENT_WALLET_KEY, abi.encodePacked(to));
    }

    /*//////////////////////////////////////////////////////////////
                                 AGENT URI
    //////////////////////////////////////////////////////////////*/

    function setAgentURI(uint256 agentId, string calldata newURI) external {
        _checkAgentAuthorized(agentId);
        _agentURIs[agentId] = newURI;
        _hasCustomURI.set(agentId);
        emit URIUpdated(agentId, newURI, msg.sender);
        emit MetadataUpdate(agentId);
    }

    /// @notice Changes the default agentURI of agents that never had their own (operator only).
    function setBaseAgentURI(string calldata baseURI, string calldata suffix) external onlyOwner {
        _baseAgentURI = baseURI;
        _agentURISuffix = suffix;
        emit BaseAgentURIUpdated(baseURI, suffix);
        if (_lastAgentId != 0) emit BatchMetadataUpdate(1, _lastAgentId);
    }

    function tokenURI(uint256 agentId) public view override returns (string memory) {
        _requireOwned(agentId);
        if (_hasCustomURI.get(agentId)) return _agentURIs[agentId];
        return _composeURI(_baseAgentURI, agentId, _agentURISuffix);
    }

    function _composeURI(string memory base, uint256 agentId, string memory suffix)
        internal
        pure
        returns (string memory)
    {
        if (bytes(base).length == 0) return "";
        return string.concat(base, agentId.toString(), suffix);
    }

    /*//////////////////////////////////////////////////////////////
                                 METADATA
    //////////////////////////////////////////////////////////////*/

    function getMetadata(uint256 agentId, string calldata metadataKey) external view returns (bytes memory) {
        bytes32 keyHash = keccak256(bytes(metadataKey));
        if (keyHash == AGENT_WALLET_KEY_HASH) {
            address wallet = _effectiveWallet(agentId);
            return wallet == address(0) ? bytes("") : abi.encodePacked(wallet);
        }
        if (keyHash == AGENT_BINDING_KEY_HASH) {
            return _bound.get(agentId) ? abi.encodePacked(agentBindings) : bytes("");
        }
        return _metadata[agentId][metadataKey];
    }

    function setMetadata(uint256 agentId, string calldata metadataKey, bytes calldata metadataValue) external {
        _checkAgentAuthorized(agentId);
        _checkNotReserved(metadataKey);
        _metadata[agentId][metadataKey] = metadataValue;
        emit MetadataSet(agentId, metadataKey, metadataKey, metadataValue);
    }

    function _checkNotReserved(string calldata metadataKey) internal pure {
        bytes32 keyHash = keccak256(bytes(metadataKey));
        if (keyHash == AGENT_WALLET_KEY_HASH || keyHash == AGENT_BINDING_KEY_HASH) {
            revert ReservedMetadataKey(metadataKey);
        }
    }

    /*//////////////////////////////////////////////////////////////
                               AGENT WALLET
    //////////////////////////////////////////////////////////////*/

    function getAgentWallet(uint256 agentId) external view returns (address) {
        _requireOwned(agentId);
        return _effectiveWallet(agentId);
    }

    /// @notice Sets the agent's wallet; `signature` is `newWallet`'s EIP-712 (EOA) or ERC-1271 signature of
    ///         `AgentWalletSet(agentId, newWallet, owner, deadline)` under the domain
    ///         ("ERC8004IdentityRegistry", "1", chainId, this).
    function setAgentWallet(uint256 agentId, address newWallet, uint256 deadline, bytes calldata signature)
        external
    {
        if (newWallet == address(0) || newWallet == WALLET_CLEARED) revert InvalidWallet();
        if (block.timestamp > deadline) revert SignatureExpired(deadline);
        if (deadline > block.timestamp + MAX_DEADLINE_DELAY) revert DeadlineTooFar(deadline);
        address agentOwner = _checkAgentAuthorized(agentId);
        bytes32 digest = _hashTypedDataV4(
            keccak256(abi.encode(AGENT_WALLET_SET_TYPEHASH, agentId, newWallet, agentOwner, deadline))
        );
        if (!SignatureChecker.isValidSignatureNow(newWallet, digest, signature)) revert InvalidWalletSignature();
        _agentWallets[agentId] = newWallet;
        emit MetadataSet(agentId, AGENT_WALLET_KEY, AGENT_WALLET_KEY, abi.encodePacked(newWallet));
    }

    function unsetAgentWallet(uint256 agentId) external {
        _checkAgentAuthorized(agentId);
        _clearWallet(agentId);
    }

    function _effectiveWallet(uint256 agentId) internal view returns (address) {
        address agentOwner = _ownerOf(agentId);
        if (agentOwner == address(0)) return address(0);
        address wallet = _agentWallets[agentId];
        if (wallet == address(0)) return agentOwner;
        if (wallet == WALLET_CLEARED) return address(0);
        return wallet;
    }

    function _clearWallet(uint256 agentId) internal {
        _agentWallets[agentId] = WALLET_CLEARED;
        emit MetadataSet(agentId, AGENT_WALLET_KEY, AGENT_WALLET_KEY, "");
    }

    /// @dev Clears `agentWallet` when an agent changes hands, as the draft requires.
    function _update(address to, uint256 tokenId, address auth) internal override returns (address from) {
        from = super._update(to, tokenId, auth);
        if (from != address(0) && to != address(0) && from != to && _agentWallets[tokenId] != WALLET_CLEARED) {
            _clearWallet(tokenId);
        }
    }

    /*//////////////////////////////////////////////////////////////
                             ERC-8217 BINDING
    //////////////////////////////////////////////////////////////*/

    /// @notice Sets the binding contract once (operator only); it cannot change afterwards (ERC-8217).
    function setAgentBindings(address bindings) external onlyOwner {
        if (agentBindings != address(0)) revert AgentBindingsAlreadySet(agentBindings);
        if (bindings == address(0) || bindings.code.length == 0) revert InvalidAgentBindings();
        agentBindings = bindings;
        emit AgentBindingsSet(bindings);
    }

    /// @inheritdoc IIdentityRegistryBindingHook
    function recordBindings(uint256 firstAgentId, uint256 count) external {
        address bindings = agentBindings;
        if (msg.sender != bindings || bindings == address(0)) revert NotAgentBindings(msg.sender);
        bytes memory value = abi.encodePacked(bindings);
        for (uint256 i; i < count; ++i) {
            uint256 agentId = firstAgentId + i;
            _requireOwned(agentId);
            if (_bound.get(agentId)) revert AgentAlreadyBound(agentId);
            _bound.set(agentId);
            emit MetadataSet(agentId, AGENT_BINDING_KEY, AGENT_BINDING_KEY, value);
        }
    }

    /*//////////////////////////////////////////////////////////////
                               AUTHORIZATION
    //////////////////////////////////////////////////////////////*/

    /// @dev Owner, approved operator, or (for a bound agent) the controller named by the binding contract,
    ///      i.e. the current owner of the master NFT.
    function _checkAgentAuthorized(uint256 agentId) internal view returns (address agentOwner) {
        agentOwner = _requireOwned(agentId);
        if (
            msg.sender == agentOwner || isApprovedForAll(agentOwner, msg.sender)
                || getApproved(agentId) == msg.sender
        ) {
            return agentOwner;
        }
        if (_bound.get(agentId)) {
            try IAgentBindingsControl(agentBindings).isController(agentId, msg.sender) returns (bool ok) {
                if (ok) return agentOwner;
            } catch {}
        }
        revert NotAgentAuthorized(agentId, msg.sender);
    }

    function supportsInterface(bytes4 interfaceId) public view override(ERC721, IERC165) returns (bool) {
        return interfaceId == bytes4(0x49064906) || super.supportsInterface(interfaceId);
    }
}
