/**
 * Id sequences handed out from blocks reserved in the backend, so most allocations
 * touch no disk or network. A reserved block is persisted before any of its ids is
 * used, so ids stay distinct across restarts and processes; ids left unused in a block
 * (or taken by a write that then failed) become gaps, never duplicates.
 */
import { randomBytes, randomInt } from 'node:crypto';
import { AppError } from '../errors';

export const ID_BLOCK_SIZE = 1000;

/** Persists the reservation of `size` ids of `sequence` and returns the first of them. */
export type ReserveIds = (sequence: string, size: number) => Promise<number>;

interface Block {
  next: number;
  end: number;
}

export class IdBlocks {
  private readonly blocks = new Map<string, Block>();
  private readonly refills = new Map<string, Promise<void>>();

  constructor(
    private readonly reserve: ReserveIds,
    private readonly blockSize = ID_BLOCK_SIZE,
  ) {}

  /** Takes `count` consecutive ids if the current block has them, without waiting. */
  takeSync(sequence: string, count = 1): number | undefined {
    const block = this.blocks.get(sequence);
    if (!block || block.end - block.next < count) return undefined;
    const first = block.next;
    block.next += count;
    return first;
  }

  /** Callers are served in call order: while a refill runs, later callers queue behind it. */
  async allocate(sequence: string, count = 1): Promise<number> {
    assertCount(count);
    const running = this.refills.get(sequence);
    if (running) await running;
    for (;;) {
      const first = this.takeSync(sequence, count);
      if (first !== undefined) return first;
      await this.refill(sequence, count);
    }
  }

  /** Makes `count` ids available to `takeSync` without taking them. */
  async ensure(sequence: string, count: number): Promise<void> {
    assertCount(count);
    while (this.available(sequence) < count) await this.refill(sequence, count);
  }

  private available(sequence: string): number {
    const block = this.blocks.get(sequence);
    return block ? block.end - block.next : 0;
  }

  /** One reservation per sequence at a time; callers that arrive meanwhile wait for it and re-check. */
  private refill(sequence: string, count: number): Promise<void> {
    const running = this.refills.get(sequence);
    if (running) return running;
    const size = Math.max(this.blockSize, count);
    const refill = this.reserve(sequence, size)
      .then((first) => {
        this.blocks.set(sequence, { next: first, end: first + size });
      })
      .finally(() => this.refills.delete(sequence));
    this.refills.set(sequence, refill);
    return refill;
  }
}

function assertCount(count: number): void {
  if (!Number.isSafeInteger(count) || count < 1) {
    throw new AppError('invalid_argument', `Id count must be a positive integer, got ${count}.`);
  }
}

const processUnique = randomBytes(5);
let idCounter = randomInt(0x1000000);

/**
 * A 24-hex-digit id shaped like a MongoDB ObjectId (seconds, per-process random, counter),
 * for documents of collections without autoIncrement that arrive without `_id`; a string
 * so it stays a `DocId` in every adapter and sorts roughly by creation time.
 */
export function generateStringId(): string {
  const bytes = Buffer.allocUnsafe(12);
  bytes.writeUInt32BE(Math.floor(Date.now() / 1000), 0);
  processUnique.copy(bytes, 4);
  idCounter = (idCounter + 1) % 0x1000000;
  bytes.writeUIntBE(idCounter, 9, 3);
  return bytes.toString('hex');
}
