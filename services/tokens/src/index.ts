export { tokensModule } from './module';
export { formatToken, newSecret, parseToken, hashSecret, TOKEN_PREFIX } from './tokens/token-string';
