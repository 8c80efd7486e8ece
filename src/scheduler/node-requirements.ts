import type { ClusterNode, JobRequirements } from './model.js';

/** Whether a node meets a job's static demands (002 section 4.2.2: the Machine Manager knows the hardware). */
export function satisfies(node: ClusterNode, r: JobRequirements): boolean {
  if (r.memoryPerNodeGB !== undefined && node.memoryGB < r.memoryPerNodeGB) return false;
  if (r.cpusPerNode !== undefined && node.cpus < r.cpusPerNode) return false;
  if (r.interconnect !== undefined && node.interconnect !== r.interconnect) return false;
  if (
    r.operatingSystem !== undefined &&
    node.operatingSystem !== undefined &&
    node.operatingSystem !== r.operatingSystem
  )
    return false;
  if (r.architecture !== undefined && node.architecture !== undefined && node.architecture !== r.architecture)
    return false;
  // Unlike an operating system, a security policy is never assumed: a node that names none meets none.
  if (r.securityPolicies?.some((p) => !node.securityPolicies?.includes(p))) return false;
  if (r.candidateHosts && !r.candidateHosts.includes(node.id)) return false;
  for (const lib of r.libraries ?? []) {
    const present = node.libraries?.find((l) => l.name === lib.name);
    if (!node.libraries) continue; // a node that lists no libraries is not restricted
    if (!present) return false;
    if (lib.loaded ? present.version !== lib.version : majorVersion(present.version) !== majorVersion(lib.version))
      return false;
  }
  return true;
}

/** An unloaded library needs a compatible version: the same major version. */
function majorVersion(version: string): string {
  return version.split('.')[0] ?? version;
}
