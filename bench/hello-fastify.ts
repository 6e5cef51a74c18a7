// The floor for a read: Fastify's hello-world (no logger, no hooks, one route answering a constant
// JSON object), run as a child process by bench/intents.ts beside Purser's authenticated
// GET /v1/intents/{id}, so the read is reported against what the framework alone costs on this
// machine in the same run. Prints `listening <port>` once it listens on 127.0.0.1.

import Fastify from 'fastify';

async function main(): Promise<void> {
  const app = Fastify({ logger: false });
  app.get('/', async () => ({ hello: 'world' }));
  await app.listen({ port: 0, host: '127.0.0.1' });
  const address = app.server.address();
  console.log(`listening ${typeof address === 'object' && address ? address.port : 0}`);
  const stop = () => void app.close().then(() => process.exit(0));
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
}

void main();
