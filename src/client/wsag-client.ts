import type { XmlElement } from 'libxml2-wasm';
import type { AgreementState, GuaranteeTermState, ServiceTermState } from '../domain/agreement.js';
import type { OfferCreator, OfferState } from '../domain/negotiation.js';
import { escapeXml } from '../xml/escape.js';
import { c14n } from '../xml/item-constraint.js';
import { withXml } from '../xml/libxml.js';
import { all, stringAt } from '../xml/xpath.js';
import { ns } from '../xml/namespaces.js';
import { initiateNegotiationInput } from '../xml/negotiation-input.js';
import type { ResourceRef } from './soap-requests.js';
import { WsagTransport } from './wsag-transport.js';
export { WsagFault } from './wsag-transport.js';
import { rpw } from './wsag-transport.js';
export type { ResourceRef } from './soap-requests.js';

export interface AgreementReference {
  address: string;
  agreementId: string;
}

export interface AgreementStatus {
  state: AgreementState;
  serviceTerms: { termName: string; state: ServiceTermState }[];
  guaranteeTerms: { termName: string; state: GuaranteeTermState }[];
}

export interface AgreementSummary {
  id: string;
  name?: string;
  state: AgreementState;
  template: string;
  initiator: string;
  nodes: number;
  start?: string;
  end?: string;
  /** Regular price of the agreed terms. */
  price?: Money;
  /** The negotiation offer the agreement was accepted from. */
  origin?: { negotiationId: string; offerId: string };
  createdAt: string;
}

export interface NegotiationReference {
  address: string;
  negotiationId: string;
}

export interface Money {
  amount: number;
  currency: string;
}

/** A negotiation offer as exchanged (a counter-offer, or an entry of the negotiation's NegotiationOffer property). */
export interface NegotiationOfferInfo {
  /** wsag-neg:OfferId; empty when the offer carried none. */
  offerId: string;
  counterOfferTo: string;
  creator: OfferCreator;
  state: OfferState;
  /** xs:dateTime as written: until when an Acceptable offer holds. */
  expirationTime?: string;
  /** srv:Note: why it was Rejected, or what an Advisory slot is. */
  note?: string;
  /** srv:Quote: the regular price, and the preparatory fee of a committing offer. */
  price?: Money;
  fee?: Money;
  /** srv:Slot: the capacity offered (an Advisory start slot, or what an Acceptable offer holds). */
  slot?: { nodes: number; start: string; end: string };
  /** srv:Hold (history entries only): the preparatory reservation as it is now. */
  hold?: { state: string; expiresAt: string; fee?: Money; charged?: Money };
  /** The element itself (canonical XML), e.g. for acceptingOffer(). */
  xml: string;
}

export type NegotiationProperty = 'NegotiationOffer' | 'NegotiationContext' | 'NegotiableTemplate';

/** The JSON listing at /api/negotiations (not part of WS-Agreement). */
export interface NegotiationSummary {
  id: string;
  type: 'Negotiation' | 'Renegotiation';
  agreementId?: string;
  state: string;
  closedBecause?: string;
  initiator: string;
  rounds: number;
  expiresAt: string;
  agreementCreated?: string;
  offers: {
    offerId: string;
    counterOfferTo: string;
    creator: OfferCreator;
    state: OfferState;
    expirationTime?: string;
    price?: Money;
    note?: string;
    hold?: {
      nodes: number;
      start: string;
      end: string;
      expiresAt: string;
      state: string;
      fee: Money;
      charged?: Money;
      endedAt?: string;
    };
  }[];
  createdAt: string;
}

/** The capacity plan at /api/plan (operators only): agreements and preparatory holds. */
export interface PlanSummary {
  clusterNodes: number;
  /**
   * `start` and `end` include the nodes' preparation and release; `promised` is a reservation's or session's window
   * inside them.
   */
  bookings: {
    kind: 'agreement' | 'hold';
    id: string;
    nodes: number;
    start: string;
    end: string;
    promised?: { start: string; end: string };
  }[];
}

