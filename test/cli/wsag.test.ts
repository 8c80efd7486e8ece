import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseSetting } from '../../src/cli/commands/create.js';
import { readOffer } from '../../src/xml/offer-reader.js';
import { withXml } from '../../src/xml/libxml.js';
import { SchemaSet } from '../../src/xml/schema-set.js';
import { startTestServer, type TestServer } from '../support/server.js';
import { deadUrl, uuid, wsag } from './support.js';

let server: TestServer;
let url: string;
beforeAll(async () => {
  server = await startTestServer();
  url = server.url;
});
afterAll(async () => {
  await server.close();
});

/** Creates a deadline-job agreement through the CLI and returns its id. */
async function createOne(...settings: string[]): Promise<string> {
  const result = await wsag(
    ['create', '--template', 'deadline-job', ...settings.flatMap((s) => ['--set', s]), '--json'],
    { url },
  );
  expect(result.err).toEqual([]);
  expect(result.code).toBe(0);
  return (JSON.parse(result.stdout) as { agreementId: string }).agreementId;
}

describe('wsag templates', () => {
  it('lists both shipped templates with their Items, values and locations', async () => {
    const result = await wsag(['templates', '--wide'], { url });
    expect(result.code).toBe(0);
    expect(result.err).toEqual([]);
    expect(result.out).toContain('deadline-job  (TemplateId deadline-job-v1)');
    expect(result.out).toContain('advance-reservation  (TemplateId advance-reservation-v1)');
    const nodeCount = result.out.find((l) => /^\s+NodeCount\s+4\s/.test(l));
    expect(nodeCount).toContain('a whole number from 1 to 64');
    expect(nodeCount).toContain(
      "/wsag:AgreementOffer/wsag:Terms/wsag:All/wsag:ServiceDescriptionTerm[@wsag:Name='Job']",
    );
    // The XQuery-style prologue of advance-reservation's NodeCount is shown as plain XPath.
    expect(result.stdout).not.toContain('declare namespace');
  });

  it('--json prints one document: name, id and Items (name + location)', async () => {
    const result = await wsag(['templates', '--json'], { url });
    expect(result.code).toBe(0);
    const templates = JSON.parse(result.stdout) as {
      name: string;
      id: string;
      items: { name: string; location: string; value?: string }[];
      xml?: string;
    }[];
    expect(templates.map((t) => t.name).sort()).toEqual([
      'advance-reservation',
      'background-job',
      'best-effort-job',
      'deadline-job',
      'interactive-job',
    ]);
    const deadline = templates.find((t) => t.name === 'deadline-job');
    expect(deadline?.id).toBe('deadline-job-v1');
    expect(deadline?.items.find((i) => i.name === 'GuaranteeLevel')).toMatchObject({
      location: '//sla:ServiceLevel/sla:GuaranteeLevel',
      value: 'Standard',
    });
    expect(deadline?.xml).toBeUndefined();
  });

  it('--xml prints the template documents', async () => {
    const result = await wsag(['templates', '--xml'], { url });
    expect(result.code).toBe(0);
    expect(result.stdout.match(/<wsag:Template[ >]/g)).toHaveLength(5);
    expect(result.stdout).toContain('wsag:TemplateId="deadline-job-v1"');
    expect(result.stdout).not.toContain('${now'); // time tokens are rendered by the server
  });
});

