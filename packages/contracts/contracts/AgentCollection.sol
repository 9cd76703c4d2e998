// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

import {ERC721} from "@openzeppelin/contracts/token/ERC721/ERC721.sol";
import {Ownable} from "@openzeppelin/contracts/access/Ownable.sol";
import {IERC165} from "@openzeppelin/contracts/utils/introspection/IERC165.sol";
import {IERC4906} from "@openzeppelin/contracts/interfaces/IERC4906.sol";
import {Base64} from "@openzeppelin/contracts/utils/Base64.sol";
import {IERC7496} from "./interfaces/IERC7496.sol";

/// @title Agent Tools Agents (AGENT)
/// @notice The 6666-token ERC-721 collection of token-bound agents, with on-chain traits revealed per token
///         and the ERC-7496 dynamic trait `clearance`.
///
/// @dev Token ids are 1..6666. `tokenURI(id)` is `baseURI + id`.
///
///      Per-token data is packed into one storage word (also returned raw by `tokenDataRange`):
///        - bits   0..127: trait value indexes, one byte per trait type (`traitTypes()[t]` at bits 8t..8t+7);
///                         each byte indexes `traitLabels(t)`.
///        - bits 128..135: clearance code: 0 = not set (reads as "Holder"), 1 = Holder, 2 = Rare, 3 = Elite.
///        - bit  255     : revealed flag.
///
///      Clearance encoding (ERC-7496 trait key `keccak256("clearance")`): the trait value is the UTF-8 name
///      right-padded with zero bytes to 32 bytes (a Solidity `bytes32` string literal, viem
///      `stringToHex(name, { size: 32 })`): "Holder", "Rare" or "Elite". Every existing token has at least
///      "Holder": a token whose clearance was never set on chain reads as "Holder".
contract AgentCollection is IERC4906, IERC7496, ERC721, Ownable {
    uint256 public constant MAX_SUPPLY = 6666;
    uint256 public constant MAX_TRAIT_TYPES = 16;
    bytes32 public constant CLEARANCE_TRAIT_KEY = keccak256("clearance");

    bytes32 internal constant CLEARANCE_HOLDER = "Holder";
    bytes32 internal constant CLEARANCE_RARE = "Rare";
    bytes32 internal constant CLEARANCE_ELITE = "Elite";

    uint256 internal constant TRAITS_MASK = (1 << 128) - 1;
    uint256 internal constant CLEARANCE_SHIFT = 128;
    uint256 internal constant CLEARANCE_MASK = uint256(0xff) << CLEARANCE_SHIFT;
    uint256 internal constant REVEALED_FLAG = 1 << 255;

    /// @dev Default ERC-7496 trait metadata (served base64-encoded as a data URI until the operator sets a URI).
    string internal constant DEFAULT_TRAIT_METADATA = '{"traits":{"clearance":{"displayName":"Clearance",'
        '"dataType":{"type":"string","valueMappings":{'
        '"0x486f6c6465720000000000000000000000000000000000000000000000000000":"Holder",'
        '"0x5261726500000000000000000000000000000000000000000000000000000000":"Rare",'
        '"0x456c697465000000000000000000000000000000000000000000000000000000":"Elite"}},'
        '"validateOnSale":"requireEq"}}}';

    error InvalidTokenRange(uint256 fromTokenId, uint256 count);
    error LengthMismatch();
    error TraitSchemaLocked();
    error InvalidTraitSchema();
    error TraitSchemaNotDefined();
    error UnknownTraitType(uint256 traitType);
    error AlreadyRevealed(uint256 tokenId);
    error InvalidTraits(uint256 tokenId, uint256 packedTraits);
    error InvalidClearance(bytes32 value);
    error InvalidClearanceCode(uint8 code);

    /// @notice A token's traits were written on chain.
    event Revealed(uint256 indexed tokenId);
    /// @notice The trait types and their labels were (re)defined.
    event TraitSchemaDefined(uint256 traitTypeCount);

    string private _baseTokenURI;
    string private _traitMetadataURI;
    uint256 private _totalMinted;
    uint256 private _revealedCount;
    string[] private _traitTypeNames;
    mapping(uint256 traitType => string[] labels) private _traitTypeLabels;
    mapping(uint256 tokenId => uint256 data) private _tokenData;
    mapping(bytes32 traitKey => bool known) private _customTraitKeys;
    mapping(uint256 tokenId => mapping(bytes32 traitKey => bytes32 value)) private _customTraits;

    constructor(address initialOwner, string memory baseURI_)
        ERC721("Agent Tools Agents", "AGENT")
        Ownable(initialOwner)
    {
        _baseTokenURI = baseURI_;
    }

    /*//////////////////////////////////////////////////////////////
                                 MINTING
    //////////////////////////////////////////////////////////////*/

    /// @notice Mints token `firstId + i` to `to[i]`.
    function mintBatch(address[] calldata to, uint256 firstId) external onlyOwner {
        uint256 n = to.length;
        _checkRange(firstId, n);
        for (uint256 i; i < n;) {
            _mint(to[i], firstId + i);
            unchecked {
                ++i;
            }
        }
        _totalMinted += n;
    }

    /// @notice Mints tokens `fromId .. fromId + count - 1` to `to`.
    function mintRange(address to, uint256 fromId, uint256 count) external onlyOwner {
        _checkRange(fromId, count);
        for (uint256 i; i < count;) {
            _mint(to, fromId + i);
            unchecked {
                ++i;
            }
        }
        _totalMinted += count;
    }

    /// @notice Number of tokens minted so far.
    function totalSupply() external view returns (uint256) {
        return _totalMinted;
    }

    /// @notice Whether `tokenId` has been minted.
    function exists(uint256 tokenId) external view returns (bool) {
        return _ownerOf(tokenId) != address(0);
    }

    /// @notice Owners of `fromId .. fromId + count - 1` (the zero address for tokens not minted).
    function ownersRange(uint256 fromId, uint256 count) external view returns (address[] memory owners) {
        owners = new address[](count);
        for (uint256 i; i < count; ++i) {
            owners[i] = _ownerOf(fromId + i);
        }
    }

    function setBaseURI(string calldata baseURI_) external onlyOwner {
        _baseTokenURI = baseURI_;
        emit BatchMetadataUpdate(1, MAX_SUPPLY);
    }

    function _baseURI() internal view override returns (string memory) {
        return _baseTokenURI;
    }

    /*//////////////////////////////////////////////////////////////
                             TRAITS / REVEAL
    //////////////////////////////////////////////////////////////*/

    /// @notice Defines the trait types (`names[t]`) and the labels of their values (`labels[t]`).
    ///         Only before the first reveal.
    function setTraitSchema(string[] calldata names, string[][] calldata labels) external onlyOwner {
        if (_revealedCount != 0) revert TraitSchemaLocked();
        uint256 n = names.length;
        if (n == 0 || n > MAX_TRAIT_TYPES || labels.length != n) revert InvalidTraitSchema();
        uint256 previous = _traitTypeNames.length;
        for (uint256 t; t < previous; ++t) {
            delete _traitTypeLabels[t];
        }
        delete _traitTypeNames;
        for (uint256 t; t < n; ++t) {
            uint256 labelCount = labels[t].length;
            if (labelCount == 0 || labelCount > 256) revert InvalidTraitSchema();
            _traitTypeNames.push(names[t]);
            string[] storage stored = _traitTypeLabels[t];
            for (uint256 v; v < labelCount; ++v) {
                stored.push(labels[t][v]);
            }
        }
        emit TraitSchemaDefined(n);
    }

    /// @notice Names of the trait types, in packing order.
    function traitTypes() external view returns (string[] memory) {
        return _traitTypeNames;
    }

    /// @notice Labels of the values of trait type `traitType`; a token's value index selects one.
    function traitLabels(uint8 traitType) external view returns (string[] memory) {
        if (traitType >= _traitTypeNames.length) revert UnknownTraitType(traitType);
        return _traitTypeLabels[traitType];
    }

    /// @notice Writes the traits of `tokenIds[i]` (`packedTraits[i]`: byte t = value index of trait type t) and
    ///         sets its clearance (`clearances[i]`: 1 Holder, 2 Rare, 3 Elite; 0 keeps the current value).
    ///         Emits `Revealed` per token and one ERC-7496 `TraitUpdatedList` for the clearance trait.
    function reveal(uint256[] calldata tokenIds, uint256[] calldata packedTraits, uint8[] calldata clearances)
        external
        onlyOwner
    {
        uint256 n = tokenIds.length;
        if (packedTraits.length != n || clearances.length != n) revert LengthMismatch();
        uint256 typeCount = _traitTypeNames.length;
        if (typeCount == 0) revert TraitSchemaNotDefined();
        uint256[] memory labelCounts = new uint256[](typeCount);
        for (uint256 t; t < typeCount; ++t) {
            labelCounts[t] = _traitTypeLabels[t].length;
        }
        for (uint256 i; i < n;) {
            uint256 tokenId = tokenIds[i];
            _requireOwned(tokenId);
            uint256 data = _tokenData[tokenId];
            if (data & REVEALED_FLAG != 0) revert AlreadyRevealed(tokenId);
            uint256 traits = packedTraits[i];
            if (traits >> (typeCount * 8) != 0) revert InvalidTraits(tokenId, traits);
            for (uint256 t; t < typeCount;) {
                if ((traits >> (t * 8)) & 0xff >= labelCounts[t]) revert InvalidTraits(tokenId, traits);
                unchecked {
                    ++t;
                }
            }
            uint8 code = clearances[i];
            if (code > 3) revert InvalidClearanceCode(code);
            uint256 clearanceBits = code == 0 ? data & CLEARANCE_MASK : uint256(code) << CLEARANCE_SHIFT;
            _tokenData[tokenId] = REVEALED_FLAG | clearanceBits | traits;
            emit Revealed(tokenId);
            unchecked {
                ++i;
            }
        }
        _revealedCount += n;
        emit TraitUpdatedList(CLEARANCE_TRAIT_KEY, tokenIds);
    }

    /// @notice Whether the traits of `tokenId` are on chain.
    function revealed(uint256 tokenId) external view returns (bool) {
        _requireOwned(tokenId);
        return _tokenData[tokenId] & REVEALED_FLAG != 0;
    }

    /// @notice Number of revealed tokens.
    function revealedCount() external view returns (uint256) {
        return _revealedCount;
    }

    /// @notice Value indexes of the traits of `tokenId`, one per trait type; empty while unrevealed.
    function traitsOf(uint256 tokenId) external view returns (uint8[] memory values) {
        _requireOwned(tokenId);
        uint256 data = _tokenData[tokenId];
        if (data & REVEALED_FLAG == 0) return values;
        uint256 typeCount = _traitTypeNames.length;
        values = new uint8[](typeCount);
        for (uint256 t; t < typeCount; ++t) {
            values[t] = uint8(data >> (t * 8));
        }
    }

    /// @notice Raw packed data words of `fromId .. fromId + count - 1` (0 for tokens not minted); see the
    ///         layout in the contract documentation. Lets a reader load the whole collection in a few calls.
    function tokenDataRange(uint256 fromId, uint256 count) external view returns (uint256[] memory data) {
        data = new uint256[](count);
        for (uint256 i; i < count; ++i) {
            data[i] = _tokenData[fromId + i];
        }
    }

    /*//////////////////////////////////////////////////////////////
                          ERC-7496 DYNAMIC TRAITS
    //////////////////////////////////////////////////////////////*/

    /// @inheritdoc IERC7496
    function getTraitValue(uint256 tokenId, bytes32 traitKey) public view returns (bytes32) {
        _requireOwned(tokenId);
        return _traitValue(tokenId, traitKey);
    }

    /// @inheritdoc IERC7496
    function getTraitValues(uint256 tokenId, bytes32[] calldata traitKeys)
        external
        view
        returns (bytes32[] memory traitValues)
    {
        _requireOwned(tokenId);
        traitValues = new bytes32[](traitKeys.length);
        for (uint256 i; i < traitKeys.length; ++i) {
            traitValues[i] = _traitValue(tokenId, traitKeys[i]);
        }
    }

    /// @inheritdoc IERC7496
    function getTraitMetadataURI() external view returns (string memory) {
        if (bytes(_traitMetadataURI).length != 0) return _traitMetadataURI;
        return string.concat("data:application/json;base64,", Base64.encode(bytes(DEFAULT_TRAIT_METADATA)));
    }

    /// @inheritdoc IERC7496
    /// @dev Operator only. For `clearance` the value must be one of the three encodings.
    function setTrait(uint256 tokenId, bytes32 traitKey, bytes32 newValue) external onlyOwner {
        _requireOwned(tokenId);
        _setTrait(tokenId, traitKey, newValue);
        emit TraitUpdated(traitKey, tokenId, newValue);
    }

    /// @notice Sets `traitKey` to `value` for every token of `tokenIds` (operator only); emits
    ///         `TraitUpdatedListUniformValue`.
    function setTraitForTokens(uint256[] calldata tokenIds, bytes32 traitKey, bytes32 value) external onlyOwner {
        for (uint256 i; i < tokenIds.length; ++i) {
            _requireOwned(tokenIds[i]);
            _setTrait(tokenIds[i], traitKey, value);
        }
        emit TraitUpdatedListUniformValue(traitKey, tokenIds, value);
    }

    /// @notice Replaces the trait metadata URI (an empty string restores the built-in data URI).
    function setTraitMetadataURI(string calldata uri) external onlyOwner {
        _traitMetadataURI = uri;
        emit TraitMetadataURIUpdated();
    }

    /// @notice Replaces the trait metadata URI and defines the trait keys its metadata adds (operator only): a
    ///         trait exists once the metadata defines it, and `setTrait` on any other key reverts with
    ///         `TraitDoesNotExist`, as ERC-7496 requires.
    function setTraitMetadataURI(string calldata uri, bytes32[] calldata traitKeys) external onlyOwner {
        _traitMetadataURI = uri;
        for (uint256 i; i < traitKeys.length; ++i) {
            _customTraitKeys[traitKeys[i]] = true;
        }
        emit TraitMetadataURIUpdated();
    }

    function _traitValue(uint256 tokenId, bytes32 traitKey) internal view returns (bytes32) {
        if (traitKey == CLEARANCE_TRAIT_KEY) {
            uint256 code = (_tokenData[tokenId] >> CLEARANCE_SHIFT) & 0xff;
            if (code == 3) return CLEARANCE_ELITE;
            if (code == 2) return CLEARANCE_RARE;
            return CLEARANCE_HOLDER;
        }
        if (!_customTraitKeys[traitKey]) revert TraitDoesNotExist(traitKey);
        return _customTraits[tokenId][traitKey];
    }

    function _setTrait(uint256 tokenId, bytes32 traitKey, bytes32 value) internal {
        if (traitKey == CLEARANCE_TRAIT_KEY) {
            uint256 code;
            if (value == CLEARANCE_HOLDER) code = 1;
            else if (value == CLEARANCE_RARE) code = 2;
            else if (value == CLEARANCE_ELITE) code = 3;
            else revert InvalidClearance(value);
            uint256 data = _tokenData[tokenId];
            _tokenData[tokenId] = (data & ~CLEARANCE_MASK) | (code << CLEARANCE_SHIFT);
            return;
        }
        if (!_customTraitKeys[traitKey]) revert TraitDoesNotExist(traitKey);
        _customTraits[tokenId][traitKey] = value;
    }

    function _checkRange(uint256 fromId, uint256 count) internal pure {
        if (fromId == 0 || count == 0 || fromId > MAX_SUPPLY || count > MAX_SUPPLY - fromId + 1) {
            revert InvalidTokenRange(fromId, count);
        }
    }

    /*//////////////////////////////////////////////////////////////
                                 ERC-165
    //////////////////////////////////////////////////////////////*/

    function supportsInterface(bytes4 interfaceId) public view override(ERC721, IERC165) returns (bool) {
        return interfaceId == type(IERC7496).interfaceId || interfaceId == bytes4(0x49064906)
            || super.supportsInterface(interfaceId);
    }
}
