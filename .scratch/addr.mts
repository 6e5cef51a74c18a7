import { deploymentPlan, expectedDevnetContracts } from '../src/devnet/devnet.ts';
console.log(expectedDevnetContracts(8453));
