/**
 * Typed names of bus queues and topics. A name carries the type of its messages, so a
 * publisher and a consumer of the same queue cannot disagree on it without a compile error:
 * `bus.send(USAGE_QUEUE, batch)` only takes a `UsageBatch`. At run time it is the plain name.
 */
declare const message: unique symbol;

/** A durable work queue whose messages are `T` (each handled once by one consumer). */
export type Queue<T> = string & { readonly [message]?: T };
/** A broadcast topic whose events are `T` (every live subscriber sees each one). */
export type Topic<T> = Queue<T>;

export function queue<T>(name: string): Queue<T> {
  return name as Queue<T>;
}

export function topic<T>(name: string): Topic<T> {
  return name as Topic<T>;
}
