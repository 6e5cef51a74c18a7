// The execution switches as rules of the pre-flight check (POST /v1/checks), so the dry run says
// what admission would (decisions "Switches"): the environment, the account (an operator's switch
// or the account's own panic) and the wallet refuse every execution with EXECUTION_DISABLED; a
// venue switch refuses a prediction-market order at that venue the same way, and removes the
// venue from a conversion's planning (no venue left: VENUE_UNAVAILABLE). Pure: the caller reads
// the switches that are off (switchesOffFor) and passes them in.

import type { PolicyDocument } from './document.ts';
import type { PolicyAction } from './engine.ts';
import { executionDisabled, type OffSwitch } from '../switches/index.ts';

/** One rule per kind of switch; `switch.panic` is the account's own POST /v1/account/panic. */
export type SwitchRuleName =
  'switch.environment' | 'switch.account' | 'switch.panic' | 'switch.wallet' | 'switch.venue';

/** A switch that refuses the action, in the shape of a rule verdict (it always fails). */
export interface SwitchRefusal {
  rule: SwitchRuleName;
  pass: false;
  /** The switch must be on. */
  limit: 'on';
  value: 'off';
  code: 'EXECUTION_DISABLED' | 'VENUE_UNAVAILABLE';
  /** What admission would answer: the switch, who set it, and its reason. */
  message: string;
}

export interface SwitchRules {
  /** Refused at admission, before any policy rule is read. */
  admission: SwitchRefusal[];
  /** Refused when the conversion is planned, after the policy's rules (its venues). */
  planning: SwitchRefusal[];
}

function ruleOf(s: OffSwitch): SwitchRuleName {
  if (s.scope === 'account') return s.source === 'panic' ? 'switch.panic' : 'switch.account';
  return `switch.${s.scope}`;
}

const refused = (s: OffSwitch): SwitchRefusal => ({
  rule: ruleOf(s),
  pass: false,
  limit: 'on',
  value: 'off',
  code: 'EXECUTION_DISABLED',
  message: executionDisabled(s).message,
});

/**
 * The switches among `off` (widest first, as switchesOffFor returns them) that refuse the action.
 * Delegation scopes execute nothing and are never refused by a switch.
 */
export function switchRules(
  action: PolicyAction,
  policy: PolicyDocument,
  off: readonly OffSwitch[],
): SwitchRules {
  const out: SwitchRules = { admission: [], planning: [] };
  if (action.kind === 'delegation_scope') return out;
  for (const s of off) {
    if (s.scope === 'environment' || s.scope === 'account' || s.scope === 'wallet') {
      out.admission.push(refused(s));
    }
  }
  const venueOff = (venue: string) => off.find((s) => s.scope === 'venue' && s.target === venue);
  if (action.kind === 'prediction_market_order') {
    const s = venueOff(action.venue);
    if (s) out.admission.push(refused(s));
  }
  if (action.kind === 'conversion') {
    // The venue asked for, or else every venue the policy allows: refused when none is left on.
    const asked: string[] = action.venue !== undefined ? [action.venue] : [...policy.execution.venues];
    const switched = asked.map(venueOff).filter((s): s is OffSwitch => s !== undefined);
    if (asked.length > 0 && switched.length === asked.length) {
      const each = switched.map((s) => executionDisabled(s).message).join(' ');
      out.planning.push({
        rule: 'switch.venue',
        pass: false,
        limit: 'on',
        value: 'off',
        code: 'VENUE_UNAVAILABLE',
        message: `${each} No venue is left to execute the conversion.`,
      });
    }
  }
  return out;
}
