import { z } from 'zod';
import type { Clients } from '@supply/kit';
import { creditPeriodOf, MAX_USAGE_DAYS, USAGE_GROUPS, utcDay } from '@supply/contracts';
import { defineRoute, emptyMetaSchema, linksSchema, q, type Access, type RouteDef } from '../http/routes';
import type { MeteredRequest } from '../metering/index';

const PREFIX = '/:tenant/api/v1';
const TAG = 'Credits and usage';
/** Credit utilities: any token of the tenant, no data scope, no cost (asking what is left must not spend it). */
const UTILITY: Access = { kind: 'token', scope: null, module: null, level: 'view', cost: 'utility' };

const creditsSchema = z
  .object({
    period: z.string().describe('Calendar month in UTC, YYYY-MM'),
    period_start: z.string().describe('First instant of the period (inclusive)'),
    period_end: z.string().describe('First instant of the next period (exclusive)'),
    allowance: z.number().int(),
    used: z.number().int().describe('Credits recorded in the period; may trail `balance` by the records still on their way'),
    balance: z.number().int().describe('Credits left; the same figure as the Credits-Remaining header'),
  })
  .meta({ id: 'Credits' });

const usageRowSchema = z
  .object({
    day: z.string().nullable(),
    method: z.string().nullable(),
    endpoint: z.string().nullable(),
    token_id: z.number().int().nullable(),
    token_name: z.string().nullable(),
    requests: z.number().int(),
    credits: z.number().int(),
  })
  .meta({ id: 'UsageRow' });

const usageQuery = z
  .object({
    from: z.iso.date().optional(),
    to: z.iso.date().optional(),
    group_by: q
      .list()
      .refine((groups) => groups.every((g) => (USAGE_GROUPS as readonly string[]).includes(g)), {
        message: `The group by field may only name ${USAGE_GROUPS.join(', ')}.`,
      })
      .optional(),
  })
  .superRefine((query, ctx) => {
    if (!query.from || !query.to) return;
    const days = (Date.parse(query.to) - Date.parse(query.from)) / 86_400_000 + 1;
    if (days < 1) ctx.addIssue({ code: 'custom', path: ['to'], message: 'The to field must be a date after or equal to from.' });
    else if (days > MAX_USAGE_DAYS) {
      ctx.addIssue({ code: 'custom', path: ['to'], message: `The to field must be at most ${MAX_USAGE_DAYS} days after from.` });
    }
  });

export function usageRoutes(clients: Clients, deps: { now(): Date }): RouteDef[] {
  return [
    defineRoute({
      method: 'get',
      path: `${PREFIX}/credits`,
      summary: "The workspace's credits this month: allowance, recorded use and balance (costs nothing)",
      tag: TAG,
      access: UTILITY,
      dialect: 'current',
      response: z.object({ data: z.array(creditsSchema).length(1), meta: emptyMetaSchema, links: linksSchema }),
      async handler({ res }) {
        const metered: MeteredRequest | undefined = res.locals.metering;
        const period = metered?.period ?? creditPeriodOf(deps.now());
        const credits = await clients.tokens.getCredits({ period: period.key });
        // Without the meter (an outage) the balance is what the usage records say.
        const balance = metered?.balance ?? credits.allowance - credits.used;
        return {
          kind: 'envelope',
          data: [
            {
              period: credits.period,
              period_start: credits.period_start,
              period_end: credits.period_end,
              allowance: credits.allowance,
              used: credits.used,
              balance: Math.max(0, balance),
            },
          ],
        };
      },
    }),
    defineRoute({
      method: 'get',
      path: `${PREFIX}/usage`,
      summary: 'Requests and credits per day, endpoint and token (costs nothing); `from`/`to` default to this month',
      tag: TAG,
      access: UTILITY,
      dialect: 'current',
      query: usageQuery,
      response: z.object({
        data: z.array(usageRowSchema),
        meta: z.object({
          from: z.string(),
          to: z.string(),
          group_by: z.array(z.enum(USAGE_GROUPS)),
          totals: z.object({ requests: z.number().int(), credits: z.number().int() }),
        }),
        links: linksSchema,
      }),
      async handler({ query }) {
        const to = query.to ?? utcDay(deps.now());
        const from = query.from ?? `${to.slice(0, 7)}-01`;
        const groupBy = query.group_by?.length ? [...new Set(query.group_by)] : [...USAGE_GROUPS];
        const report = await clients.tokens.getUsage({ from, to, group_by: groupBy });
        return {
          kind: 'envelope',
          data: report.rows.map((r) => ({
            day: r.day || null,
            method: r.method || null,
            endpoint: r.endpoint || null,
            token_id: r.token_id || null,
            token_name: r.token_id ? r.token_name : null,
            requests: r.requests,
            credits: r.credits,
          })),
          meta: { from, to, group_by: groupBy, totals: { requests: report.requests, credits: report.credits } },
        };
      },
    }),
  ];
}
