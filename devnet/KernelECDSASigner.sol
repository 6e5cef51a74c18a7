// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

import {PackedUserOperation, InvalidSignature, KernelEcdsa} from "./KernelModuleBase.sol";

/// Devnet ECDSA signer module for ZeroDev Kernel v3 permissions (module type 6 = signer), written
/// for Purser: no npm package ships the bytecode of ZeroDev's module.
///
/// Interface origin: ZeroDev's `ECDSASigner` (zerodevapp/kernel-7579-plugins,
/// signers/ecdsa/src/ECDSASigner.sol, SDK constant 0x6A6F069E2a08c2468e7724Ab3250CdBFBA14D4FF) on
/// Kernel's `SignerBase` (zerodevapp/kernel v3, src/sdk/moduleBase/SignerBase.sol), with
/// EntryPoint v0.7's PackedUserOperation. Same function signatures and answers:
/// - `onInstall(bytes32 permissionId ‖ 20-byte signer)` from the account: records the session key
///   for (permissionId, account); reverts when that permission already has one.
/// - `onUninstall(bytes32 permissionId ‖ …)`: forgets it; reverts when there is none.
/// - `checkUserOpSignature(id, userOp, userOpHash)`: 0 when the recorded key signed userOpHash
///   (raw or EIP-191 form) in `userOp.signature` (Kernel passes the signer's part only), else 1.
/// - `checkSignature(id, sender, hash, sig)`: ERC-1271's 0x1626ba7e when the key signed `hash`
///   (raw or EIP-191), else 0xffffffff.
/// A signature from which no address can be recovered reverts (`InvalidSignature`).
contract KernelECDSASigner {
    uint256 private constant MODULE_TYPE_SIGNER = 6;
    uint256 private constant SIG_VALIDATION_SUCCESS = 0;
    uint256 private constant SIG_VALIDATION_FAILED = 1;
    bytes4 private constant ERC1271_MAGICVALUE = 0x1626ba7e;
    bytes4 private constant ERC1271_INVALID = 0xffffffff;

    /// How many permissions of an account use this signer.
    mapping(address wallet => uint256) public usedIds;
    /// The session key of a permission of an account (the account is the inner key: ERC-7562
    /// associated storage).
    mapping(bytes32 id => mapping(address wallet => address)) public signer;

    error AlreadyInitialized(address smartAccount);
    error NotInitialized(address smartAccount);

    function onInstall(bytes calldata data) external payable {
        bytes32 id = bytes32(data[0:32]);
        if (signer[id][msg.sender] != address(0)) revert AlreadyInitialized(msg.sender);
        address key = address(bytes20(data[32:52]));
        if (key == address(0)) revert InvalidSignature();
        signer[id][msg.sender] = key;
        usedIds[msg.sender]++;
    }

    function onUninstall(bytes calldata data) external payable {
        bytes32 id = bytes32(data[0:32]);
        if (signer[id][msg.sender] == address(0)) revert NotInitialized(msg.sender);
        delete signer[id][msg.sender];
        usedIds[msg.sender]--;
    }

    function isModuleType(uint256 typeId) external pure returns (bool) {
        return typeId == MODULE_TYPE_SIGNER;
    }

    function isInitialized(address wallet) external view returns (bool) {
        return usedIds[wallet] > 0;
    }

    function checkUserOpSignature(bytes32 id, PackedUserOperation calldata userOp, bytes32 userOpHash)
        external
        payable
        returns (uint256)
    {
        return _signedBy(signer[id][msg.sender], userOpHash, userOp.signature)
            ? SIG_VALIDATION_SUCCESS
            : SIG_VALIDATION_FAILED;
    }

    function checkSignature(bytes32 id, address, bytes32 hash, bytes calldata sig)
        external
        view
        returns (bytes4)
    {
        return _signedBy(signer[id][msg.sender], hash, sig) ? ERC1271_MAGICVALUE : ERC1271_INVALID;
    }

    /// Whether `key` (never zero when installed) signed `hash` itself or its EIP-191 form.
    function _signedBy(address key, bytes32 hash, bytes calldata sig) private pure returns (bool) {
        if (key == address(0)) return false;
        return KernelEcdsa.signedBy(key, hash, sig);
    }
}