/** A cluster node at /api/nodes (operators only). */
/** GET /api/nodes's failureRate: the failures per node and day the planner uses, and what it learned them from. */
export interface FailureRateSummary {
  perNodeDay: number;
  failures: number;
  nodeDays: number;
  configuredPerNodeDay: number;
  configuredNodeDays: number;
  /** The same per failure group (absent from servers before failure groups). */
  groups?: Array<{
    group: string;
    nodes: number;
    failures: number;
    nodeDays: number;
    perNodeDay: number;
    /** Failures within a minute of each other counted once (absent from older servers). */
    events?: number;
    /** The nodes one such event took on average. */
    meanEventSize?: number;
  }>;
  /** Failures of nodes soon after their repair, against the others' (absent from older servers). */
  recentRepairs?: {
    hours: number;
    failures: number;
    nodeDays: number;
    perNodeDay: number;
    othersPerNodeDay: number;
    chosenLast: boolean;
  };
  /** How long failed nodes stayed down, those that failed alone and with others apart (absent from older servers). */
  repairTimes?: Record<'alone' | 'withOthers', { repairs: number; medianHours: number }>;
}

export interface NodeSummary {
  id: string;
  memoryGB: number;
  cpus: number;
  interconnect?: string;
  island?: string;
  /** The nodes it fails together with; failure rates are learned per group. */
  failureGroup?: string;
  buffer: boolean;
  failed: boolean;
}

/** What a node failure or repair changed (POST /api/nodes/ID/fail|repair). */
export interface NodeEventSummary {
  node: string;
  failed: boolean;
  moved: string[];
  suspended: string[];
  solved: string[];
  problematic: Array<{ id: string; reason: string }>;
  /** Agreements whose plan changed, each with an audit entry. */
  agreements?: string[];
  /** The Migration Controller's report, when the failure left problematic jobs and peers are configured. */
  migration?: {
    jobs: Array<{
      agreementId: string;
      migrated: boolean;
      peer?: string;
      remoteAgreementId?: string;
      reason?: string;
      detail: string;
    }>;
    violations: Array<{ agreementId: string; reason: string }>;
  };
}

/** The resource a request is addressed to: the reference parameter of its EPR, sent as a SOAP header. */

const negAction = (portType: string, message: string): string => `${ns.wsagNeg}/${portType}/${message}`;

/** A typed WS-Agreement client over SOAP 1.1 (used by the CLI, by tests, and later by migration to peers). */
export class WsagClient extends WsagTransport {
  /** The factory's templates, as XML documents. */
  async templates(): Promise<string[]> {
    return this.getResourceProperty(`${this.baseUrl}/wsag/AgreementFactory`, 'wsag:Template');
  }

  async createAgreement(offerXml: string): Promise<AgreementReference> {
    const body = `<wsag:CreateAgreementInput xmlns:wsag="${ns.wsag}">${offerXml}</wsag:CreateAgreementInput>`;
    const response = await this.call(
      `${this.baseUrl}/wsag/AgreementFactory`,
      `${ns.wsag}/AgreementFactory/CreateAgreementRequest`,
      body,
    );
    return readAgreementEpr(response, 'CreateAgreement');
  }

  /** One resource property of an agreement (Name, AgreementId, Context, Terms, AgreementState, ...). */
  async agreementProperty(
    agreementId: string,
    property: string,
    port: 'Agreement' | 'AgreementState' = 'Agreement',
  ): Promise<string[]> {
    return this.getResourceProperty(`${this.baseUrl}/wsag/${port}`, `wsag:${property}`, agreementId);
  }

  async state(agreementId: string): Promise<AgreementStatus> {
    const body = `<rp:GetResourcePropertyDocument xmlns:rp="${ns.wsrfRp}"/>`;
    const response = await this.call(
      `${this.baseUrl}/wsag/AgreementState`,
      `${rpw}/GetResourcePropertyDocument/GetResourcePropertyDocumentRequest`,
      body,
      agreementId,
    );
    return withXml(response, 'response', (doc) => {
      const terms = (local: string) =>
        all(doc.root, `//wsag:AgreementStateProperties/wsag:${local}`).map((e) => ({
          termName: stringAt(e, '@wsag:termName'),
          state: stringAt(e, 'wsag:State'),
        }));
      return {
        state: stringAt(doc.root, '//wsag:AgreementStateProperties/wsag:AgreementState/wsag:State') as AgreementState,
        serviceTerms: terms('ServiceTermState') as AgreementStatus['serviceTerms'],
        guaranteeTerms: terms('GuaranteeTermState') as AgreementStatus['guaranteeTerms'],
      };
    });
  }

