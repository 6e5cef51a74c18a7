// The switches module: what other modules use. Every route that executes calls
// `assertExecutionEnabled` before it transmits anything (docs/operations.md, "Operator controls").

export {
  accountSwitchState,
  assertExecutionEnabled,
  DEFAULT_PANIC_REASON,
  executionDisabled,
  listSwitches,
  normaliseSwitchTarget,
  panicAccount,
  setSwitch,
  SWITCH_REASON_MAX,
  SWITCH_SCOPES,
  SWITCH_VENUES,
  switchesChanged,
  switchesOffFor,
  unpanicAccount,
  venuesSwitchedOff,
  venueSwitchRefusal,
  type AccountSwitchState,
  type AssertExecutionOptions,
  type ExecutionTarget,
  type OffSwitch,
  type SwitchChange,
  type SwitchScope,
  type SwitchSource,
  type SwitchState,
  type SwitchVenue,
  type SwitchView,
} from './service.ts';
export { SwitchViewSchema } from './schemas.ts';
