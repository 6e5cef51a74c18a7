import { performance } from 'node:perf_hooks';
import { AppError } from '../errors/app-error.ts';

/**
 * The time budget of one request. Services check it before every call to a third party and
 * before every broadcast, never after one, so a 504 can say truthfully what was transmitted.
 */
export class Deadline {
  private readonly endsAt: number;
  private transmittedWhat: string[] = [];

  constructor(readonly budgetMs: number) {
    this.endsAt = performance.now() + budgetMs;
  }

  remainingMs(): number {
    return Math.max(0, this.endsAt - performance.now());
  }

  expired(): boolean {
    return this.remainingMs() <= 0;
  }

  /** Throws DEADLINE_EXCEEDED if the budget is spent; call it before `action` starts. */
  check(action: string): void {
    if (this.expired()) throw this.exceeded(`before ${action}`);
  }

  /** Records that something left the service (a broadcast, a venue order), for the 504 message. */
  markTransmitted(what: string): void {
    this.transmittedWhat.push(what);
  }

  get transmitted(): readonly string[] {
    return this.transmittedWhat;
  }

  exceeded(where: string): AppError {
    const sent =
      this.transmittedWhat.length === 0
        ? 'Nothing was transmitted.'
        : `Already transmitted: ${this.transmittedWhat.join(', ')}.`;
    return new AppError('DEADLINE_EXCEEDED', `The ${this.budgetMs} ms time budget ran out ${where}. ${sent}`);
  }
}
