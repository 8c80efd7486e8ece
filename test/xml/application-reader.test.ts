import { describe, expect, it } from 'vitest';
import { checkApplication, runsNoApplications } from '../../src/domain/application-policy.js';
import { InvalidTerms, UnsupportedTerm } from '../../src/domain/errors.js';
import { offerXml, read } from './fixtures.js';

const posix = 'http://schemas.ggf.org/jsdl/2005/11/jsdl-posix';
/** The deadline-job offer with `inner` as its jsdl:Application (`posixChildren` inside a POSIXApplication unless `inner` is given whole). */
const withApplication = (posixChildren: string, inner?: string) =>
  offerXml('deadline-job').replace(
    '<jsdl:Resources>',
    `<jsdl:Application xmlns:jsdl-posix="${posix}">${inner ?? `<jsdl:ApplicationName>cm5</jsdl:ApplicationName><jsdl-posix:POSIXApplication>${posixChildren}</jsdl-posix:POSIXApplication>`}</jsdl:Application><jsdl:Resources>`,
  );
const requestOf = (xml: string) => read(xml).request;
const refusal = (xml: string) => {
  try {
    requestOf(xml);
  } catch (error) {
    return error as Error;
  }
  return undefined;
};

describe('jsdl:Application', () => {
  it('reads a POSIXApplication: executable, arguments in order, environment, working directory and standard files', () => {
    const request = requestOf(
      withApplication(
        [
          '<jsdl-posix:Executable> /opt/apps/cm5/run </jsdl-posix:Executable>',
          '<jsdl-posix:Argument>--years=10</jsdl-posix:Argument><jsdl-posix:Argument>two words</jsdl-posix:Argument>',
          '<jsdl-posix:Input>in.txt</jsdl-posix:Input><jsdl-posix:Output>out.log</jsdl-posix:Output><jsdl-posix:Error>err.log</jsdl-posix:Error>',
          '<jsdl-posix:WorkingDirectory>/scratch/cm5</jsdl-posix:WorkingDirectory>',
          '<jsdl-posix:Environment name="OMP_NUM_THREADS">8</jsdl-posix:Environment><jsdl-posix:Environment name="NOTE"> kept as written </jsdl-posix:Environment>',
        ].join(''),
      ),
    );
    expect(request.application).toEqual({
      executable: '/opt/apps/cm5/run',
      arguments: ['--years=10', 'two words'],
      environment: [
        { name: 'OMP_NUM_THREADS', value: '8' },
        { name: 'NOTE', value: ' kept as written ' },
      ],
      workingDirectory: '/scratch/cm5',
      input: 'in.txt',
      output: 'out.log',
      error: 'err.log',
    });
  });

  it("an offer without jsdl:Application has none (the site's default job runs)", () => {
    expect(requestOf(offerXml('deadline-job')).application).toBeUndefined();
  });

  it.each([
    [
      'jsdl-posix:WallTimeLimit',
      '<jsdl-posix:Executable>/bin/x</jsdl-posix:Executable><jsdl-posix:WallTimeLimit>60</jsdl-posix:WallTimeLimit>',
      'the walltime comes from the plan',
    ],
    [
      'jsdl-posix:UserName',
      '<jsdl-posix:Executable>/bin/x</jsdl-posix:Executable><jsdl-posix:UserName>alice</jsdl-posix:UserName>',
      "jobs run as the service's Slurm user",
    ],
    [
      'jsdl-posix:MemoryLimit',
      '<jsdl-posix:Executable>/bin/x</jsdl-posix:Executable><jsdl-posix:MemoryLimit>1</jsdl-posix:MemoryLimit>',
      'it acts on jsdl-posix:Executable',
    ],
  ])('%s is refused with UnsupportedTerm naming it, never ignored', (element, children, why) => {
    const error = refusal(withApplication(children));
    expect(error).toBeInstanceOf(UnsupportedTerm);
    expect(error?.message).toContain(`${element} in jsdl-posix:POSIXApplication is not supported by this server`);
    expect(error?.message).toContain(why);
  });

  it('refuses a named file system, an application that is not POSIX, a missing executable and environment names a shell cannot set', () => {
    expect(
      refusal(withApplication('<jsdl-posix:Executable filesystemName="HOME">bin/x</jsdl-posix:Executable>'))?.message,
    ).toContain('names a file system (filesystemName)');
    expect(
      refusal(withApplication('', '<jsdl:Description>d</jsdl:Description><x:Other xmlns:x="urn:other"/>')),
    ).toBeInstanceOf(UnsupportedTerm);
    const noExecutable = refusal(withApplication('<jsdl-posix:Argument>a</jsdl-posix:Argument>'));
    expect(noExecutable).toBeInstanceOf(InvalidTerms);
    expect(noExecutable?.message).toBe(
      'jsdl-posix:POSIXApplication needs a jsdl-posix:Executable: the program the job runs',
    );
    expect(
      refusal(
        withApplication(
          '<jsdl-posix:Executable>/bin/x</jsdl-posix:Executable><jsdl-posix:Environment name="a.b">1</jsdl-posix:Environment>',
        ),
      )?.message,
    ).toContain('"a.b" is not a name an environment variable can have');
    expect(
      refusal(
        withApplication(
          '<jsdl-posix:Executable>/bin/x</jsdl-posix:Executable><jsdl-posix:Environment name="WSAG_RESUME_FROM">/</jsdl-posix:Environment>',
        ),
      )?.message,
    ).toContain("names beginning WSAG_ are the server's own");
  });
});

describe('which applications a site runs', () => {
  const request = (executable: string) =>
    requestOf(withApplication(`<jsdl-posix:Executable>${executable}</jsdl-posix:Executable>`));
  const slurm = { runsApplications: true, executablePrefixes: ['/opt/apps/', '/usr/bin/hostname'] };

  it('a server whose executor runs no applications refuses one, naming it', () => {
    expect(() => checkApplication(request('/opt/apps/x'), runsNoApplications)).toThrow(
      new UnsupportedTerm(
        "jsdl-posix:POSIXApplication: this server runs no applications (its executor runs the site's default job); it runs /opt/apps/x only in front of Slurm (WSAG_EXECUTOR=slurm): leave jsdl:Application out",
      ),
    );
  });

  it('under Slurm, runs executables under the listed prefixes and refuses the others, relative paths and dot segments', () => {
    expect(() => checkApplication(request('/opt/apps/cm5/run'), slurm)).not.toThrow();
    expect(() => checkApplication(request('/usr/bin/hostname'), slurm)).not.toThrow();
    for (const executable of ['/bin/rm', 'opt/apps/x', '/opt/apps/../../bin/sh', '/opt/apps/./x']) {
      expect(() => checkApplication(request(executable), slurm)).toThrow(
        `jsdl-posix:Executable ${executable} is not an executable this site runs: it runs executables under /opt/apps/, /usr/bin/hostname`,
      );
    }
    expect(() => checkApplication(request('/opt/apps/x'), { runsApplications: true, executablePrefixes: [] })).toThrow(
      'WSAG_SLURM_EXECUTABLES is empty',
    );
  });

  it('an offer without an application passes whatever the policy', () => {
    expect(() => checkApplication(requestOf(offerXml('deadline-job')), runsNoApplications)).not.toThrow();
  });
});
