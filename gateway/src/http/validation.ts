import type { z } from 'zod';
import { addFieldError, fieldErrors, type FieldErrors } from '@supply/kit';

/** Laravel says "per page" for `per_page` and keeps the dotted path for nested fields. */
function attribute(path: PropertyKey[]): string {
  const joined = path.map(String).join('.');
  // Only underscores between letters read as spaces: `__proto__` stays as written.
  return path.length === 1 ? joined.replace(/(?<=[A-Za-z0-9])_(?=[A-Za-z0-9])/g, ' ') : joined;
}

function messageFor(issue: z.core.$ZodIssue, path: PropertyKey[]): string {
  const name = attribute(path);
  // The body itself has no field name: every message names "the request body" instead of "The  field".
  const body = path.length === 0;
  const subject = body ? 'The request body' : `The ${name} field`;
  switch (issue.code) {
    case 'invalid_type':
      if (issue.input === undefined) return `${subject} is required.`;
      if (issue.expected === 'number' || issue.expected === 'int') return `${subject} must be a number.`;
      if (issue.expected === 'boolean') return `${subject} must be true or false.`;
      if (issue.expected === 'array') return `${subject} must be ${body ? 'a JSON array' : 'an array'}.`;
      if (issue.expected === 'object') return `${subject} must be ${body ? 'a JSON object' : 'an object'}.`;
      return `${subject} must be a ${issue.expected}.`;
    case 'too_small':
      if (issue.origin === 'string') {
        return Number(issue.minimum) <= 1 ? `${subject} is required.` : `${subject} must be at least ${issue.minimum} characters.`;
      }
      if (issue.origin === 'array')
        return `${subject} must have at least ${issue.minimum} ${Number(issue.minimum) === 1 ? 'item' : 'items'}.`;
      return `${subject} must be at least ${issue.minimum}.`;
    case 'too_big':
      if (issue.origin === 'string') return `${subject} must not be greater than ${issue.maximum} characters.`;
      if (issue.origin === 'array') return `${subject} must not have more than ${issue.maximum} items.`;
      return `${subject} must not be greater than ${issue.maximum}.`;
    case 'invalid_value':
      return body ? `${subject} is invalid.` : `The selected ${name} is invalid.`;
    case 'invalid_format':
      if (issue.format === 'date') return `${subject} must be a valid date (YYYY-MM-DD).`;
      if (issue.format === 'datetime') return `${subject} must be a valid date-time.`;
      return `${subject} format is invalid.`;
    case 'not_multiple_of':
      return `${subject} must be a multiple of ${issue.divisor}.`;
    case 'unrecognized_keys':
      return `${subject} is prohibited.`;
    case 'custom':
      // A query integer not written in plain decimal (http/routes.ts q.int).
      if (issue.params?.expected === 'integer') return `${subject} must be an integer.`;
      return issue.message.startsWith('The ') ? issue.message : `${subject} is invalid.`;
    default:
      return issue.message.startsWith('The ') ? issue.message : `${subject} is invalid.`;
  }
}

/** Zod issues as Laravel-style field errors keyed by dotted path (`data.3.quantity`). */
export function fieldErrorsFromZod(error: z.ZodError, prefix: PropertyKey[] = []): FieldErrors {
  // Paths carry client keys (`__proto__`, `constructor`): a prototype-free map takes any of them.
  const fields: FieldErrors = fieldErrors();
  const add = (path: PropertyKey[], message: string) => addFieldError(fields, path.map(String).join('.') || 'body', message);
  for (const issue of error.issues) {
    if (issue.code === 'unrecognized_keys') {
      for (const key of issue.keys) {
        const path = [...prefix, ...issue.path, key];
        add(path, messageFor(issue, path));
      }
      continue;
    }
    const path = [...prefix, ...issue.path];
    add(path, messageFor(issue, path));
  }
  return fields;
}
