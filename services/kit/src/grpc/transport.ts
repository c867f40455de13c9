import { readFileSync } from 'node:fs';
import { credentials, ServerCredentials, type ChannelCredentials, type ChannelOptions } from '@grpc/grpc-js';

/** How internal gRPC travels: plaintext, or TLS with every side presenting a certificate of one CA (mutual TLS). */
export interface GrpcTransport {
  /** PEM files; all three or none. */
  tls?: { certFile: string; keyFile: string; caFile: string; serverName?: string };
  /** grpc-js load-balancing policy; round_robin spreads calls over every address a name resolves to. */
  lbPolicy: 'pick_first' | 'round_robin';
  /** Servers close connections older than this, so clients re-resolve and find pods added since. */
  maxConnectionAgeMs?: number;
}

export const PLAINTEXT: GrpcTransport = { lbPolicy: 'round_robin' };

/** Server options that follow from the transport. */
export function serverOptions(transport: GrpcTransport): ChannelOptions {
  if (!transport.maxConnectionAgeMs) return {};
  // The grace lets calls in flight on an aged connection finish.
  return { 'grpc.max_connection_age_ms': transport.maxConnectionAgeMs, 'grpc.max_connection_age_grace_ms': 30_000 };
}

const pem = (file: string) => readFileSync(file);

/** Server credentials: TLS that requires a client certificate signed by the CA, or insecure. */
export function serverCredentials(transport: GrpcTransport): ServerCredentials {
  const tls = transport.tls;
  if (!tls) return ServerCredentials.createInsecure();
  return ServerCredentials.createSsl(pem(tls.caFile), [{ cert_chain: pem(tls.certFile), private_key: pem(tls.keyFile) }], true);
}

/** Channel credentials and options for a client of `transport`. */
export function channelSetup(transport: GrpcTransport): { credentials: ChannelCredentials; options: ChannelOptions } {
  const tls = transport.tls;
  const options: ChannelOptions = {
    // A service config with only the policy: the DNS resolver asks for none of its own (grpc.service_config_disable_resolution).
    'grpc.service_config': JSON.stringify({ loadBalancingConfig: [{ [transport.lbPolicy]: {} }] }),
    'grpc.service_config_disable_resolution': 1,
    // A restarted peer is found within two seconds (the library's backoff grows to two minutes otherwise).
    'grpc.initial_reconnect_backoff_ms': 250,
    'grpc.max_reconnect_backoff_ms': 2_000,
  };
  if (!tls) return { credentials: credentials.createInsecure(), options };
  // One certificate for every service: its name is checked instead of each peer's DNS name.
  if (tls.serverName) options['grpc.ssl_target_name_override'] = tls.serverName;
  return { credentials: credentials.createSsl(pem(tls.caFile), pem(tls.keyFile), pem(tls.certFile)), options };
}
