/**
 * Multipart form fields as one object, PHP/Laravel style: `scope[sale_type]=History`
 * nests, `field_mappings[]=a` appends, `field_mappings[2]=c` sets an index. Plain
 * fields keep their string value (the service parses JSON strings and booleans).
 */
const NAME = /^([^[\]]+)((?:\[[^[\]]*\])*)$/;
/** Nesting deeper than this is no form this API takes. */
const MAX_DEPTH = 3;

type Tree = Record<string, unknown>;

/** Own properties only, and defined rather than assigned: `__proto__` or `constructor` is just a field name. */
function own(node: Tree, key: string): unknown {
  return Object.hasOwn(node, key) ? node[key] : undefined;
}
function put(node: Tree, key: string, value: unknown): void {
  Object.defineProperty(node, key, { value, enumerable: true, writable: true, configurable: true });
}
/** Nested objects have no prototype, so no client key can reach one. */
const branch = (push: boolean): Tree | unknown[] => (push ? [] : (Object.create(null) as Tree));

export function setFormField(target: Tree, name: string, value: string): void {
  const match = NAME.exec(name);
  if (!match) {
    put(target, name, value);
    return;
  }
  const path = [match[1]!, ...[...match[2]!.matchAll(/\[([^[\]]*)\]/g)].map((m) => m[1]!)];
  if (path.length > MAX_DEPTH + 1) return;
  let node: Tree | unknown[] = target;
  for (let i = 0; i < path.length; i++) {
    const key = path[i]!;
    const last = i === path.length - 1;
    const nextIsPush = !last && path[i + 1] === '';
    if (Array.isArray(node)) {
      if (last) node.push(value);
      else {
        const child = branch(nextIsPush);
        node.push(child);
        node = child;
      }
      continue;
    }
    if (last) {
      put(node, key, value);
      return;
    }
    const existing = own(node, key);
    if (existing !== null && typeof existing === 'object') {
      node = existing as Tree | unknown[];
    } else {
      const child = branch(nextIsPush);
      put(node, key, child);
      node = child;
    }
  }
}
