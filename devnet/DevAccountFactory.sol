// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

import {DevAccount} from "./DevAccount.sol";

/// CREATE2 factory for DevAccount. The address depends only on (factory, owner, salt), so an
/// account can sign (ERC-6492, with `createAccount` calldata as factory data) before it exists.
contract DevAccountFactory {
    event AccountCreated(address indexed account, address indexed owner, uint256 salt);

    function createAccount(address owner, uint256 salt) external returns (address) {
        address predicted = getAddress(owner, salt);
        if (predicted.code.length > 0) return predicted;
        DevAccount account = new DevAccount{salt: _create2Salt(owner, salt)}(owner);
        emit AccountCreated(address(account), owner, salt);
        return address(account);
    }

    function getAddress(address owner, uint256 salt) public view returns (address) {
        bytes32 initCodeHash = keccak256(abi.encodePacked(type(DevAccount).creationCode, abi.encode(owner)));
        bytes32 digest = keccak256(abi.encodePacked(bytes1(0xff), address(this), _create2Salt(owner, salt), initCodeHash));
        return address(uint160(uint256(digest)));
    }

    function _create2Salt(address owner, uint256 salt) private pure returns (bytes32) {
        return keccak256(abi.encode(owner, salt));
    }
}
