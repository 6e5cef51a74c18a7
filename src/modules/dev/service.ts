import type { Address } from 'viem';
import { AppError, invalidRequest, unavailable } from '../../core/errors/app-error.ts';
import type { Deadline } from '../../core/http/deadline.ts';
import { fundAddress, type FundResult } from '../../devnet/faucet.ts';
import type { DevnetInfo } from '../../devnet/devnet.ts';

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
