import { strict as assert } from 'node:assert';
import { crc32 } from 'node:zlib';
import { formatToken, hashSecret, newSecret, parseToken } from './token-string';

describe('token string', () => {
  const secret = newSecret();
  const token = formatToken(42, secret);

  it('is `<id>|spl_` + 40 alphanumerics + the crc32b of those 40 in hex', () => {
    assert.match(token, /^42\|spl_[A-Za-z0-9]{40}[0-9a-f]{8}$/);
    const random = secret.slice(4, 44);
    assert.equal(secret.slice(44), (crc32(random) >>> 0).toString(16).padStart(8, '0'));
    assert.deepEqual(parseToken(token), { id: 42, secret });
  });

  it('draws new randomness every time', () => {
    assert.notEqual(newSecret(), newSecret());
  });

  it('rejects every malformed variant before anything looks it up', () => {
    const random = secret.slice(4, 44);
    const crc = secret.slice(44);
    const flipped = crc.replace(/^./, (c) => (c === '0' ? '1' : '0'));
    const variants = {
      'no separator': `42${secret}`,
      'empty id': `|${secret}`,
      'zero id': `0|${secret}`,
      'leading zero': `042|${secret}`,
      'non-numeric id': `4a|${secret}`,
      'negative id': `-42|${secret}`,
      'id too long': `12345678901234567|${secret}`,
      'wrong prefix': `42|sk_${random}${crc}`,
      'no prefix': `42|${random}${crc}`,
      'bad checksum': `42|spl_${random}${flipped}`,
      'upper-case checksum': `42|spl_${random}${crc.toUpperCase()}`,
      'short random part': `42|spl_${random.slice(1)}${crc}`,
      'leading space': ` ${token}`,
      'trailing space': `${token} `,
      'space inside': `42 |${secret}`,
      'two separators': `42||${secret}`,
      'trailing newline': `${token}\n`,
      empty: '',
    };
    for (const [name, value] of Object.entries(variants)) {
      if (crc === crc.toUpperCase() && name === 'upper-case checksum') continue; // all digits: nothing to upper-case
      assert.equal(parseToken(value), null, name);
    }
  });

  it('hashes everything after the `|` with sha256', () => {
    assert.match(hashSecret(secret), /^[0-9a-f]{64}$/);
    assert.notEqual(hashSecret(secret), hashSecret(newSecret()));
  });
});
