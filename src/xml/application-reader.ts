import type { XmlElement } from 'libxml2-wasm';
import type { Application } from '../domain/terms.js';
import { InvalidTerms, UnsupportedTerm } from '../domain/errors.js';
import { prefixes } from './namespaces.js';
import { all, one, qname, text } from './xpath.js';

/**
 * Jsdl:Application with a jsdl-posix:POSIXApplication: what the job runs. The
 * descriptive jsdl:ApplicationName, ApplicationVersion and Description are kept in the
 * agreement only; every POSIX element is acted on or refused by name: the limits, UserName
 * and GroupName would be ignored (the walltime comes from the plan, and jobs run as the
 * service's Slurm user), and so would a named file system.
 */
const descriptive = ['ApplicationName', 'ApplicationVersion', 'Description'];
const posixRead = ['Executable', 'Argument', 'Input', 'Output', 'Error', 'WorkingDirectory', 'Environment'];

export function readApplication(terms: XmlElement, sdt: string): Application | undefined {
  const application = one(terms, `${sdt}//jsdl:JobDescription/jsdl:Application`);
  if (!application) return undefined;
  let posix: XmlElement | undefined;
  for (const child of all(application, '*')) {
    if (child.namespaceUri === prefixes.jsdl && descriptive.includes(child.name)) continue;
    if (child.namespaceUri === prefixes['jsdl-posix'] && child.name === 'POSIXApplication') {
      posix = child;
      continue;
    }
    throw new UnsupportedTerm(
      `${qname(child)} in jsdl:Application is not supported by this server (it would be ignored); it runs a ` +
        `jsdl-posix:POSIXApplication`,
    );
  }
  if (!posix) return undefined;
  for (const child of all(posix, '*')) {
    if (child.namespaceUri !== prefixes['jsdl-posix'] || !posixRead.includes(child.name)) {
      const why =
        child.name === 'WallTimeLimit'
          ? ': the walltime comes from the plan'
          : child.name === 'UserName' || child.name === 'GroupName'
            ? ": jobs run as the service's Slurm user"
            : '';
      throw new UnsupportedTerm(
        `${qname(child)} in jsdl-posix:POSIXApplication is not supported by this server (it would be ignored` +
          `${why}); it acts on ${posixRead.map((n) => `jsdl-posix:${n}`).join(', ')}`,
      );
    }
    if (child.eval('string(@filesystemName)') !== '') {
      throw new UnsupportedTerm(
        `jsdl-posix:${child.name} names a file system (filesystemName); this server knows none: give the path itself`,
      );
    }
  }
  const executable = text(posix, 'jsdl-posix:Executable');
  if (!executable)
    throw new InvalidTerms('jsdl-posix:POSIXApplication needs a jsdl-posix:Executable: the program the job runs');
  const result: Application = {
    executable,
    arguments: all(posix, 'jsdl-posix:Argument').map((a) => a.content.trim()),
    environment: all(posix, 'jsdl-posix:Environment').map((e) => ({
      name: (e.eval('string(@name)') as string).trim(),
      value: e.content,
    })),
  };
  for (const { name } of result.environment) {
    if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(name))
      throw new InvalidTerms(
        `jsdl-posix:Environment "${name}" is not a name an environment variable can have (letters, digits and ` +
          `_, not starting with a digit)`,
      );
    if (name.startsWith('WSAG_'))
      throw new InvalidTerms(
        `jsdl-posix:Environment "${name}": names beginning WSAG_ are the server's own (docs/operations.md, ` +
          `"Checkpoint contract")`,
      );
  }
  for (const field of ['WorkingDirectory', 'Input', 'Output', 'Error'] as const) {
    const value = text(posix, `jsdl-posix:${field}`);
    if (value)
      result[
        field === 'WorkingDirectory' ? 'workingDirectory' : (field.toLowerCase() as 'input' | 'output' | 'error')
      ] = value;
  }
  return result;
}