describe('wsag create', () => {
  it('creates an agreement from the template defaults and prints its id and EPR address', async () => {
    const result = await wsag(['create', '--template', 'deadline-job'], { url });
    expect(result.err).toEqual([]);
    expect(result.code).toBe(0);
    expect(result.out[0]).toMatch(new RegExp(`^created agreement ${uuid.source}$`));
    expect(result.stdout).toContain(`EPR       ${url}/wsag/Agreement`);
    const id = uuid.exec(result.out[0] ?? '')?.[0] as string;
    expect(await server.repository.get(id)).toMatchObject({ templateName: 'deadline-job', state: 'Observed' });
  });

  it('picks a template by TemplateId too, and --json gives id, address and template', async () => {
    const result = await wsag(['create', '--template', 'advance-reservation-v1', '--json'], { url });
    expect(result.code).toBe(0);
    const created = JSON.parse(result.stdout) as {
      agreementId: string;
      address: string;
      template: { name: string; id: string };
    };
    expect(created.agreementId).toMatch(uuid);
    expect(created.address).toBe(`${url}/wsag/Agreement`);
    expect(created.template).toEqual({ name: 'advance-reservation', id: 'advance-reservation-v1' });
  });

  it('applies --set by Item name', async () => {
    const id = await createOne('NodeCount=16', 'GuaranteeLevel=Enhanced');
    const stored = await server.repository.get(id);
    expect(stored?.request.nodeCount).toBe(16);
    expect(stored?.document).toContain('<sla:GuaranteeLevel>Enhanced</sla:GuaranteeLevel>');
  });

  it('a value outside the Item constraint is refused in plain words, by the CLI or (set by XPath) the server; exit 1', async () => {
    const named = await wsag(['create', '--template', 'deadline-job', '--set', 'NodeCount=512'], { url });
    expect([named.code, named.err]).toEqual([
      1,
      ["error: --set NodeCount must be a whole number from 1 to 64; got '512'"],
    ]);
    const result = await wsag(
      ['create', '--template', 'deadline-job', '--set', '//jsdl:TotalResourceCount/jsdl:Exact=512'],
      { url },
    );
    expect(result.code).toBe(1);
    expect(result.out).toEqual([]);
    expect(result.err).toEqual([
      'error: CreationConstraintViolation: Item NodeCount: 512 is more than 64, the most allowed',
    ]);
    expect(result.stderr).not.toMatch(/\n\s+at /); // no stack trace
  });

  it('an unknown template name says which templates exist; exit 1', async () => {
    const result = await wsag(['create', '--template', 'batch-job'], { url });
    expect(result.code).toBe(1);
    expect(result.err).toEqual([
      'error: no template named "batch-job"; the server offers: advance-reservation (id advance-reservation-v1), background-job (id background-job-v1), ' +
        'best-effort-job (id best-effort-job-v1), deadline-job (id deadline-job-v1), interactive-job (id interactive-job-v1)',
    ]);
  });

  it("an unknown Item name lists the template's Items", async () => {
    const result = await wsag(['create', '--template', 'deadline-job', '--set', 'Nodes=8'], { url });
    expect(result.code).toBe(1);
    expect(result.err[0]).toMatch(
      /^error: --set Nodes: template deadline-job has no Item "Nodes" to set; its Items are: ServiceProvider, NodeCount, /,
    );
  });

  it('--dry-run prints the offer, with XPath settings applied, and creates nothing', async () => {
    const before = (await server.repository.list()).length;
    const result = await wsag(
      [
        'create',
        '-t',
        'deadline-job',
        '--dry-run',
        '--set',
        "//wsag:ServiceDescriptionTerm[@wsag:Name='Job']//jsdl:TotalResourceCount/jsdl:Exact=12",
        '--set',
        '//sla:RuntimeEstimate=7200',
        '-s',
        '//sla:MigrationPolicy/@Scope=None',
      ],
      { url },
    );
    expect(result.err).toEqual([]);
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/^<wsag:AgreementOffer /);
    expect(result.stdout).toContain('<jsdl:TotalResourceCount><jsdl:Exact>12</jsdl:Exact></jsdl:TotalResourceCount>');
    expect(result.stdout).toContain('<sla:RuntimeEstimate>7200</sla:RuntimeEstimate>');
    expect(result.stdout).toContain('<sla:MigrationPolicy Scope="None">');
    expect(result.stdout).not.toContain('CreationConstraints');
    expect((await server.repository.list()).length).toBe(before);
  });

  it('--run puts the program into the offer as a JSDL POSIXApplication, in its place and escaped; the offer reads back as sent', async () => {
    const result = await wsag(
      [
        'create',
        '-t',
        'deadline-job',
        '--dry-run',
        '--run',
        '/opt/apps/cm5 run',
        '--arg=--years=10',
        '--arg',
        'a<b & "c"',
        '--env',
        'OMP_NUM_THREADS=2',
        '--env',
        'EMPTY=',
        '--workdir',
        '/scratch',
      ],
      { url },
    );
    expect(result.err).toEqual([]);
    const request = withXml(result.stdout, 'offer', (doc) => readOffer(doc.root).request);
    expect(request.application).toEqual({
      executable: '/opt/apps/cm5 run',
      arguments: ['--years=10', 'a<b & "c"'],
      workingDirectory: '/scratch',
      environment: [
        { name: 'OMP_NUM_THREADS', value: '2' },
        { name: 'EMPTY', value: '' },
      ],
    });
    expect(result.stdout).toMatch(
      /<\/jsdl:JobIdentification><jsdl:Application><p:POSIXApplication xmlns:p="http:\/\/schemas.ggf.org\/jsdl\/2005\/11\/jsdl-posix">/,
    );
    expect(() => withXml(result.stdout, 'offer', (doc) => SchemaSet.get().validate(doc, 'offer'))).not.toThrow();
    const orphan = await wsag(['create', '-t', 'deadline-job', '--dry-run', '--arg', 'x'], { url });
    expect(orphan.code).toBe(2);
    expect(orphan.err[0]).toBe('error: --arg needs --run EXECUTABLE: it describes the program the job runs');
    // The server in front of no Slurm refuses to run it, naming why.
    const refused = await wsag(['create', '-t', 'deadline-job', '--run', '/opt/apps/x'], { url });
    expect(refused.code).toBe(1);
    expect(refused.err[0]).toContain('UnsupportedTerm: jsdl-posix:POSIXApplication: this server runs no applications');
  });

  it('--dry-run --json gives the template and the offer', async () => {
    const result = await wsag(['create', '--template', 'deadline-job', '--dry-run', '--json'], { url });
    expect(result.code).toBe(0);
    const doc = JSON.parse(result.stdout) as { template: { name: string }; offer: string };
    expect(doc.template.name).toBe('deadline-job');
    expect(doc.offer).toMatch(/^<wsag:AgreementOffer /);
  });

  it('a location that selects nothing is reported; exit 1', async () => {
    const result = await wsag(['create', '--template', 'deadline-job', '--dry-run', '--set', '//sla:Nothing=1'], {
      url,
    });
    expect(result.code).toBe(1);
    expect(result.err[0]).toMatch(/^error: --set \/\/sla:Nothing: the location selects nothing/);
  });

  it('usage errors exit 2 with the synopsis', async () => {
    const missing = await wsag(['create'], { url });
    expect(missing.code).toBe(2);
    expect(missing.err[0]).toBe('error: --template NAME is required (list them with: wsag templates)');
    expect(missing.err[1]).toMatch(/^usage: wsag create --template NAME/);
    const malformed = await wsag(['create', '--template', 'deadline-job', '--set', 'NodeCount'], { url });
    expect(malformed.code).toBe(2);
    expect(malformed.err[0]).toContain('--set expects LOCATION=VALUE');
    const unknownOption = await wsag(['create', '--templat', 'deadline-job'], { url });
    expect(unknownOption.code).toBe(2);
    expect(unknownOption.err[0]).toBe('error: unknown option --templat; did you mean --template?');
  });
});