  async terminate(agreementId: string, reason = 'terminated by the initiator'): Promise<void> {
    const body =
      `<wsag:TerminateInput xmlns:wsag="${ns.wsag}" xmlns:srv="${ns.srv}"><srv:Reason>` +
      `${escapeXml(reason)}</srv:Reason></wsag:TerminateInput>`;
    await this.call(`${this.baseUrl}/wsag/Agreement`, `${ns.wsag}/Agreement/TerminateRequest`, body, agreementId);
  }

  /** The caller's agreements (JSON listing, not part of WS-Agreement). */
  /** Every agreement the caller may see, page after page (or those in `state`). */
  async agreements(options: { state?: string } = {}): Promise<AgreementSummary[]> {
    return this.allPages<AgreementSummary>(
      `/api/agreements?limit=1000${options.state ? `&state=${encodeURIComponent(options.state)}` : ''}`,
      'listing agreements',
    );
  }

  /** CreatePendingAgreement: the agreement starts Pending until the provider accepts or rejects it. */
  async createPendingAgreement(
    offerXml: string,
    acceptanceEpr?: { address: string; referenceParameters?: string[] },
  ): Promise<AgreementReference> {
    // AgreementAcceptanceEPR comes before the offer (wsag:CreatePendingAgreementInputType).
    const epr = acceptanceEpr
      ? `<wsag:AgreementAcceptanceEPR xmlns:wsa="${ns.wsa}"><wsa:Address>${escapeXml(acceptanceEpr.address)}` +
        `</wsa:Address>` +
        (acceptanceEpr.referenceParameters?.length
          ? `<wsa:ReferenceParameters>${acceptanceEpr.referenceParameters.join('')}</wsa:ReferenceParameters>`
          : '') +
        '</wsag:AgreementAcceptanceEPR>'
      : '';
    const body =
      `<wsag:CreatePendingAgreementInput xmlns:wsag="${ns.wsag}">${epr}${offerXml}` +
      `</wsag:CreatePendingAgreementInput>`;
    const response = await this.call(
      `${this.baseUrl}/wsag/PendingAgreementFactory`,
      `${ns.wsag}/PendingAgreementFactory/CreatePendingAgreementRequest`,
      body,
    );
    return readAgreementEpr(response, 'CreatePendingAgreement');
  }

  /** The provider's decision on a pending agreement, through the JSON admin API (operators only). */
  async decide(agreementId: string, decision: 'Accept' | 'Reject'): Promise<AgreementSummary> {
    const path = `/api/agreements/${encodeURIComponent(agreementId)}/${decision.toLowerCase()}`;
    return this.json<AgreementSummary>(
      path,
      `${decision === 'Accept' ? 'accepting' : 'rejecting'} agreement ${agreementId}`,
      { method: 'POST' },
    );
  }

  // --- WS-Agreement Negotiation (GFD.193) ---------------------------------------------

  /** InitiateNegotiation; with `renegotiate`, a renegotiation of that agreement. */
  async initiateNegotiation(
    options: { renegotiate?: string; expirationTime?: string } = {},
  ): Promise<NegotiationReference> {
    const body = initiateNegotiationInput(options, `${this.baseUrl}/wsag/Agreement`);
    const response = await this.call(
      `${this.baseUrl}/wsag/NegotiationFactory`,
      negAction('NegotiationFactory', 'InitiateNegotiationRequest'),
      body,
    );
    return withXml(response, 'response', (doc) => {
      const address = stringAt(doc.root, '//wsag-neg:CreatedNegotiationEPR/wsa:Address');
      const negotiationId = stringAt(
        doc.root,
        '//wsag-neg:CreatedNegotiationEPR/wsa:ReferenceParameters/srv:NegotiationId',
      );
      if (!negotiationId)
        throw new Error('the server answered InitiateNegotiation without a negotiation id in the EPR');
      return { address, negotiationId };
    });
  }

