import { AppError } from '../../src/core/errors/app-error.ts';
import type { Authenticator } from '../../src/core/http/route-table.ts';

/**
 * For apps built without the identity module: no bearer credential is accepted, so every bearer
 * route answers 401 rather than running unauthenticated.
 */
export const refuseAllAuthenticator: Authenticator = {
  authenticate: async () => {
    throw new AppError('UNAUTHORIZED', 'This route needs a bearer credential.', {
      next: [{ method: 'POST', path: '/v1/auth/challenge', why: 'start a wallet sign-in' }],
    });
  },
};
