/**
 * A multipart file import, streamed: busboy reads the request, and the `file` part goes to
 * the workflows service over a gRPC client stream as it arrives, paced by the service
 * (it stages rows as it parses them), so the gateway never holds more than a few socket
 * buffers of the file. The other form fields, which may come before or after the file,
 * follow the file as one JSON object.
 */
import type { Request } from 'express';
import busboy from 'busboy';
import { AppError, ValidationError, type ClientStreamCall, type Clients, type RequestContext } from '@supply/kit';
import type { supply_workflows_v1 as pb } from '@supply/contracts';
import { setFormField } from './form-fields';
import { decodedBody, notSoEncoded } from '../http/edge';

/** The largest file an import takes, in kilobytes (a larger one is a 422 on `file`). */
export const MAX_FILE_KB = 10_240;
/** Uploading and staging a file of the largest size (and a dry run of it) fits well within this. */
const IMPORT_DEADLINE_MS = 300_000;
const LIMITS = { files: 1, fields: 50, fieldSize: 64 * 1024, parts: 60, fileSize: MAX_FILE_KB * 1024 };

export interface ImportOptions {
  entity: 'sales' | 'inventory';
  shape: 'sync' | 'legacy';
  idempotencyKey: string;
  /** The request's context (http/context.ts): the stream opens in busboy's callback, where the ambient one is not the request's. */
  context: RequestContext;
  /** Checks the complete form before the import is committed (e.g. the replace scope); throwing abandons it. */
  checkFields?(fields: Record<string, unknown>): void;
}

const fileError = (message: string) => new ValidationError({ file: [message] });

export async function streamImport(clients: Clients, req: Request, options: ImportOptions): Promise<pb.SyncAnswer> {
  if (!req.is('multipart/form-data')) throw fileError('The file field is required: send the file as multipart/form-data.');
  const fields: Record<string, unknown> = {};
  let call: ClientStreamCall<pb.ImportFileRequest, pb.SyncAnswer> | null = null;
  let sawFile = false;
  let oversize = false;
  let failure: unknown = null;
  let pending: Promise<void> = Promise.resolve();

  const body = decodedBody(req);
  await new Promise<void>((resolve, reject) => {
    let parser: busboy.Busboy;
    try {
      parser = busboy({ headers: req.headers, limits: LIMITS, defParamCharset: 'utf8' });
    } catch {
      reject(fileError('The multipart body cannot be read: its Content-Type has no boundary.'));
      return;
    }
    parser.on('field', (name, value, info) => {
      if (info.valueTruncated)
        failure ??= new ValidationError({ [name]: [`The ${name} field must not be greater than ${LIMITS.fieldSize / 1024} kilobytes.`] });
      else setFormField(fields, name, value);
    });
    parser.on('file', (name, stream, info) => {
      if (name !== 'file' || sawFile) {
        stream.on('error', () => undefined);
        stream.resume();
        return;
      }
      sawFile = true;
      const opened = clients.workflows.importFile({ deadlineMs: IMPORT_DEADLINE_MS, context: options.context });
      call = opened;
      pending = opened
        .write({
          part: {
            $case: 'start',
            start: {
              entity: options.entity,
              shape: options.shape,
              idempotency_key: options.idempotencyKey,
              file_name: info.filename ?? '',
            },
          },
        })
        .catch((err) => {
          failure ??= err;
        });
      stream.on('data', (data: Buffer) => {
        if (failure || oversize) return;
        stream.pause();
        pending = pending
          .then(() => opened.write({ part: { $case: 'data', data } }))
          .catch((err) => {
            failure ??= err;
          })
          .finally(() => stream.resume());
      });
      // A body cut short fails the part too; the parser's own error says it once.
      stream.on('error', () => undefined);
      stream.on('limit', () => {
        oversize = true;
        opened.cancel();
        // A compressed body could inflate without end: stop decoding it; the raw bytes are drained unread.
        if (body !== req) stop();
      });
    });
    parser.on('filesLimit', () => undefined);
    const stop = () => {
      body.unpipe(parser);
      if (body !== req) {
        req.unpipe();
        body.destroy();
      }
      req.resume();
      resolve();
    };
    parser.on('error', (err: Error) => {
      failure ??= fileError(`The multipart body cannot be read: ${err.message}.`);
      stop();
    });
    if (body !== req) {
      body.on('error', () => {
        failure ??= notSoEncoded(req);
        stop();
      });
    }
    parser.on('close', () => resolve());
    body.pipe(parser);
  });
  await pending;

  const opened = call as ClientStreamCall<pb.ImportFileRequest, pb.SyncAnswer> | null;
  const abandon = (err: unknown): never => {
    opened?.cancel();
    throw err;
  };
  if (oversize) abandon(fileError(`The file must not be greater than ${MAX_FILE_KB} kilobytes.`));
  if (failure) abandon(failure);
  if (!opened || !sawFile) abandon(fileError('The file field is required.'));
  try {
    options.checkFields?.(fields);
  } catch (err) {
    abandon(err);
  }
  try {
    await opened!.write({ part: { $case: 'fields_json', fields_json: JSON.stringify(fields) } });
    return await opened!.end();
  } catch (err) {
    if (err instanceof AppError) throw err;
    throw new AppError('unavailable', 'The import could not be handed to the workflows service.');
  }
}
