import type { z } from 'zod';
import type { FieldErrors } from '@supply/kit';

/** Laravel says "per page" for `per_page` and keeps the dotted path for nested fields. */
function attribute(path: PropertyKey[]): string {
  const joined = path.map(String).join('.');
  return path.length === 1 ? joined.replace(/_/g, ' ') : joined;
}

function messageFor(issue: z.core.$ZodIssue, name: string): string {
  switch (issue.code) {
    case 'invalid_type':
      if (issue.input === undefined) return `The ${name} field is required.`;
      if (issue.expected === 'number' || issue.expected === 'int') return `The ${name} field must be a number.`;
      if (issue.expected === 'boolean') return `The ${name} field must be true or false.`;
      if (issue.expected === 'array') return `The ${name} field must be an array.`;
      if (issue.expected === 'object') return `The ${name} field must be an object.`;
      return `The ${name} field must be a ${issue.expected}.`;
    case 'too_small':
      if (issue.origin === 'string') {
        return Number(issue.minimum) <= 1 ? `The ${name} field is required.` : `The ${name} field must be at least ${issue.minimum} characters.`;
      }
      if (issue.origin === 'array') return `The ${name} field must have at least ${issue.minimum} ${Number(issue.minimum) === 1 ? 'item' : 'items'}.`;
      return `The ${name} field must be at least ${issue.minimum}.`;
    case 'too_big':
      if (issue.origin === 'string') return `The ${name} field must not be greater than ${issue.maximum} characters.`;
      if (issue.origin === 'array') return `The ${name} field must not have more than ${issue.maximum} items.`;
      return `The ${name} field must not be greater than ${issue.maximum}.`;
    case 'invalid_value':
      return `The selected ${name} is invalid.`;
    case 'invalid_format':
      if (issue.format === 'date') return `The ${name} field must be a valid date (YYYY-MM-DD).`;
      if (issue.format === 'datetime') return `The ${name} field must be a valid date-time.`;
      return `The ${name} field format is invalid.`;
    case 'not_multiple_of':
      return `The ${name} field must be a multiple of ${issue.divisor}.`;
    case 'unrecognized_keys':
      return `The ${name} field is prohibited.`;
    default:
      return issue.message.startsWith('The ') ? issue.message : `The ${name} field is invalid.`;
  }
}

/** Zod issues as Laravel-style field errors keyed by dotted path (`data.3.quantity`). */
export function fieldErrorsFromZod(error: z.ZodError, prefix: PropertyKey[] = []): FieldErrors {
  const fields: FieldErrors = {};
  const add = (path: PropertyKey[], message: string) => {
    const key = path.map(String).join('.') || 'body';
    (fields[key] ??= []).push(message);
  };
  for (const issue of error.issues) {
    if (issue.code === 'unrecognized_keys') {
      for (const key of issue.keys) {
        const path = [...prefix, ...issue.path, key];
        add(path, messageFor(issue, attribute(path)));
      }
      continue;
    }
    const path = [...prefix, ...issue.path];
    add(path, messageFor(issue, attribute(path)));
  }
  return fields;
}
