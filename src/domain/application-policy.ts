import { UnsupportedTerm } from './errors.js';
import type { ServiceRequest } from './terms.js';

/**
 * Which applications (jsdl-posix:POSIXApplication) this site runs. Only a
 * resource manager that runs programs (Slurm) runs them, and only executables under the
 * prefixes the operator listed (WSAG_SLURM_EXECUTABLES): an agreement is a remote party's
 * program run on the cluster as the service's user, so nothing runs that the site did not
 * allow. Refused at admission, naming the executable, never accepted and then not run.
 */
export interface ApplicationPolicy {
  /** The resource manager runs applications. */
  runsApplications: boolean;
  /** Absolute path prefixes an executable must begin with (a directory ends with '/'). */
  executablePrefixes: readonly string[];
}

export const runsNoApplications: ApplicationPolicy = { runsApplications: false, executablePrefixes: [] };

export function checkApplication(request: ServiceRequest, policy: ApplicationPolicy): void {
  const application = request.application;
  if (!application) return;
  const executable = application.executable;
  if (!policy.runsApplications) {
    throw new UnsupportedTerm(
      `jsdl-posix:POSIXApplication: this server runs no applications (its executor runs the site's default ` +
        `job); it runs ${executable} only in front of Slurm (WSAG_EXECUTOR=slurm): leave jsdl:Application out`,
    );
  }
  const segments = executable.split('/');
  const plain = executable.startsWith('/') && !segments.includes('..') && !segments.includes('.');
  if (!plain || !policy.executablePrefixes.some((prefix) => executable.startsWith(prefix))) {
    const allowed =
      policy.executablePrefixes.length > 0
        ? `it runs executables under ${policy.executablePrefixes.join(', ')}`
        : "it runs no executable an offer names (WSAG_SLURM_EXECUTABLES is empty), only the site's default job";
    throw new UnsupportedTerm(`jsdl-posix:Executable ${executable} is not an executable this site runs: ${allowed}`);
  }
}
