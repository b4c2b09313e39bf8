/**
 * What a 503's cause keeps of a driver's error, to the letter (SPEC S26): the classes and
 * code an operator needs, the messages scrubbed of the key and the stored answer in every
 * form a driver prints them, and the stack frames without the lines that carry parameters.
 * Each case here is one a bug planted by `npm run mutate` got past the rest of the suite.
 */
import { describe, expect, it } from 'vitest';
import { redactStoreError } from '../../src/core/redact.js';

class DatabaseError extends Error {}
class DrizzleQueryError extends Error {}

/** A driver's error whose stack starts with its message lines, as V8 prints it. */
function thrown(message: string, fields: Record<string, unknown> = {}): Error {
  const error = Object.assign(new DatabaseError(message), fields);
  error.stack = `DatabaseError: ${message}\n    at Client.query (pg/client.js:1:1)\n    at store (store.js:2:2)`;
  return error;
}

describe('S26: the classes and the code', () => {
  it('names each error of the chain by its class, or its name, or its type', () => {
    const named = Object.assign(new Error('named'), { name: 'PostgresError' });
    const chain = new DrizzleQueryError('outer', {
      cause: new DatabaseError('inner', { cause: named }),
    });
    expect(redactStoreError(chain, []).errorClasses).toEqual([
      'DrizzleQueryError',
      'DatabaseError',
      'PostgresError',
    ]);
    expect(redactStoreError(new Error('plain'), []).errorClasses).toEqual(['Error']);
    expect(redactStoreError('a string', []).errorClasses).toEqual(['string']);
    const failure = redactStoreError(new Error('x', { cause: new Error('y') }), []);
    expect(failure.name).toBe('StoreFailure');
    expect(failure.message).toBe('Error: x; caused by Error: y');
  });

  it('reads at most five links, stops at a cycle, at a missing cause and at a cause that is not an object', () => {
    let deep: Error = new Error('e0');
    for (let i = 1; i < 8; i++) deep = new Error(`e${i}`, { cause: deep });
    expect(redactStoreError(deep, []).errorClasses).toHaveLength(5);
    const a = new Error('a');
    const b = new Error('b', { cause: a });
    (a as { cause?: unknown }).cause = b;
    expect(redactStoreError(a, []).errorClasses).toHaveLength(2);
    expect(redactStoreError(new Error('x', { cause: null }), []).errorClasses).toEqual(['Error']);
    expect(redactStoreError(new Error('x', { cause: 'text' }), []).errorClasses).toEqual(['Error']);
  });

  it('keeps the first code along the chain that looks like a code, and no other', () => {
    const code = (value: unknown) =>
      redactStoreError(new Error('outer', { cause: thrown('inner', { code: value }) }), []).code;
    expect(code('23505')).toBe('23505');
    expect(code('SQLITE_BUSY')).toBe('SQLITE_BUSY');
    expect(code(23505)).toBeUndefined();
    expect(code('not a code')).toBeUndefined();
    expect(code('x'.repeat(65))).toBeUndefined();
    expect(code('\n23505')).toBeUndefined();
    expect(code('23505\n')).toBeUndefined();
    expect(redactStoreError(null, []).code).toBeUndefined();
  });
});

describe('S26: the messages', () => {
  it("drops a failed query's parameter list, however it is indented, and keeps a message without one whole", () => {
    const query = 'Failed query: insert into "records" values ($1, $2)';
    for (const params of ['\nparams: k,1', '\n  params: k,1', '\n\tPARAMS: k,1']) {
      expect(redactStoreError(new Error(`${query}${params}`), []).message).toBe(
        `Error: ${query} (parameters hidden)`,
      );
    }
    expect(redactStoreError(new Error('connection refused'), []).message).toBe(
      'Error: connection refused',
    );
  });

  it('cuts a message to 500 characters', () => {
    const long = 'x'.repeat(600);
    expect(redactStoreError(new Error(long), []).message).toBe(`Error: ${'x'.repeat(500)}...`);
    expect(redactStoreError(new Error('x'.repeat(500)), []).message).toBe(
      `Error: ${'x'.repeat(500)}`,
    );
  });

  it('replaces the key and the answer as they are, as JSON strings and as JSON inside JSON', () => {
    const key = 'k"1\\';
    const json = JSON.stringify(key).slice(1, -1);
    const twice = JSON.stringify(json).slice(1, -1);
    const message = `raw ${key} json ${json} twice ${twice}`;
    expect(redactStoreError(new Error(message), [key]).message).toBe(
      'Error: raw [redacted] json [redacted] twice [redacted]',
    );
  });

  it('replaces an answer that contains the key as a whole, so no part of the answer is left', () => {
    const key = 'order-7';
    const answer = '{"order":"order-7","card":"4242"}';
    const message = `duplicate ${JSON.stringify(answer)} for ${key}`;
    const failure = redactStoreError(new Error(message), [key, answer]);
    expect(failure.message).toBe('Error: duplicate "[redacted]" for [redacted]');
    expect(failure.message).not.toContain('4242');
  });

  it('ignores an empty secret', () => {
    expect(redactStoreError(new Error('nothing to hide'), ['', 'k']).message).toBe(
      'Error: nothing to hide',
    );
  });
});

describe("S26: the stack keeps the driver's frames, not its message", () => {
  it('has the frames of the error the store threw under its own first line', () => {
    const failure = redactStoreError(thrown('Failed query: x\nparams: secret-k at 5'), ['nothing']);
    expect(failure.stack).toBe(
      'StoreFailure: DatabaseError: Failed query: x (parameters hidden)\n    at Client.query (pg/client.js:1:1)\n    at store (store.js:2:2)',
    );
    expect(failure.stack).not.toContain('secret-k');
  });

  it('keeps its own stack when the error has no frames, or no stack', () => {
    const bare = thrown('x');
    bare.stack = 'DatabaseError: x';
    expect(redactStoreError(bare, []).stack).toMatch(/^StoreFailure: DatabaseError: x\n\s+at /);
    const none = thrown('y');
    none.stack = undefined;
    expect(redactStoreError(none, []).stack).toMatch(/^StoreFailure: DatabaseError: y\n\s+at /);
  });
});