  /** One round: sends wsag-neg:NegotiationOffer elements, returns the counter-offers in order. */
  async negotiate(negotiationId: string, offers: string[]): Promise<NegotiationOfferInfo[]> {
    const body = `<wsag-neg:NegotiateInput xmlns:wsag-neg="${ns.wsagNeg}">${offers.join('')}</wsag-neg:NegotiateInput>`;
    const response = await this.call(
      this.negotiationEndpoint(),
      negAction('Negotiation', 'NegotiateRequest'),
      body,
      negotiation(negotiationId),
    );
    return withXml(response, 'response', (doc) =>
      all(doc.root, '//wsag-neg:NegotiateOutput/wsag-neg:NegotiationCounterOffer').map(readNegotiationOfferInfo),
    );
  }

  /** Advertise: offers for the responder's information; nothing is answered or held. */
  async advertise(negotiationId: string, offers: string[]): Promise<void> {
    const body = `<wsag-neg:AdvertiseInput xmlns:wsag-neg="${ns.wsagNeg}">${offers.join('')}</wsag-neg:AdvertiseInput>`;
    await this.call(
      this.negotiationEndpoint(),
      negAction('Negotiation', 'AdvertiseRequest'),
      body,
      negotiation(negotiationId),
    );
  }

  /** Ends the negotiation; the server releases every hold it has. */
  async terminateNegotiation(negotiationId: string): Promise<void> {
    const body = `<wsag-neg:TerminateInput xmlns:wsag-neg="${ns.wsagNeg}"></wsag-neg:TerminateInput>`;
    await this.call(
      this.negotiationEndpoint(),
      negAction('Negotiation', 'TerminateRequest'),
      body,
      negotiation(negotiationId),
    );
  }

  /** One resource property of a negotiation, as XML elements. */
  async negotiationProperty(negotiationId: string, property: NegotiationProperty): Promise<string[]> {
    return this.getResourceProperty(this.negotiationEndpoint(), `wsag-neg:${property}`, negotiation(negotiationId));
  }

  /** The negotiation's offers so far (both parties', in order), parsed. */
  async negotiationOffers(negotiationId: string): Promise<NegotiationOfferInfo[]> {
    const offers = await this.negotiationProperty(negotiationId, 'NegotiationOffer');
    return offers.map((xml) => withXml(xml, 'negotiation offer', (doc) => readNegotiationOfferInfo(doc.root)));
  }

  /** The caller's negotiations (JSON listing; operators see everyone's). */
  async negotiations(options: { state?: string } = {}): Promise<NegotiationSummary[]> {
    return this.allPages<NegotiationSummary>(
      `/api/negotiations?limit=1000${options.state ? `&state=${encodeURIComponent(options.state)}` : ''}`,
      'listing negotiations',
    );
  }

  async negotiation(negotiationId: string): Promise<NegotiationSummary> {
    return this.json<NegotiationSummary>(
      `/api/negotiations/${encodeURIComponent(negotiationId)}`,
      `reading negotiation ${negotiationId}`,
    );
  }

  /** What capacity is booked by agreements and holds (operators only). */
  async plan(): Promise<PlanSummary> {
    return this.json<PlanSummary>('/api/plan', 'reading the plan');
  }

  /** The cluster's nodes and whether each is failed (operators only). */
  async nodes(): Promise<NodeSummary[]> {
    return (await this.nodeList()).nodes;
  }

  /** The nodes, and the failure rate the planner learned from them (docs/scheduler.md, "Checkpoints by need"). */
  async nodeList(): Promise<{ nodes: NodeSummary[]; failureRate?: FailureRateSummary }> {
    return this.json<{ nodes: NodeSummary[]; failureRate?: FailureRateSummary }>('/api/nodes', 'listing the nodes');
  }

