/**
 * @supply/contracts: everything two services must agree on, declared once. The generated
 * gRPC types and clients (namespaces named after their proto packages), typed bus queues and
 * topics with their messages, shared enumerations and limits, the token string format, and
 * credit periods with their meter keys.
 */
export * from './gen/index';
export * from './queues';
export * from './events';
export * from './jobs';
export * from './usage';
export * from './credits';
export * from './token-string';
export * from './planning';
export * from './compute';
export * from './identity';
export { TransactionalService, encodeQuerySalesResponse, decodeQuerySalesResponse } from './sales-codec';
