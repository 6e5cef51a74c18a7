// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

import {PackedUserOperation, KernelPolicyBase} from "./KernelModuleBase.sol";

/// Devnet timestamp policy for ZeroDev Kernel v3 permissions (module type 5 = policy), written for
/// Purser: no npm package ships the bytecode of ZeroDev's module.
///
/// Interface origin: ZeroDev's `TimestampPolicy` (zerodevapp/kernel-7579-plugins,
/// policies/timestamp, SDK constant 0xB9f8f524bE6EcD8C945b1b87f9ae5C192FdCE20F) on Kernel's
/// `PolicyBase`, with EntryPoint v0.7's PackedUserOperation.
/// - `onInstall(bytes32 permissionId ‖ abi.encode(uint48 validAfter, uint48 validUntil))` from the
///   account; a permission's status goes NA → Live → Deprecated and installing needs NA (a
///   permission id is never reused). validUntil 0 means no end; otherwise it must follow validAfter.
/// - `checkUserOpPolicy`: ERC-4337 validation data with the window, aggregator part 0:
///   `validUntil << 160 | validAfter << 208`. The EntryPoint enforces it (AA22 expired or not due);
///   1 when the permission is not live.
/// - `checkSignaturePolicy`: 0 inside the window, 1 outside it or when not live (ZeroDev's answers 0
///   whatever the time; the devnet's is stricter, see docs/decisions.md).
contract KernelTimestampPolicy is KernelPolicyBase {
    struct TimePolicyConfig {
        uint48 validAfter;
        uint48 validUntil;
    }


    mapping(bytes32 id => mapping(address wallet => TimePolicyConfig)) public timeWindow;

    error InvalidTimeWindow(uint48 validAfter, uint48 validUntil);

    function _install(bytes32 id, bytes calldata data) internal override {
        (uint48 validAfter, uint48 validUntil) = abi.decode(data, (uint48, uint48));
        if (validUntil != 0 && validUntil <= validAfter) revert InvalidTimeWindow(validAfter, validUntil);
        timeWindow[id][msg.sender] = TimePolicyConfig(validAfter, validUntil);
    }

    function _uninstall(bytes32 id) internal override {
        delete timeWindow[id][msg.sender];
    }

    function checkUserOpPolicy(bytes32 id, PackedUserOperation calldata) external payable returns (uint256) {
        if (status[id][msg.sender] != Status.Live) return SIG_VALIDATION_FAILED;
        TimePolicyConfig memory w = timeWindow[id][msg.sender];
        return (uint256(w.validUntil) << 160) | (uint256(w.validAfter) << 208);
    }

    function checkSignaturePolicy(bytes32 id, address, bytes32, bytes calldata) external view returns (uint256) {
        if (status[id][msg.sender] != Status.Live) return SIG_VALIDATION_FAILED;
        TimePolicyConfig memory w = timeWindow[id][msg.sender];
        if (block.timestamp < w.validAfter) return SIG_VALIDATION_FAILED;
        if (w.validUntil != 0 && block.timestamp > w.validUntil) return SIG_VALIDATION_FAILED;
        return 0;
    }
}
