/** Namespace URIs used on the wire (PROTOCOL.md "Namespaces", TERMS.md). */
export const ns = {
  wsag: 'http://schemas.ggf.org/graap/2007/03/ws-agreement',
  wsagNeg: 'http://schemas.ogf.org/graap/2009/11/ws-agreement-negotiation',
  wsa: 'http://www.w3.org/2005/08/addressing',
  wsrfBf: 'http://docs.oasis-open.org/wsrf/bf-2',
  wsrfRp: 'http://docs.oasis-open.org/wsrf/rp-2',
  jsdl: 'http://schemas.ggf.org/jsdl/2005/11/jsdl',
  jsdlPosix: 'http://schemas.ggf.org/jsdl/2005/11/jsdl-posix',
  arp: 'http://www.ogf.org/graap/AR/2009/04/',
  wsag4jt: 'http://schemas.wsag4j.org/2009/07/wsag4j-scheduling-extensions',
  sla: 'http://schemas.wsag-server.org/2026/11/sla-terms',
  /** Our own reference parameters and extensions. */
  srv: 'http://schemas.wsag-server.org/2026/11/server',
  xs: 'http://www.w3.org/2001/XMLSchema',
  soap11: 'http://schemas.xmlsoap.org/soap/envelope/',
  soap12: 'http://www.w3.org/2003/05/soap-envelope',
  /** XML-DSig (agreement signatures, WS-Security). */
  ds: 'http://www.w3.org/2000/09/xmldsig#',
  wsse: 'http://docs.oasis-open.org/wss/2004/01/oasis-200401-wss-wssecurity-secext-1.0.xsd',
  wsu: 'http://docs.oasis-open.org/wss/2004/01/oasis-200401-wss-wssecurity-utility-1.0.xsd',
} as const;

/** Prefix map for XPath in our own code. */
export const prefixes: Record<string, string> = {
  wsag: ns.wsag,
  'wsag-neg': ns.wsagNeg,
  wsa: ns.wsa,
  rp: ns.wsrfRp,
  jsdl: ns.jsdl,
  'jsdl-posix': ns.jsdlPosix,
  arp: ns.arp,
  wsag4jt: ns.wsag4jt,
  sla: ns.sla,
  srv: ns.srv,
  xs: ns.xs,
  ds: ns.ds,
  wsse: ns.wsse,
  wsu: ns.wsu,
};

/** Which schema file in schemas/ declares each namespace (one entry file per namespace). */
export const schemaFiles: Record<string, string> = {
  [ns.wsag]: 'ws-agreement.xsd',
  [ns.wsagNeg]: 'ws-agreement-negotiation.xsd',
  [ns.wsa]: 'ws-addressing.xsd',
  [ns.wsrfBf]: 'wsrf-bf.xsd',
  [ns.wsrfRp]: 'wsrf-rp.xsd',
  [ns.jsdl]: 'jsdl.xsd',
  [ns.jsdlPosix]: 'jsdl-posix.xsd',
  [ns.arp]: 'ogf-advance-reservation.xsd',
  [ns.wsag4jt]: 'wsag4j-scheduling.xsd',
  [ns.sla]: 'sla-terms.xsd',
  [ns.srv]: 'wsag-server.xsd',
};
