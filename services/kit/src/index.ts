export * from './errors';
export * from './random';
export * from './input';
export * from './failures';
export * from './context';
export * from './log';
export * from './config/config';
export * from './module';
export * from './clients';
export * from './runner';
export * from './grpc/server';
export * from './grpc/client';
export * from './grpc/status';
export * from './grpc/metadata';
export type * from './store/store';
export type * from './bus/bus';
export type * from './meter/meter';
export * from './metrics/metrics';
export { contextHeaders, contextOfHeaders } from './bus/observed';
export { subscribeWitnessed, witnessedPublisher, type Witnessed, type WitnessedPublisher, type WitnessOptions } from './bus/witnessed';
export * from './tracing/tracing';
export { openStore } from './store/index';
export { openBus, type OpenBusOptions } from './bus/index';
export { openAmqpBus, type AmqpBusOptions } from './bus/amqp';
export { openMeter } from './meter/index';
export { MemoryMeter } from './meter/memory';
export {
  DEFAULT_MAX_DELIVERIES,
  deliveryWithVerdict,
  REPLAY_HEADER,
  replayOf,
  resolveRetryPolicy,
  settleWithin,
  unfinishedDelivery,
} from './bus/common';
export * from './jobs/parts';
