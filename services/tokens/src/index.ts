export { tokensModule } from './module';
