import type { Logger } from 'pino';
import type { Config } from '../config.ts';
import { systemClock } from '../core/clock.ts';
import { openAndMigrate } from '../runtime.ts';
import { downloadSdnXml, syncSdnList } from '../modules/screening/index.ts';

/** `purser screening sync`: downloads the official SDN XML and replaces the stored address set. */
export async function runScreeningSync(config: Config, log: Logger): Promise<number> {
  const handle = await openAndMigrate(config, log);
  try {
    const result = await syncSdnList({
      db: handle.db,
      clock: systemClock,
      log,
      fetchXml: async () => downloadSdnXml(config.screening.sdnUrl),
      source: config.screening.sdnUrl,
    });
    console.log(`Stored ${JSON.stringify(result)}`);
    return 0;
  } finally {
    await handle.close();
  }
}
