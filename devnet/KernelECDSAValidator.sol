// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

import {PackedUserOperation, KernelEcdsa} from "./KernelModuleBase.sol";

/// Devnet ECDSA validator module for ZeroDev Kernel v3 (ERC-7579 module types 1 = validator and
/// 4 = hook), written for Purser: no npm package ships the bytecode of ZeroDev's module.
///
/// Interface origin: ZeroDev's `ECDSAValidator` (zerodevapp/kernel v3,
/// src/validator/ECDSAValidator.sol; deployed at 0x845ADb2C711129d4f3966735eD98a9F09fC4cE57 for
/// Kernel >= 0.3.1 per the ZeroDev SDK's ECDSA validator plugin), the module interfaces of
/// Kernel's IERC7579Modules.sol, and EntryPoint v0.7's PackedUserOperation
/// (eth-infinitism/account-abstraction v0.7.0). Same function signatures, event, errors and
/// answers (the contract's name differs; it does not show in the interface):
/// - `ecdsaValidatorStorage(address account)` returns the account's owner (the public mapping of a
///   one-field struct; zero when not installed).
/// - `onInstall(bytes data)`: data = the owner's 20-byte address; records it for msg.sender (the
///   account), overwriting an earlier owner, and emits `OwnerRegistered`.
/// - `onUninstall(bytes)`: forgets the owner; `NotInitialized(account)` when there is none.
/// - `validateUserOp`: 0 when the owner signed userOpHash, either the raw hash or its EIP-191
///   ("\x19Ethereum Signed Message:\n32") form, else 1 (SIG_VALIDATION_FAILED). A signature from
///   which no address can be recovered reverts (`InvalidSignature`), as ZeroDev's (solady's
///   ECDSA.recover) does. 65-byte (r, s, v) and 64-byte EIP-2098 (r, vs) signatures are accepted.
/// - `isValidSignatureWithSender(sender, hash, sig)`: ERC-1271's 0x1626ba7e when the owner of
///   msg.sender signed `hash` (raw or EIP-191), else 0xffffffff.
/// - As a hook: `preCheck` lets only the owner through, `postCheck` does nothing.
contract KernelECDSAValidator {
    struct ECDSAValidatorStorage {
        address owner;
    }

    uint256 private constant MODULE_TYPE_VALIDATOR = 1;
    uint256 private constant MODULE_TYPE_HOOK = 4;
    uint256 private constant SIG_VALIDATION_SUCCESS = 0;
    uint256 private constant SIG_VALIDATION_FAILED = 1;
    bytes4 private constant ERC1271_MAGICVALUE = 0x1626ba7e;
    bytes4 private constant ERC1271_INVALID = 0xffffffff;

    /// Owner per smart account (the account is the caller of onInstall).
    mapping(address => ECDSAValidatorStorage) public ecdsaValidatorStorage;

    event OwnerRegistered(address indexed kernel, address indexed owner);

    error NotInitialized(address smartAccount);

    function onInstall(bytes calldata data) external payable {
        address owner = address(bytes20(data[0:20]));
        ecdsaValidatorStorage[msg.sender].owner = owner;
        emit OwnerRegistered(msg.sender, owner);
    }

    function onUninstall(bytes calldata) external payable {
        if (!_isInitialized(msg.sender)) revert NotInitialized(msg.sender);
        delete ecdsaValidatorStorage[msg.sender];
    }

    function isModuleType(uint256 typeId) external pure returns (bool) {
        return typeId == MODULE_TYPE_VALIDATOR || typeId == MODULE_TYPE_HOOK;
    }

    function isInitialized(address smartAccount) external view returns (bool) {
        return _isInitialized(smartAccount);
    }

    function validateUserOp(PackedUserOperation calldata userOp, bytes32 userOpHash)
        external
        payable
        returns (uint256)
    {
        return _signedByOwner(msg.sender, userOpHash, userOp.signature)
            ? SIG_VALIDATION_SUCCESS
            : SIG_VALIDATION_FAILED;
    }

    function isValidSignatureWithSender(address, bytes32 hash, bytes calldata signature)
        external
        view
        returns (bytes4)
    {
        return _signedByOwner(msg.sender, hash, signature) ? ERC1271_MAGICVALUE : ERC1271_INVALID;
    }

    function preCheck(address msgSender, uint256, bytes calldata) external payable returns (bytes memory) {
        require(msgSender == ecdsaValidatorStorage[msg.sender].owner, "ECDSAValidator: sender is not owner");
        return "";
    }

    function postCheck(bytes calldata) external payable {}

    function _isInitialized(address smartAccount) private view returns (bool) {
        return ecdsaValidatorStorage[smartAccount].owner != address(0);
    }

    /// Whether the owner of `account` signed `hash` itself or its EIP-191 form.
    function _signedByOwner(address account, bytes32 hash, bytes calldata signature) private view returns (bool) {
        return KernelEcdsa.signedBy(ecdsaValidatorStorage[account].owner, hash, signature);
    }
}
