import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../support/server.js';
import { uuid, wsag } from './support.js';

let operator: TestServer; // the anonymous caller is an operator here
let plain: TestServer;
beforeAll(async () => {
  [operator, plain] = await Promise.all([startTestServer({ config: { admins: ['anonymous'] } }), startTestServer()]);
});
afterAll(async () => {
  await Promise.all([operator.close(), plain.close()]);
});

async function createPending(url: string): Promise<string> {
  const result = await wsag(['pending', 'create', '--template', 'deadline-job', '--set', 'NodeCount=8', '--json'], {
    url,
  });
  expect(result.err).toEqual([]);
  expect(result.code).toBe(0);
  const created = JSON.parse(result.stdout) as { agreementId: string; state: string; template: { name: string } };
  expect(created).toMatchObject({ state: 'Pending', template: { name: 'deadline-job' } });
  return created.agreementId;
}

describe('wsag pending', () => {
  it('create makes a Pending agreement; accept makes it Observed', async () => {
    const url = operator.url;
    const text = await wsag(['pending', 'create', '-t', 'deadline-job'], { url });
    expect(text.out[0]).toMatch(new RegExp(`^created pending agreement ${uuid.source} \\(template deadline-job\\)$`));
    const id = await createPending(url);
    expect((await wsag(['state', id], { url })).out[0]).toBe(`agreement ${id}: Pending`);
    const accepted = await wsag(['pending', 'accept', id], { url });
    expect(accepted.err).toEqual([]);
    expect(accepted.out).toEqual([`agreement ${id}: Observed`]);
    expect((await operator.repository.get(id))?.state).toBe('Observed');
  });

  it('reject makes it Rejected; --json prints the agreement summary', async () => {
    const id = await createPending(operator.url);
    const rejected = await wsag(['pending', 'reject', id, '--json'], { url: operator.url });
    expect(rejected.code).toBe(0);
    expect(JSON.parse(rejected.stdout)).toMatchObject({ id, state: 'Rejected', template: 'deadline-job' });
  });

  it("deciding again, or without the operator role, fails with the server's reason (exit 1)", async () => {
    const id = await createPending(operator.url);
    await wsag(['pending', 'accept', id], { url: operator.url });
    const again = await wsag(['pending', 'reject', id], { url: operator.url });
    expect(again.code).toBe(1);
    expect(again.err[0]).toMatch(/^error: InvalidStateTransition: /);

    const other = await createPending(plain.url);
    const refused = await wsag(['pending', 'accept', other], { url: plain.url });
    expect(refused.code).toBe(1);
    expect(refused.err[0]).toMatch(/^error: NotAuthorized: /);
  });

  it('usage errors (exit 2)', async () => {
    const url = operator.url;
    expect((await wsag(['pending'], { url })).err[0]).toBe('error: missing ACTION');
    expect((await wsag(['pending', 'frob'], { url })).err[0]).toBe(
      'error: unknown action "frob": use create, accept or reject',
    );
    expect((await wsag(['pending', 'accept'], { url })).err[0]).toBe('error: missing ID: wsag pending accept ID');
    expect((await wsag(['pending', 'create'], { url })).err[0]).toMatch(/^error: --template NAME is required/);
    expect((await wsag(['pending', 'accept', 'a', 'b'], { url })).err[0]).toBe('error: unexpected argument "b"');
    expect((await wsag(['pending', 'accept', 'a', '-t', 'x'], { url })).code).toBe(2);
  });
});
