import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { connect } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';

/** A redis-server of the test's own on a free port, so stopping it never touches the machine's shared Redis. */
export class ScratchRedis {
  #process: ChildProcess | undefined;
  constructor(readonly port: number) {}

  get url(): string {
    return `redis://127.0.0.1:${this.port}`;
  }

  async start(): Promise<void> {
    const args = ['--port', String(this.port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'];
    this.#process = spawn('redis-server', args, { stdio: 'ignore' });
    const deadline = Date.now() + 5_000;
    while (!(await this.#answersPing())) {
      if (Date.now() > deadline) throw new Error(`redis-server on ${this.port} did not start`);
      await sleep(20);
    }
  }

  /** Freezes or thaws the server: connections stay open but nothing answers. */
  signal(signal: 'SIGSTOP' | 'SIGCONT'): void {
    this.#process?.kill(signal);
  }

  async stop(): Promise<void> {
    const child = this.#process;
    this.#process = undefined;
    if (!child || child.exitCode !== null) return;
    const exited = once(child, 'exit');
    child.kill('SIGKILL');
    await exited;
  }

  #answersPing(): Promise<boolean> {
    return new Promise((resolve) => {
      const socket = connect(this.port, '127.0.0.1');
      socket.setTimeout(500);
      socket.once('connect', () => socket.write('PING\r\n'));
      socket.once('data', (data) => {
        socket.destroy();
        resolve(data.toString().startsWith('+PONG'));
      });
      socket.once('error', () => resolve(false));
      socket.once('timeout', () => {
        socket.destroy();
        resolve(false);
      });
    });
  }
}
