/**
 * The planning vocabulary: values the gateway validates, the reference service stores and the
 * compute engines read. The pure engines keep their own copies (they import nothing of the
 * project); compute's tests hold those equal to these.
 */

/** In `Date.getUTCDay()` order: index 0 is Sunday. */
export const WEEK_DAYS = ['sunday', 'monday', 'tuesday', 'wednesday', 'thursday', 'friday', 'saturday'] as const;
export type WeekDay = (typeof WEEK_DAYS)[number];

/** Calendar buckets plans are made in. */
export const CALENDAR_BUCKETS = ['day', 'week', 'month'] as const;
export type CalendarBucket = (typeof CALENDAR_BUCKETS)[number];

/** Spans of the timing intervals sales records are kept in. */
export const TIMING_SPANS = ['day', 'week', 'month', 'year'] as const;
export type TimingSpan = (typeof TIMING_SPANS)[number];

export const LOCATION_TYPES = ['warehouse', 'distribution_center', 'plant', 'store', 'supplier', 'partner'] as const;
export type LocationType = (typeof LOCATION_TYPES)[number];

/** What a hierarchy level groups. */
export const LEVEL_KINDS = ['item', 'customer_group'] as const;
export type LevelKind = (typeof LEVEL_KINDS)[number];

export const LOT_SIZING_RULES = ['lot_for_lot', 'fixed_order_quantity', 'economic_order_quantity', 'period_order_quantity'] as const;
export type LotSizingRule = (typeof LOT_SIZING_RULES)[number];
