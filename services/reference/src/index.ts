export { referenceModule } from './module';
