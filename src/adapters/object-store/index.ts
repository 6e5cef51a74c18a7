// The object store the config asks for: the statements bucket when one is configured, else the
// statements directory.

import type { StatementsConfig } from '../../config.ts';
import type { Clock } from '../../core/clock.ts';
import { createFilesystemObjectStore } from './filesystem.ts';
import type { ObjectStore } from './port.ts';
import { createS3ObjectStore } from './s3.ts';

export function createObjectStore(config: StatementsConfig, options: { clock?: Clock } = {}): ObjectStore {
  if (config.s3) {
    return createS3ObjectStore({ ...config.s3, ...(options.clock ? { clock: options.clock } : {}) });
  }
  return createFilesystemObjectStore({ root: config.dir });
}

export { createFilesystemObjectStore } from './filesystem.ts';
export { createS3ObjectStore } from './s3.ts';
export { ObjectStoreError, type ObjectStore, type StagedObject } from './port.ts';
