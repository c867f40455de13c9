export { computeModule } from './module';
