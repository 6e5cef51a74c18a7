// The jurisdiction gate of every prediction-market route (docs/prediction-markets.md, "Where
// requests come from"): runs before the body is read and before the credential is checked, and
// answers 451 JURISDICTION_BLOCKED to a restricted or unknown origin. No other route has it.

import type { FastifyRequest } from 'fastify';
import {
  createJurisdictionGate,
  GeoDatabaseUnavailable,
  type JurisdictionGate,
} from '../../adapters/geo/index.ts';
import type { Config } from '../../config.ts';
import { AppError, unavailable } from '../../core/errors/app-error.ts';
import type { AppDeps } from '../../deps.ts';

const fromConfig = new WeakMap<Config, JurisdictionGate>();

/** The application's gate, else one built from config once (its GeoIP database opened on first use). */
export function jurisdictionGateOf(deps: Pick<AppDeps, 'config' | 'jurisdiction'>): JurisdictionGate {
  if (deps.jurisdiction) return deps.jurisdiction;
  let gate = fromConfig.get(deps.config);
  if (!gate) {
    gate = createJurisdictionGate({ ...deps.config.pm.geo });
    fromConfig.set(deps.config, gate);
  }
  return gate;
}

export async function pmJurisdictionGate(req: FastifyRequest, deps: AppDeps): Promise<void> {
  let verdict;
  try {
    verdict = await jurisdictionGateOf(deps).check({
      remoteAddress: req.socket.remoteAddress ?? '',
      headers: req.headers,
    });
  } catch (err) {
    if (!(err instanceof GeoDatabaseUnavailable)) throw err;
    req.log.error({ err: err.message }, 'the GeoIP database could not be read');
    throw unavailable('The origin of this request cannot be established right now.', {
      remediation: 'Retry in a minute; the operator has been told (the GeoIP database could not be read).',
      next: [],
    });
  }
  if (verdict.allowed) return;
  throw new AppError(
    'JURISDICTION_BLOCKED',
    verdict.why === 'restricted'
      ? `Prediction-market features are not available from ${verdict.country}.`
      : 'Prediction-market features are refused when the origin of a request cannot be established.',
  );
}
