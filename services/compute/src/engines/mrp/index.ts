/** Supply planning (MRP) engine: pure functions, no I/O. See README.md for the semantics. */
export {
  BUCKET_SIZES,
  WEEK_DAYS,
  bucketsFromCalendar,
  bucketsPerYear,
  bucketsPerYearFromStarts,
  type BucketSize,
  type CalendarSpec,
  type WeekDay,
} from './buckets';
export { EXCEPTION_TYPES, type ExceptionType, type PlanException } from './exceptions';
export {
  SPEND_TIMINGS,
  financialPlan,
  type FinancialAssumptions,
  type FinancialPlan,
  type FinancialRow,
  type FinancialTotals,
  type SpendTiming,
  type SupplyPlanSeries,
} from './financial';
export {
  DEFAULT_HOLDING_RATE,
  LOT_SIZING_RULES,
  economicOrderQuantity,
  type EoqInputs,
  type LotPolicy,
  type LotSizingRule,
} from './lot-sizing';
export {
  PLANNING_MODES,
  SELL_THROUGH_BASES,
  SUPPLY_POLICIES,
  sellThroughDemand,
  type PartnerLocation,
  type PartnerPlanInput,
  type PlanInput,
  type PlanningMode,
  type SellThroughBasis,
  type StandardPlanInput,
  type SupplyPolicy,
} from './modes';
export type { PlanningParameters } from './parameters';
export { planItemLocation, type MrpRow, type PlanJson, type PlannedOrder, type PlanResult } from './plan';
export { PlanningInputError } from './validation';
export { SeededRandom } from './prng';
