/**
 * How the middleware finds the procedure it runs in (SPEC S17, S20): from tRPC's request info,
 * only when the info names this very call, and a procedure counts as guarded only when it is
 * a mutation with the middleware. Each case here is one a bug planted by `npm run mutate` got
 * past setup.test.ts.
 */
import { describe, expect, it } from 'vitest';
import { calledProcedureDef, isGuardedProcedure, markGuarded } from '../../src/trpc/setup.js';

const guard = () => {
  const middleware = () => undefined;
  markGuarded(middleware);
  return middleware;
};
const procedure = (type: string, middlewares?: unknown) => ({ _def: { type, middlewares } });
const info = (calls: { path?: string; procedure: unknown }[]) => ({ isBatchCall: true, calls });

describe("S17: the procedure of this call, from tRPC's request info", () => {
  it('reads the definition of the call at this batch index when its path is this one', () => {
    const own = procedure('mutation', [guard()]);
    const calls = info([
      { path: 'a', procedure: procedure('query') },
      { path: 'pay', procedure: own },
    ]);
    expect(calledProcedureDef(calls, 1, 'pay')).toBe(own._def);
  });

  it("answers nothing without info, without a call at the index, for another call's path, or for a call without a procedure", () => {
    const calls = info([{ path: 'list', procedure: procedure('query') }]);
    expect(calledProcedureDef(undefined, 0, 'pay')).toBeUndefined();
    expect(calledProcedureDef(calls, 3, 'pay')).toBeUndefined();
    // A server-side caller inside a query passes its request's context on.
    expect(calledProcedureDef(calls, 0, 'pay')).toBeUndefined();
    expect(calledProcedureDef(info([{ path: 'pay', procedure: null }]), 0, 'pay')).toBeUndefined();
  });
});

describe('S20: which calls of a batch are guarded', () => {
  it('counts a mutation with the middleware, and nothing else', () => {
    expect(isGuardedProcedure(procedure('mutation', [() => undefined, guard()]))).toBe(true);
    expect(isGuardedProcedure(procedure('query', [guard()]))).toBe(false);
    expect(isGuardedProcedure(procedure('mutation', [() => undefined]))).toBe(false);
    expect(isGuardedProcedure(procedure('mutation'))).toBe(false);
    expect(isGuardedProcedure(null)).toBe(false);
    expect(isGuardedProcedure({})).toBe(false);
  });
});
