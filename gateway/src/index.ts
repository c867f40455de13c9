export { gatewayModule } from './module';
export { createApp } from './app';
