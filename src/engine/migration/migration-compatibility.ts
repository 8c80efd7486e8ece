import type { Library, ServiceRequest } from '../../domain/terms.js';
import type { LocalSite, PeerLibrary, PeerProfile } from './peers.js';

/**
 * Compatibility profiles (Hovestadt 2006, sections 3.6.3, 3.6.4 and 4.4): what a target must offer
 * so that a job restarts there from its checkpoint, and the static matching of a peer's
 * configured profile against it.
 */
export interface CompatibilityProfile {
  operatingSystem?: string;
  architecture?: string;
  /**
   * The checkpoint system and version the checkpoint was written with (4.4.1.2); absent when there is no checkpoint to
   * restart.
   */
  checkpointSystem?: string;
  /** `loaded` only for libraries mapped into a checkpointed process image. */
  libraries: Library[];
}

/**
 * The profile of a job: the SLA's static demands (operating system and architecture, else
 * what our nodes run), our checkpoint system when there is a checkpoint to restart, and
 * the libraries. A job that has not run yet starts afresh at the target: no checkpoint
 * system is needed and no library is loaded in an image, so compatible versions suffice.
 */
export function compatibilityProfile(
  request: ServiceRequest,
  local: LocalSite,
  hasCheckpoint: boolean,
): CompatibilityProfile {
  const profile: CompatibilityProfile = {
    libraries: request.libraries.map((l) => ({ ...l, loaded: hasCheckpoint && l.loaded })),
  };
  const operatingSystem = request.operatingSystem ?? local.operatingSystem;
  const architecture = request.architecture ?? local.architecture;
  if (operatingSystem !== undefined) profile.operatingSystem = operatingSystem;
  if (architecture !== undefined) profile.architecture = architecture;
  if (hasCheckpoint && local.checkpointSystem !== undefined) profile.checkpointSystem = local.checkpointSystem;
  return profile;
}

/**
 * Why a peer cannot restart the job, or undefined when its profile matches. Operating
 * system and architecture compare without regard to case; the checkpoint system must be
 * the identical name and version (checkpoint data sets are not portable between versions,
 * 4.4.1.2); libraries follow libraryMismatch. A demand the peer's profile does not list is
 * a mismatch: static matching only trusts what the operator configured.
 */
export function profileMismatch(profile: CompatibilityProfile, peer: PeerProfile): string | undefined {
  const listed = (values: string[], value: string) => values.some((v) => v.toLowerCase() === value.toLowerCase());
  if (profile.operatingSystem !== undefined && !listed(peer.operatingSystems, profile.operatingSystem)) {
    return (
      `operating system ${profile.operatingSystem} is not among the peer's (` +
      `${peer.operatingSystems.join(', ') || 'none listed'})`
    );
  }
  if (profile.architecture !== undefined && !listed(peer.architectures, profile.architecture)) {
    return (
      `architecture ${profile.architecture} is not among the peer's (` +
      `${peer.architectures.join(', ') || 'none listed'})`
    );
  }
  if (profile.checkpointSystem !== undefined && !peer.checkpointSystems.includes(profile.checkpointSystem)) {
    return (
      `the checkpoint was written by ${profile.checkpointSystem}, which the peer does not run (` +
      `${peer.checkpointSystems.join(', ') || 'none listed'})`
    );
  }
  for (const library of profile.libraries) {
    const problem = libraryMismatch(library, peer.libraries);
    if (problem) return problem;
  }
  return undefined;
}

/**
 * A loaded library (mapped into the checkpointed image) needs the identical version: its
 * addresses are in the checkpoint (002 section 4.4.2). An unloaded one needs a compatible
 * version (compatibleVersion).
 */
export function libraryMismatch(library: Library, offered: readonly PeerLibrary[]): string | undefined {
  const versions = offered.filter((l) => l.name === library.name).map((l) => l.version);
  if (versions.length === 0) return `library ${library.name} is not installed at the peer`;
  if (library.loaded) {
    return versions.includes(library.version)
      ? undefined
      : `library ${library.name} ${library.version} is loaded in the checkpoint and needs the identical ` +
          `version; the peer has ${versions.join(', ')}`;
  }
  return versions.some((v) => compatibleVersion(library.version, v))
    ? undefined
    : `library ${library.name} ${library.version} needs a compatible version (same major, no older minor); ` +
        `the peer has ${versions.join(', ')}`;
}

/**
 * Whether `offered` can stand in for `required` (002 section 4.4.2): the same major
 * version, since a major change breaks the interface; a minor version at least as new,
 * since minor versions add functions backwards-compatibly ("1.10 should not be restarted
 * with 1.9"); any patch level ("5.1.2 should also restart with 5.1.1"). Versions compare
 * part by part as numbers where they are numbers (1.10 is newer than 1.9), else as text.
 */
export function compatibleVersion(required: string, offered: string): boolean {
  const [requiredMajor, requiredMinor] = required.split('.');
  const [offeredMajor, offeredMinor] = offered.split('.');
  if (requiredMajor !== offeredMajor) return false;
  if (requiredMinor === undefined) return true;
  if (offeredMinor === undefined) return false;
  const a = Number.parseInt(requiredMinor, 10);
  const b = Number.parseInt(offeredMinor, 10);
  return Number.isNaN(a) || Number.isNaN(b) ? requiredMinor === offeredMinor : b >= a;
}
