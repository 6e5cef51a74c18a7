import { AppError } from './errors/app-error.ts';
import type { Authenticator } from './http/route-table.ts';

/**
 * Until the identity module lands, no bearer credential is accepted. Every bearer route
 * answers 401 rather than running unauthenticated.
 */
export const refuseAllAuthenticator: Authenticator = {
  authenticate: async () => {
    throw new AppError('UNAUTHORIZED', 'This route needs a bearer credential.', {
      next: [{ method: 'POST', path: '/v1/auth/challenge', why: 'start a wallet sign-in' }],
    });
  },
};
