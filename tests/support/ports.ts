import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';

/** Free now on every address, as the processes under test will listen (the gateway on all of them). */
function isFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const srv = createServer();
    srv.once('error', () => resolve(false));
    srv.listen(port, () => srv.close(() => resolve(true)));
  });
}

/**
 * The lowest port the kernel hands out to outgoing connections (Linux: ip_local_port_range).
 * A port from that range can be free when checked and taken by a client's connection before
 * the process under test binds it, so test ports are picked below it.
 */
function ephemeralLow(): number {
  try {
    const low = Number(readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0]);
    if (Number.isInteger(low) && low > 12_000) return low;
  } catch {
    // Not Linux: the IANA dynamic range starts at 49152; stay below the Linux default too.
  }
  return 32_768;
}

/** A base port with `count` consecutive free ports after it (the services' gRPC ports), below the ephemeral range. */
export async function freePortRange(count: number): Promise<number> {
  const low = 10_000;
  const span = ephemeralLow() - count - low;
  for (let attempt = 0; attempt < 200; attempt++) {
    const base = low + Math.floor(Math.random() * span);
    let ok = true;
    for (let i = 0; i < count && ok; i++) ok = await isFree(base + i);
    if (ok) return base;
  }
  throw new Error('no free port range found');
}
