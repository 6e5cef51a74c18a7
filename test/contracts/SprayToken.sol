// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

/// A test ERC-20 for the chain watcher's tests and benchmark: `spray` mints to many holders in one
/// transaction (one Transfer log each), `transfer` moves tokens as any ERC-20 does.
contract SprayToken {
    mapping(address => uint256) public balanceOf;
    uint256 public totalSupply;
    uint8 public constant decimals = 6;

    event Transfer(address indexed from, address indexed to, uint256 value);

    function spray(address[] calldata to, uint256 amount) external {
        uint256 n = to.length;
        for (uint256 i = 0; i < n; ++i) {
            balanceOf[to[i]] += amount;
            emit Transfer(address(0), to[i], amount);
        }
        totalSupply += amount * n;
    }

    function mint(address to, uint256 amount) external returns (bool) {
        balanceOf[to] += amount;
        totalSupply += amount;
        emit Transfer(address(0), to, amount);
        return true;
    }

    function transfer(address to, uint256 value) external returns (bool) {
        uint256 held = balanceOf[msg.sender];
        require(held >= value, "balance");
        unchecked {
            balanceOf[msg.sender] = held - value;
        }
        balanceOf[to] += value;
        emit Transfer(msg.sender, to, value);
        return true;
    }
}
