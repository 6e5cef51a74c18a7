// Whether TCP ports are free, for starts that would otherwise fail late: each port is bound on
// `host` (exclusively) and let go at once. A port can still be taken between this check and the
// real bind; callers translate that failure too.

import { createServer } from 'node:net';

/** The ports among `ports` that another program holds on `host`. */
export async function busyPorts(ports: number[], host: string): Promise<number[]> {
  const busy: number[] = [];
  for (const port of ports) {
    const server = createServer();
    const inUse = await new Promise<boolean>((resolve) => {
      server.once('error', (err: NodeJS.ErrnoException) => resolve(err.code === 'EADDRINUSE'));
      server.listen({ port, host, exclusive: true }, () => resolve(false));
    });
    if (server.listening) await new Promise<void>((resolve) => server.close(() => resolve()));
    if (inUse) busy.push(port);
  }
  return busy;
}

/** The API's PORT is held by another program: said before anything else starts. */
export class ApiPortInUseError extends Error {
  constructor(
    readonly port: number,
    readonly host: string,
  ) {
    super(
      `Port ${port} on ${host} is already in use, so the API cannot listen there. ` +
        'Set PORT to another port, or PORT=0 to pick a free one, or stop the program holding it ' +
        '(an earlier Purser still running?).',
    );
    this.name = 'ApiPortInUseError';
  }
}
