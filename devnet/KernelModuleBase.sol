// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

/// What the devnet's Kernel modules share: EntryPoint v0.7's PackedUserOperation as Kernel hands it
/// to them, ECDSA recovery for the validator and the session-key signer, and the bookkeeping every
/// policy has on Kernel's `PolicyBase` (a permission's status NA → Live → Deprecated per account,
/// installing needs NA, a count of live permissions per account). Devnet only.

struct PackedUserOperation {
    address sender;
    uint256 nonce;
    bytes initCode;
    bytes callData;
    bytes32 accountGasLimits;
    uint256 preVerificationGas;
    bytes32 gasFees;
    bytes paymasterAndData;
    bytes signature;
}

/// A signature of neither 64 nor 65 bytes, or one that recovers to no address.
error InvalidSignature();

library KernelEcdsa {
    /// Whether `key` signed `hash` itself or its EIP-191 form.
    function signedBy(address key, bytes32 hash, bytes calldata sig) internal pure returns (bool) {
        if (key == recover(hash, sig)) return true;
        bytes32 ethHash = keccak256(abi.encodePacked("\x19Ethereum Signed Message:\n32", hash));
        return key == recover(ethHash, sig);
    }

    /// The signer of `digest` from a 65-byte (r, s, v) or 64-byte EIP-2098 signature; reverts when
    /// none can be recovered (so it never equals a zero key).
    function recover(bytes32 digest, bytes calldata sig) internal pure returns (address recovered) {
        bytes32 r;
        bytes32 s;
        uint8 v;
        if (sig.length == 65) {
            r = bytes32(sig[0:32]);
            s = bytes32(sig[32:64]);
            v = uint8(sig[64]);
        } else if (sig.length == 64) {
            r = bytes32(sig[0:32]);
            bytes32 vs = bytes32(sig[32:64]);
            s = vs & bytes32(0x7fffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff);
            v = uint8(uint256(vs) >> 255) + 27;
        } else {
            revert InvalidSignature();
        }
        recovered = ecrecover(digest, v, r, s);
        if (recovered == address(0)) revert InvalidSignature();
    }
}

/// Kernel's `PolicyBase` bookkeeping: `onInstall(bytes32 permissionId ‖ data)` and
/// `onUninstall(bytes32 permissionId ‖ …)` from the account; the policy stores and drops its own
/// configuration in `_install` and `_uninstall`.
abstract contract KernelPolicyBase {
    enum Status {
        NA,
        Live,
        Deprecated
    }

    uint256 internal constant MODULE_TYPE_POLICY = 5;
    uint256 internal constant SIG_VALIDATION_FAILED = 1;

    mapping(address wallet => uint256) public usedIds;
    mapping(bytes32 id => mapping(address wallet => Status)) public status;

    error AlreadyInitialized(address smartAccount);
    error NotInitialized(address smartAccount);

    function onInstall(bytes calldata data) external payable {
        bytes32 id = bytes32(data[0:32]);
        if (status[id][msg.sender] != Status.NA) revert AlreadyInitialized(msg.sender);
        _install(id, data[32:]);
        status[id][msg.sender] = Status.Live;
        usedIds[msg.sender]++;
    }

    function onUninstall(bytes calldata data) external payable {
        bytes32 id = bytes32(data[0:32]);
        if (status[id][msg.sender] != Status.Live) revert NotInitialized(msg.sender);
        _uninstall(id);
        status[id][msg.sender] = Status.Deprecated;
        usedIds[msg.sender]--;
    }

    function isModuleType(uint256 typeId) external pure returns (bool) {
        return typeId == MODULE_TYPE_POLICY;
    }

    function isInitialized(address wallet) external view returns (bool) {
        return usedIds[wallet] > 0;
    }

    /// Stores the policy's configuration of permission `id` for the caller (`data` follows the id).
    function _install(bytes32 id, bytes calldata data) internal virtual;

    /// Drops the policy's configuration of permission `id` for the caller.
    function _uninstall(bytes32 id) internal virtual;
}
