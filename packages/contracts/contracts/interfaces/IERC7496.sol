// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

/// @title ERC-7496 NFT Dynamic Traits (draft), as published in ethereum/ERCs `ERCS/erc-7496.md`
///        (commit c643fdfbb07bb40751ca1bd4b4e5665d52c18e7b).
/// @dev ERC-165 interface id: 0xaf332f3e (XOR of the four function selectors below).
interface IERC7496 {
    /* Errors */
    /// @notice Thrown when trying to set a trait that does not exist.
    error TraitDoesNotExist(bytes32 traitKey);
    /// @notice Thrown when the token does not exist.
    error TokenDoesNotExist(uint256 tokenId);

    /* Events */
    event TraitUpdated(bytes32 indexed traitKey, uint256 tokenId, bytes32 traitValue);
    event TraitUpdatedRange(bytes32 indexed traitKey, uint256 fromTokenId, uint256 toTokenId);
    event TraitUpdatedRangeUniformValue(
        bytes32 indexed traitKey, uint256 fromTokenId, uint256 toTokenId, bytes32 traitValue
    );
    event TraitUpdatedList(bytes32 indexed traitKey, uint256[] tokenIds);
    event TraitUpdatedListUniformValue(bytes32 indexed traitKey, uint256[] tokenIds, bytes32 traitValue);
    event TraitMetadataURIUpdated();

    /* Getters */
    function getTraitValue(uint256 tokenId, bytes32 traitKey) external view returns (bytes32 traitValue);
    function getTraitValues(uint256 tokenId, bytes32[] calldata traitKeys)
        external
        view
        returns (bytes32[] memory traitValues);
    function getTraitMetadataURI() external view returns (string memory uri);

    /* Setters */
    function setTrait(uint256 tokenId, bytes32 traitKey, bytes32 newValue) external;
}
