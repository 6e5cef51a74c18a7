import type { Address } from 'viem';
import { AppError, invalidRequest, unavailable } from '../../core/errors/app-error.ts';
import type { Deadline } from '../../core/http/deadline.ts';
import { fundAddress, type FundResult } from '../faucet.ts';
import { deployDevnetKernelAccount, devnetKernelAccount, type KernelAccount } from '../kernel-accounts.ts';
import type { DevnetInfo } from '../devnet.ts';

export interface FaucetParameters {
  chainId: number;
  address: Address;
  ethWei?: string;
  tokens?: { symbol: string; amount: string }[];
}

/**
 * Mints devnet ETH and test tokens to an address (development only).
 * Errors: UNAVAILABLE without a devnet; INVALID_REQUEST for a chain or token the devnet lacks.
 */
export async function fundFromFaucet(
  devnet: DevnetInfo | undefined,
  deadline: Deadline,
  params: FaucetParameters,
): Promise<FundResult> {
  if (!devnet) {
    throw unavailable('The devnet is not running, so there is no faucet.', {
      remediation: 'Start the service in development with DEVNET=true (the default).',
    });
  }
  const chain = devnet.chains[params.chainId];
  if (!chain) {
    throw invalidRequest(
      `chain_id ${params.chainId} is not a devnet chain; use one of ${Object.keys(devnet.chains).join(', ')}.`,
    );
  }
  const known = new Map(chain.tokens.map((t) => [t.symbol.toUpperCase(), t.symbol]));
  const tokens = (params.tokens ?? []).map((t) => {
    const symbol = known.get(t.symbol.toUpperCase());
    if (!symbol) {
      throw invalidRequest(
        `tokens: ${t.symbol} is not a devnet token on chain ${params.chainId}; use one of ${[...known.values()].join(', ')}.`,
      );
    }
    return { symbol, amount: t.amount };
  });
  if (!params.ethWei && tokens.length === 0) {
    throw invalidRequest('Ask for something: eth_wei, tokens, or both.');
  }
  deadline.check('funding on the devnet');
  try {
    return await fundAddress(devnet, {
      chainId: params.chainId,
      address: params.address,
      ...(params.ethWei ? { eth: params.ethWei } : {}),
      tokens,
    });
  } catch (err) {
    throw new AppError('UNAVAILABLE', 'The devnet chain did not accept the faucet transactions.', {
      cause: err,
    });
  }
}

export interface KernelAccountParameters {
  chainId: number;
  owner: Address;
  index: bigint;
  deploy: boolean;
  ethWei?: string;
  tokens?: { symbol: string; amount: string }[];
}

/**
 * A Kernel v3.1 account for `owner` on a devnet chain (development only): its counterfactual
 * address, deployed when asked, funded through the faucet when asked.
 * Errors: UNAVAILABLE without a devnet; INVALID_REQUEST for a chain without Kernel.
 */
export async function kernelAccountFromFaucet(
  devnet: DevnetInfo | undefined,
  deadline: Deadline,
  params: KernelAccountParameters,
): Promise<{ account: KernelAccount; txHashes: string[]; funded: FundResult | null }> {
  if (!devnet) {
    throw unavailable('The devnet is not running, so there are no Kernel accounts to make.', {
      remediation: 'Start the service in development with DEVNET=true (the default).',
    });
  }
  const chain = devnet.chains[params.chainId];
  if (!chain?.contracts.kernelFactory) {
    const withKernel = Object.values(devnet.chains)
      .filter((c) => c.contracts.kernelFactory)
      .map((c) => c.chainId);
    throw invalidRequest(
      `chain_id ${params.chainId} has no Kernel v3.1 on this devnet; use one of ${withKernel.join(', ')}.`,
    );
  }
  deadline.check('reading the Kernel factory');
  let account = await devnetKernelAccount(devnet, params.chainId, params.owner, params.index);
  const txHashes: string[] = [];
  if (params.deploy && !account.deployed) {
    deadline.check('deploying the Kernel account');
    const hash = await deployDevnetKernelAccount(devnet, account);
    if (hash) txHashes.push(hash);
    account = { ...account, deployed: true };
  }
  let funded: FundResult | null = null;
  if (params.ethWei || (params.tokens && params.tokens.length > 0)) {
    funded = await fundFromFaucet(devnet, deadline, {
      chainId: params.chainId,
      address: account.address,
      ...(params.ethWei ? { ethWei: params.ethWei } : {}),
      ...(params.tokens ? { tokens: params.tokens } : {}),
    });
    txHashes.push(...funded.txHashes);
  }
  return { account, txHashes, funded };
}
