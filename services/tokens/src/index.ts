export { tokensModule } from './module';

// Beyond the module: the operator CLI (`npm run admin`), runnable in process.
export { main as runAdmin, type CliIo } from './cli/commands';
