import assert from 'node:assert/strict';
import { cursorCodec } from './cursor';

describe('signed cursors', () => {
  const codec = cursorCodec('s'.repeat(40));
  const binding = 'sales-data|demo|sort=id';

  it('round-trips a position and direction', () => {
    const cursor = codec.encode(binding, 'next', '["2024-01-01",42]');
    assert.deepEqual(codec.decode(binding, cursor), { direction: 'next', position: '["2024-01-01",42]' });
  });

  it('refuses every one-character change of the signature, padding bits included', () => {
    const cursor = codec.encode(binding, 'prev', '[7]');
    const dot = cursor.indexOf('.');
    const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
    for (let i = dot + 1; i < cursor.length; i++) {
      for (const c of alphabet) {
        if (c === cursor[i]) continue;
        const tampered = cursor.slice(0, i) + c + cursor.slice(i + 1);
        assert.throws(() => codec.decode(binding, tampered), `position ${i} -> ${c}`);
      }
    }
  });

  it('refuses a cursor bound to another query or signed with another secret', () => {
    const cursor = codec.encode(binding, 'next', '[1]');
    assert.throws(() => codec.decode('sales-data|acme|sort=id', cursor));
    assert.throws(() => cursorCodec('t'.repeat(40)).decode(binding, cursor));
  });
});