  /** Reports a node failed or repaired (operators only): the server re-plans, and the run time follows. */
  async nodeEvent(nodeId: string, event: 'fail' | 'repair'): Promise<NodeEventSummary> {
    return this.json<NodeEventSummary>(
      `/api/nodes/${encodeURIComponent(nodeId)}/${event}`,
      `reporting node ${nodeId} ${event === 'fail' ? 'failed' : 'repaired'}`,
      { method: 'POST' },
    );
  }

  private negotiationEndpoint(): string {
    return `${this.baseUrl}/wsag/Negotiation`;
  }

  /**
   * The agreement document as the server stores it: signed by the provider (and countersigned, once the initiator did).
   */
  async agreementDocument(agreementId: string): Promise<string> {
    return this.http(
      `/api/agreements/${encodeURIComponent(agreementId)}/document`,
      'reading the agreement document',
      undefined,
      (text) => text,
    );
  }

  /** Sends the agreement document with the initiator's countersignature added (src/crypto countersign). */
  async countersign(agreementId: string, document: string): Promise<AgreementSummary> {
    return this.json<AgreementSummary>(
      `/api/agreements/${encodeURIComponent(agreementId)}/countersignature`,
      'countersigning the agreement',
      {
        method: 'PUT',
        headers: { 'content-type': 'application/xml' },
        body: document,
      },
    );
  }
}

function negotiation(id: string): ResourceRef {
  return { parameter: 'NegotiationId', id };
}

function readAgreementEpr(response: string, operation: string): AgreementReference {
  return withXml(response, 'response', (doc) => {
    const address = stringAt(doc.root, '//wsag:CreatedAgreementEPR/wsa:Address');
    const agreementId = stringAt(doc.root, '//wsag:CreatedAgreementEPR/wsa:ReferenceParameters/srv:AgreementId');
    if (!agreementId) throw new Error(`the server answered ${operation} without an agreement id in the EPR`);
    return { address, agreementId };
  });
}

/**
 * The parts of a negotiation offer a client acts on; the server's srv:* extensions are read where GFD.193 leaves room
 * for them.
 */
function readNegotiationOfferInfo(element: XmlElement): NegotiationOfferInfo {
  // Compiled once and shared (src/xml/xpath.ts): a counter-offer is read three times a round.
  const get = (path: string): string | undefined => stringAt(element, path) || undefined;
  const money = (path: string): Money | undefined => {
    const amount = get(path);
    return amount === undefined ? undefined : { amount: Number(amount), currency: get(`${path}/@Currency`) ?? '' };
  };
  const c = 'wsag-neg:NegotiationOfferContext';
  const info: NegotiationOfferInfo = {
    offerId: get('@wsag-neg:OfferId') ?? '',
    counterOfferTo: get(`${c}/wsag-neg:CounterOfferTo`) ?? '',
    creator: get(`${c}/wsag-neg:Creator`) as OfferCreator,
    state: get(`local-name(${c}/wsag-neg:State/*)`) as OfferState,
    xml: c14n(element),
  };
  const optional = {
    expirationTime: get(`${c}/wsag-neg:ExpirationTime`),
    note: get(`${c}/wsag-neg:State/*/srv:Note`),
    price: money(`${c}/srv:Quote/srv:Price`),
    fee: money(`${c}/srv:Quote/srv:PreparatoryFee`),
  };
  for (const [key, value] of Object.entries(optional)) if (value !== undefined) Object.assign(info, { [key]: value });
  const slotNodes = get(`${c}/srv:Slot/@Nodes`);
  if (slotNodes)
    info.slot = {
      nodes: Number(slotNodes),
      start: get(`${c}/srv:Slot/srv:Start`) ?? '',
      end: get(`${c}/srv:Slot/srv:End`) ?? '',
    };
  const hold = get(`${c}/srv:Hold/srv:State`);
  if (hold) {
    info.hold = { state: hold, expiresAt: get(`${c}/srv:Hold/srv:ExpiresAt`) ?? '' };
    const fee = money(`${c}/srv:Hold/srv:Fee`);
    const charged = money(`${c}/srv:Hold/srv:Charged`);
    if (fee) info.hold.fee = fee;
    if (charged) info.hold.charged = charged;
  }
  return info;
}
