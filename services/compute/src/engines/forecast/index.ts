/**
 * Demand forecasting library of the compute service: series classification,
 * exponential smoothing, Theta, naive and intermittent-demand methods, automatic
 * per-series choice, and the preparation of dated sales history.
 */
export {
  forecastSeries,
  forecastDatedSeries,
  forecastBatch,
  type ForecastOptions,
  type SeriesForecast,
  type DatedForecastOptions,
  type DatedSeriesForecast,
  type BatchItem,
  type BatchResult,
} from './forecast';
export { ALGORITHMS, COMBINATION_MEMBERS, isAlgorithm, type Algorithm, type Method } from './methods';
export { SERIES_CLASSES, ADI_CUTOFF, CV2_CUTOFF, classifySeries, type SeriesClass, type SeriesProfile } from './classify';
export {
  MISSING_IMPUTATIONS,
  CONSTRAINTS,
  imputeMissing,
  applyConstraint,
  expectedDemandConstraint,
  toPeriodSeries,
  isMissingImputation,
  isConstraint,
  type MissingImputation,
  type Constraint,
  type DatedValue,
  type PeriodSeries,
} from './prepare';
export {
  FREQUENCIES,
  SEASONAL_PERIODS,
  isFrequency,
  parseIsoDate,
  formatIsoDate,
  addPeriods,
  futureDates,
  type Frequency,
  type CalendarDate,
} from './calendar';
export { isSeasonal, seasonallyAdjust } from './seasonality';
export { symmetricMape, meanAbsoluteScaledError, meanAbsoluteError } from './accuracy';
