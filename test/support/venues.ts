// Venue adapter tests: the VenueError a call ends in.

import { expect } from 'vitest';
import { VenueError } from '../../src/adapters/venues/port.ts';

/** The VenueError `promise` rejects with; fails the test on an answer or on any other error. */
export async function venueFailure(promise: Promise<unknown>): Promise<VenueError> {
  try {
    await promise;
  } catch (err) {
    expect(err).toBeInstanceOf(VenueError);
    return err as VenueError;
  }
  throw new Error('expected a VenueError, got an answer');
}
