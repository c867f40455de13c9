/**
 * Legacy loads: POST /sales and POST /inventory/import/process. A JSON body
 * `{arguments: {...}, payload: [rows]}` or a CSV upload (multipart `file`, the arguments as
 * form fields); both run as jobs of the same id space as current syncs. The answer is the
 * legacy `{success_message, job_log_id}` (200); errors speak the legacy dialect.
 */
import { z } from 'zod';
import type { Clients } from '@supply/kit';
import type { supply_workflows_v1 as pb } from '@supply/contracts';
import { requestContext } from '../http/context';
import { defineRoute, type Reply, type RouteDef } from '../http/routes';
import { streamImport } from '../uploads/import';
import { idempotencyKeyOf, SYNC_DEADLINE_MS } from './workflows';

const PREFIX = '/:tenant/api/v1';

const legacyAnswer = z.object({ success_message: z.string(), job_log_id: z.number() }).meta({ id: 'LegacyLoadAnswer' });

const flag = z.union([z.boolean(), z.enum(['1', '0', 'true', 'false'])]);
/** The legacy JSON load as documented; the workflows service checks it (422 in the legacy shape). */
const legacyLoadBody = z.object({
  arguments: z.object({ allow_record_creation: flag, allow_record_update: flag, should_continue_on_error: flag }),
  payload: z.array(z.record(z.string(), z.unknown())).min(1).describe('Rows, with the fields of the sync rows'),
});

/** The legacy presenter: only accepted jobs exist here (legacy loads have no dry run). */
function presentLegacy(noun: string, answer: pb.SyncAnswer): Reply {
  const job = answer.outcome?.$case === 'job' ? answer.outcome.job : null;
  if (!job) throw new Error('a legacy load answered without a job');
  return {
    kind: 'json',
    status: 200,
    body: {
      success_message: `The ${noun} was accepted and runs as job ${job.id}; see GET /jobs/${job.id} for its result.`,
      job_log_id: job.id,
    },
    headers: answer.replayed ? { 'Idempotent-Replayed': 'true' } : {},
  };
}

export function legacyLoadRoutes(clients: Clients): RouteDef[] {
  const load = (path: string, entity: 'sales' | 'inventory', module: 'demand' | 'inventory', noun: string, summary: string) =>
    defineRoute({
      method: 'post',
      path: `${PREFIX}${path}`,
      summary,
      tag: 'Legacy',
      access: { kind: 'legacy', module, level: 'planner' },
      dialect: 'legacy',
      accepts: 'json-or-multipart',
      deprecated: true,
      serviceIdempotency: true,
      handlerBody: legacyLoadBody,
      response: legacyAnswer,
      async handler({ req, res }) {
        const idempotency_key = idempotencyKeyOf(req);
        if (req.is('multipart/form-data')) {
          return presentLegacy(
            noun,
            await streamImport(clients, req, { entity, shape: 'legacy', idempotencyKey: idempotency_key, context: requestContext(res) }),
          );
        }
        const answer = await clients.workflows.submitSync(
          { entity, shape: 'legacy', body_json: JSON.stringify(req.body ?? null), idempotency_key },
          { deadlineMs: SYNC_DEADLINE_MS },
        );
        return presentLegacy(noun, answer);
      },
    });
  return [
    load(
      '/sales',
      'sales',
      'demand',
      'sales load',
      'Legacy: load sales rows, `{arguments: {allow_record_creation, allow_record_update, should_continue_on_error}, payload: [...]}` or a CSV `file` (asynchronous; answers job_log_id)',
    ),
    load(
      '/inventory/import/process',
      'inventory',
      'inventory',
      'inventory import',
      'Legacy: import inventory rows, `{arguments: {...}, payload: [...]}` or a CSV `file`, as legacy POST /sales (asynchronous; answers job_log_id)',
    ),
  ];
}
