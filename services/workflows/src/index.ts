export { workflowsModule } from './module';
