// The delegations module: session-key grants (ZeroDev Kernel v3 permissions) naming the executor.

export { delegationsRoutes } from './routes.ts';
export {
  buildPermission,
  revocationCalls,
  validationIdOf,
  type BuiltPermission,
  type KernelModules,
  type KernelVersion,
  type PermissionScope,
} from './kernel.ts';
export {
  delegatedOperation,
  permissionNonceKey,
  signDelegatedOperation,
  userOperationHash,
  withStubSignature,
  type Call,
  type EnableMaterial,
} from './operations.ts';
export { expireDelegations, type Delegation, type Revocation } from './service.ts';
export { findDelegation, newestValidDelegation, type DelegationRow, type DelegationStatus } from './store.ts';
