// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

/// Devnet smart account with one ECDSA owner. It stands in for a Kernel account until the real
/// EntryPoint + Kernel are deployed: it executes calls for its owner (directly, or relayed with
/// the owner's EIP-712 signature), speaks the ERC-7579 `execute(bytes32,bytes)` encoding for
/// single and batch calls, and answers ERC-1271 for plain owner signatures over the hash.
contract DevAccount {
    struct Call {
        address target;
        uint256 value;
        bytes callData;
    }

    address public immutable owner;
    uint256 private relayNonce;

    bytes4 private constant ERC1271_MAGIC = 0x1626ba7e;
    bytes4 private constant ERC1271_INVALID = 0xffffffff;
    uint256 private constant HALF_CURVE_ORDER = 0x7FFFFFFFFFFFFFFFFFFFFFFFFFFFFFFF5D576E7357A4501DDFE92F46681B20A0;
    bytes32 private constant EIP712_DOMAIN_TYPEHASH =
        keccak256("EIP712Domain(string name,string version,uint256 chainId,address verifyingContract)");
    bytes32 public constant EXECUTE_TYPEHASH =
        keccak256("Execute(address target,uint256 value,bytes data,uint256 nonce,uint256 deadline)");

    event Executed(address indexed target, uint256 value, bytes4 selector, bool success);

    error NotOwner();
    error Expired();
    error BadSignature();
    error UnsupportedMode(bytes32 mode);

    constructor(address accountOwner) {
        require(accountOwner != address(0), "DevAccount: zero owner");
        owner = accountOwner;
    }

    modifier onlyOwnerOrSelf() {
        if (msg.sender != owner && msg.sender != address(this)) revert NotOwner();
        _;
    }

    receive() external payable {}

    function accountId() external pure returns (string memory) {
        return "purser.devaccount.0.1.0";
    }

    /// Nonce of the next relayed (`executeWithSignature`) call.
    function getNonce() external view returns (uint256) {
        return relayNonce;
    }

    function DOMAIN_SEPARATOR() public view returns (bytes32) {
        return keccak256(
            abi.encode(EIP712_DOMAIN_TYPEHASH, keccak256("DevAccount"), keccak256("1"), block.chainid, address(this))
        );
    }

    function execute(address target, uint256 value, bytes calldata data)
        external
        payable
        onlyOwnerOrSelf
        returns (bytes memory)
    {
        return _call(target, value, data, true);
    }

    /// ERC-7579 execution: callType 0x00 single (target ‖ value ‖ callData, packed) or 0x01 batch
    /// (abi-encoded Call[]); execType 0x00 reverts on any failure, 0x01 carries on.
    function execute(bytes32 mode, bytes calldata executionCalldata) external payable onlyOwnerOrSelf {
        bytes1 callType = mode[0];
        bytes1 execType = mode[1];
        if (execType != 0x00 && execType != 0x01) revert UnsupportedMode(mode);
        bool mustSucceed = execType == 0x00;
        if (callType == 0x00) {
            require(executionCalldata.length >= 52, "DevAccount: short execution");
            address target = address(bytes20(executionCalldata[0:20]));
            uint256 value = uint256(bytes32(executionCalldata[20:52]));
            _call(target, value, executionCalldata[52:], mustSucceed);
        } else if (callType == 0x01) {
            Call[] memory calls = abi.decode(executionCalldata, (Call[]));
            for (uint256 i = 0; i < calls.length; i++) {
                _call(calls[i].target, calls[i].value, calls[i].callData, mustSucceed);
            }
        } else {
            revert UnsupportedMode(mode);
        }
    }

    /// Anyone may relay a call the owner signed (EIP-712 `Execute` under this account's domain).
    function executeWithSignature(
        address target,
        uint256 value,
        bytes calldata data,
        uint256 deadline,
        bytes calldata signature
    ) external payable returns (bytes memory) {
        if (block.timestamp > deadline) revert Expired();
        bytes32 structHash = keccak256(abi.encode(EXECUTE_TYPEHASH, target, value, keccak256(data), relayNonce, deadline));
        bytes32 digest = keccak256(abi.encodePacked("\x19\x01", DOMAIN_SEPARATOR(), structHash));
        if (_recover(digest, signature) != owner) revert BadSignature();
        relayNonce++;
        return _call(target, value, data, true);
    }

    /// ERC-1271: valid when `signature` is the owner's 65-byte ECDSA signature over `hash`.
    function isValidSignature(bytes32 hash, bytes calldata signature) external view returns (bytes4) {
        address signer = _recover(hash, signature);
        return signer != address(0) && signer == owner ? ERC1271_MAGIC : ERC1271_INVALID;
    }

    function onERC721Received(address, address, uint256, bytes calldata) external pure returns (bytes4) {
        return this.onERC721Received.selector;
    }

    function onERC1155Received(address, address, uint256, uint256, bytes calldata) external pure returns (bytes4) {
        return this.onERC1155Received.selector;
    }

    function onERC1155BatchReceived(address, address, uint256[] calldata, uint256[] calldata, bytes calldata)
        external
        pure
        returns (bytes4)
    {
        return this.onERC1155BatchReceived.selector;
    }

    function supportsInterface(bytes4 interfaceId) external pure returns (bool) {
        return interfaceId == 0x01ffc9a7 // ERC-165
            || interfaceId == 0x150b7a02 // ERC-721 receiver
            || interfaceId == 0x4e2312e0; // ERC-1155 receiver
    }

    function _call(address target, uint256 value, bytes memory data, bool mustSucceed) private returns (bytes memory) {
        (bool success, bytes memory result) = target.call{value: value}(data);
        bytes4 selector;
        if (data.length >= 4) selector = bytes4(data);
        emit Executed(target, value, selector, success);
        if (!success && mustSucceed) {
            assembly {
                revert(add(result, 0x20), mload(result))
            }
        }
        return result;
    }

    function _recover(bytes32 digest, bytes calldata signature) private pure returns (address) {
        if (signature.length != 65) return address(0);
        bytes32 r = bytes32(signature[0:32]);
        bytes32 s = bytes32(signature[32:64]);
        uint8 v = uint8(signature[64]);
        if (v < 27) v += 27;
        if (uint256(s) > HALF_CURVE_ORDER || (v != 27 && v != 28)) return address(0);
        return ecrecover(digest, v, r, s);
    }
}
