import { AppError } from '../errors/app-error.ts';
import type { Principal } from './route-table.ts';

/** Who acts and from where: what services need to write audit facts and events. */
export interface Actor {
  principal: Principal;
  network: { clientIp: string | null; userAgent: string | null };
}

/** The caller of a bearer route; the guard has already refused a request without one. */
export function requirePrincipal(ctx: { principal: Principal | null }): Principal {
  if (!ctx.principal) throw new AppError('UNAUTHORIZED', 'This route needs a bearer credential.');
  return ctx.principal;
}

export function actorOf(ctx: {
  principal: Principal | null;
  clientIp: string;
  userAgent: string | null;
}): Actor {
  return { principal: requirePrincipal(ctx), network: { clientIp: ctx.clientIp, userAgent: ctx.userAgent } };
}

/** How audit facts name the credential that acted: `session:<id>` or `key:<id>`. */
export function actorName(actor: { principal: Principal }): string {
  return `${actor.principal.kind}:${actor.principal.credentialId}`;
}
