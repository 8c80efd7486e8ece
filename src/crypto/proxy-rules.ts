import { CertificateRejected } from './certificate-rejected.js';
import { extensionOids, hasKeyUsage, keyUsageBits, type CertificateFacts } from './certificate-facts.js';
import { commonNameOid, sameName } from './distinguished-name.js';
import { checkExtensions, checkSignature, checkValidity } from './path-checks.js';
import { inheritAllOid } from './proxy-cert-info.js';

/**
 * The RFC 3820 rules for the proxies below a validated end entity (`proxies` leaf first,
 * each issued by the next, the last by `endEntity`), checked from the end entity down so the
 * first failure reported is the highest one.
 */
export function validateProxies(proxies: CertificateFacts[], endEntity: CertificateFacts, at: Date): void {
  for (let i = proxies.length - 1; i >= 0; i--) {
    const proxy = proxies[i] as CertificateFacts;
    const issuer = proxies[i + 1] ?? endEntity;
    checkProxyProfile(proxy, issuer);
    checkPathLength(proxies, i);
    checkSignature(proxy, issuer, 'proxy');
    checkValidity(proxy, 'proxy', at);
    checkNestedValidity(proxy, issuer);
    checkExtensions(proxy, 'proxy');
  }
}

function reject(proxy: CertificateFacts, rule: string, text: string): never {
  throw new CertificateRejected(rule, proxy.dn, `proxy ${proxy.dn}: ${text}`);
}

/** What one proxy must be, given its issuer (RFC 3820 section 3). */
function checkProxyProfile(proxy: CertificateFacts, issuer: CertificateFacts): void {
  const pci = proxy.proxyCertInfo;
  if (!pci) {
    const draft = proxy.extensions.some((e) => e.oid === extensionOids.draftProxyCertInfo);
    reject(
      proxy,
      'proxy-cert-info',
      draft
        ? `has the pre-standard ProxyCertInfo ${extensionOids.draftProxyCertInfo} (Globus Toolkit 3); only ` +
            `RFC 3820 proxies (${extensionOids.proxyCertInfo}) are accepted (RFC 3820 3.8)`
        : `has no ProxyCertInfo extension (${extensionOids.proxyCertInfo}), yet it is issued by ${issuer.dn}, ` +
            `which is not a CA and can issue proxy certificates only (RFC 3820 3.8)`,
    );
  }
  if (!pci.critical)
    reject(proxy, 'proxy-cert-info', 'its ProxyCertInfo extension is not marked critical (RFC 3820 3.8)');
  if (!pci.info)
    reject(
      proxy,
      'proxy-cert-info',
      `its ProxyCertInfo extension cannot be read: ${pci.malformed ?? 'malformed'} (RFC 3820 3.8)`,
    );
  if (pci.info.policyLanguage !== inheritAllOid) {
    reject(
      proxy,
      'proxy-policy',
      `its proxy policy language ${pci.info.policyLanguage} is not accepted: this server accepts only ` +
        `id-ppl-inheritAll (${inheritAllOid}) proxies, which carry all their issuer's rights (RFC 3820 3.8.2)`,
    );
  }
  if (!extendsByOneCommonName(proxy, issuer)) {
    reject(
      proxy,
      'proxy-subject',
      `subject does not extend its issuer's subject ${issuer.dn} by one CN (RFC 3820 3.4)`,
    );
  }
  if (proxy.basicConstraints?.ca)
    reject(proxy, 'proxy-ca-flag', 'has basicConstraints cA=true; a proxy certificate must not be a CA (RFC 3820 3.7)');
  if (hasKeyUsage(proxy, keyUsageBits.keyCertSign) || hasKeyUsage(proxy, keyUsageBits.nonRepudiation)) {
    reject(
      proxy,
      'proxy-key-usage',
      'its keyUsage asserts keyCertSign or nonRepudiation, which a proxy must not (RFC 3820 3.6)',
    );
  }
  if (proxy.extensions.some((e) => e.oid === extensionOids.subjectAltName))
    reject(proxy, 'proxy-alt-name', 'has a subjectAltName extension, which a proxy must not (RFC 3820 3.5)');
  if (proxy.extensions.some((e) => e.oid === extensionOids.issuerAltName))
    reject(proxy, 'proxy-alt-name', 'has an issuerAltName extension, which a proxy must not (RFC 3820 3.2)');
  if (issuer.keyUsage !== undefined && !hasKeyUsage(issuer, keyUsageBits.digitalSignature)) {
    reject(
      proxy,
      'proxy-issuer-key-usage',
      `its issuer ${issuer.dn} has a keyUsage without digitalSignature, so it cannot sign proxies (RFC 3820 3.1)`,
    );
  }
}

/** The proxy's subject is its issuer's subject with exactly one more RDN, a single CN attribute. */
function extendsByOneCommonName(proxy: CertificateFacts, issuer: CertificateFacts): boolean {
  const own = [...proxy.subject];
  const last = own.pop();
  if (!last || own.length !== issuer.subject.length) return false;
  if (!own.every((rdn, k) => sameName(rdn, issuer.subject[k] as typeof rdn))) return false;
  return last.length === 1 && last[0]?.type === commonNameOid;
}

/** No proxy above `proxies[i]` allows fewer proxies below it than there are (pCPathLenConstraint, RFC 3820 3.8.1). */
function checkPathLength(proxies: CertificateFacts[], i: number): void {
  const proxy = proxies[i] as CertificateFacts;
  for (let m = proxies.length - 1; m > i; m--) {
    const ancestor = proxies[m] as CertificateFacts;
    const allowed = ancestor.proxyCertInfo?.info?.pathLength;
    const depth = m - i;
    if (allowed !== undefined && depth > allowed) {
      reject(
        proxy,
        'proxy-path-length',
        `is proxy number ${depth} below ${ancestor.dn}, whose pCPathLenConstraint allows ${allowed} proxy ` +
          `certificate(s) below it (RFC 3820 3.8.1)`,
      );
    }
  }
}

/** A proxy never outlives (or predates) its issuer: its validity lies within the issuer's. */
function checkNestedValidity(proxy: CertificateFacts, issuer: CertificateFacts): void {
  if (proxy.notBefore < issuer.notBefore || proxy.notAfter > issuer.notAfter) {
    reject(
      proxy,
      'proxy-validity',
      `its validity ${proxy.notBefore.toISOString()} to ${proxy.notAfter.toISOString()} is not within its ` +
        `issuer ${issuer.dn}'s ${issuer.notBefore.toISOString()} to ${issuer.notAfter.toISOString()} (a proxy ` +
        `must not outlive its issuer)`,
    );
  }
}