describe('parseSetting', () => {
  it('splits at the first = outside predicates and quotes', () => {
    expect(parseSetting('NodeCount=16')).toEqual({ location: 'NodeCount', value: '16' });
    expect(parseSetting("//t[@n='a=b']/x=1=2")).toEqual({ location: "//t[@n='a=b']/x", value: '1=2' });
    expect(parseSetting('Account=')).toEqual({ location: 'Account', value: '' });
    expect(() => parseSetting('=3')).toThrow(/LOCATION=VALUE/);
  });
});

describe('wsag agreements, state, terminate', () => {
  it('agreements prints a table with id, state, template, nodes, start and end', async () => {
    const id = await createOne('NodeCount=3');
    const result = await wsag(['agreements'], { url });
    expect(result.code).toBe(0);
    expect(result.out[0]).toMatch(/^ID\s+STATE\s+TEMPLATE\s+NODES\s+START\s+END$/);
    const row = result.out.find((l) => l.startsWith(id));
    expect(row).toMatch(
      new RegExp(
        `^${id}\\s+Observed\\s+deadline-job\\s+3\\s+\\d{4}-\\d\\d-\\d\\dT\\d\\d:\\d\\d:\\d\\dZ\\s+\\d{4}-\\d\\d-\\d\\dT\\d\\d:\\d\\d:\\d\\dZ$`,
      ),
    );
  });

  it('agreements --json is an array of summaries', async () => {
    const id = await createOne();
    const result = await wsag(['agreements', '--json'], { url });
    const list = JSON.parse(result.stdout) as { id: string; state: string; template: string; nodes: number }[];
    expect(list.find((a) => a.id === id)).toMatchObject({ state: 'Observed', template: 'deadline-job', nodes: 4 });
  });

  it('state shows the agreement, service term and guarantee term states', async () => {
    const id = await createOne();
    const result = await wsag(['state', id], { url });
    expect(result.code).toBe(0);
    expect(result.out).toEqual([
      `agreement ${id}: Observed`,
      '  TERM       NAME                  STATE',
      '  service    Job                   NotReady',
      '  guarantee  CompletionByDeadline  NotDetermined',
    ]);
    const json = await wsag(['state', id, '--json'], { url });
    expect(JSON.parse(json.stdout)).toEqual({
      agreementId: id,
      state: 'Observed',
      serviceTerms: [{ termName: 'Job', state: 'NotReady' }],
      guaranteeTerms: [{ termName: 'CompletionByDeadline', state: 'NotDetermined' }],
    });
  });

  it('state of an unknown id is an UnknownResource fault; a missing id is a usage error', async () => {
    const unknown = await wsag(['state', 'no-such-agreement'], { url });
    expect(unknown.code).toBe(1);
    expect(unknown.err).toEqual(['error: UnknownResource: no agreement with id "no-such-agreement"']);
    const missing = await wsag(['state'], { url });
    expect(missing.code).toBe(2);
    expect(missing.err[0]).toBe('error: missing ID');
    const extra = await wsag(['state', 'a', 'b'], { url });
    expect(extra.code).toBe(2);
    expect(extra.err[0]).toBe('error: unexpected argument "b"');
  });

  it('terminate prints the new state; terminating twice is InvalidStateTransition', async () => {
    const id = await createOne();
    const first = await wsag(['terminate', id], { url });
    expect(first.code).toBe(0);
    expect(first.out).toEqual([`agreement ${id}: Terminated`]);
    const second = await wsag(['terminate', id], { url });
    expect(second.code).toBe(1);
    expect(second.out).toEqual([]);
    expect(second.err).toEqual([
      `error: InvalidStateTransition: agreement in state Terminated cannot be terminated (Terminated is final)`,
    ]);
  });

  it('terminate --json gives the state document', async () => {
    const id = await createOne();
    const result = await wsag(['terminate', id, '--json', '--reason', 'no longer needed'], { url });
    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout)).toMatchObject({
      agreementId: id,
      state: 'Terminated',
      serviceTerms: [{ termName: 'Job', state: 'Completed' }],
    });
  });

  it('--url overrides WSAG_URL', async () => {
    const result = await wsag(['agreements', '--json', '--url', url], { env: { WSAG_URL: 'http://127.0.0.1:1' } });
    expect(result.code).toBe(0);
  });
});

