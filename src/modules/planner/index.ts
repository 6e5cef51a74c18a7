// The planner module: how an order is executed (docs/execution.md).

export {
  bestQuote,
  planOrder,
  probeSellAmount,
  type ExpectedSavings,
  type PlannerAbort,
  type PlannerAbortReason,
  type PlannerInput,
  type PlannerQuote,
  type PlannerResult,
  type Price,
  type SlicedPlan,
} from './plan.ts';
