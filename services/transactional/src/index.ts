export { transactionalModule } from './module';