describe('errors', () => {
  it('an unreachable server says so, without a stack trace; exit 1', async () => {
    const dead = await deadUrl();
    for (const argv of [['templates'], ['agreements'], ['state', 'x'], ['create', '--template', 'deadline-job']]) {
      const result = await wsag([...argv, '--url', dead]);
      expect(result.code).toBe(1);
      expect(result.out).toEqual([]);
      expect(result.err).toEqual([
        `error: cannot reach ${dead}: is the server running? (start it with: npm start; or give its address with --url or WSAG_URL)`,
      ]);
    }
  });

  it('WSAG_DEBUG=1 adds the cause and the stack', async () => {
    const dead = await deadUrl();
    const result = await wsag(['templates', '--url', dead], { env: { WSAG_DEBUG: '1' } });
    expect(result.code).toBe(1);
    expect(result.err[0]).toBe(
      `error: cannot reach ${dead}: is the server running? (start it with: npm start; or give its address with --url or WSAG_URL)`,
    );
    expect(result.stderr).toContain('ECONNREFUSED');
    expect(result.stderr).toMatch(/\n\s+at /);
  });

  it('an invalid --url or WSAG_URL is a usage error', async () => {
    expect((await wsag(['templates', '--url', 'localhost:8080'])).err[0]).toBe(
      'error: --url must be an http(s) URL such as http://127.0.0.1:8080, got "localhost:8080"',
    );
    const fromEnv = await wsag(['agreements'], { env: { WSAG_URL: 'ftp://x' } });
    expect(fromEnv.code).toBe(2);
    expect(fromEnv.err[0]).toContain('WSAG_URL must be an http(s) URL');
  });

  it('help, --help and unknown commands', async () => {
    const help = await wsag(['help']);
    expect(help.code).toBe(0);
    expect(help.out[0]).toMatch(/^wsag: /);
    for (const name of ['serve', 'templates', 'create', 'agreements', 'state', 'terminate']) {
      expect(help.stdout).toMatch(new RegExp(`^  ${name} `, 'm'));
    }
    expect((await wsag(['--help'])).code).toBe(0);
    const createHelp = await wsag(['create', '--help']);
    expect(createHelp.code).toBe(0);
    expect(createHelp.out[0]).toMatch(/^usage: wsag create /);
    expect((await wsag(['help', 'terminate'])).out[0]).toMatch(/^usage: wsag terminate ID/);
    const unknown = await wsag(['frobnicate']);
    expect(unknown.code).toBe(2);
    expect(unknown.err).toEqual(['error: unknown command "frobnicate"', '(the commands: wsag help)']);
    const none = await wsag([]);
    expect(none.code).toBe(2);
    expect(none.out).toEqual([]);
  });
});
