import type { Agreement, AgreementState } from '../../domain/agreement.js';
import type { AgreementTemplate } from '../../domain/template.js';
import type { Caller } from '../../domain/identity.js';
import type { GuaranteeTerm } from '../../domain/terms.js';
import type { Allocation } from '../../domain/allocation.js';
import type { PriceList } from '../../domain/pricing.js';
import type { AgreementService } from './agreement-service.js';
import type { RemoteStandby } from '../migration/migration-standby.js';
import type { Peer } from '../migration/peers.js';
import type { CommittedOffer, NegotiationService } from '../negotiation/negotiation-service.js';
import type { PlanningService } from '../planning/planning-service.js';
import type { Quote } from '../planning/quote.js';
import type {
  AgreementDocumentWriter,
  AgreementRepository,
  AgreementSigner,
  Clock,
  IdSource,
  ReceivedOffer,
  TemplateCatalog,
} from '../ports.js';
import type { StandbyHold } from '../migration/ports.js';
import type { ReservationUse } from './reservation-use.js';
import type { Charging } from '../accounting/charging.js';
import type { VoUsage } from '../accounting/vo-usage.js';
import type { FairUse } from '../fair-use/fair-use.js';

export interface AgreementFactoryDeps {
  templates: TemplateCatalog;
  repository: AgreementRepository;
  documents: AgreementDocumentWriter;
  plan: PlanningService;
  clock: Clock;
  ids: IdSource;
  providerName: string;
  prices: PriceList;
  /** Needed to accept negotiated offers, renegotiate, and use reservations. */
  negotiations?: NegotiationService;
  agreements?: AgreementService;
  reservations?: ReservationUse;
  /** Signs every agreement document before it is stored; absent when the site has no signing key. */
  signer?: AgreementSigner;
  /** Full service: remote standby capacity held at a peer at acceptance (present when peers are configured). */
  standby?: Pick<RemoteStandby, 'reserve' | 'bind' | 'release'>;
  /** Holds of funds on the sla:ChargeAccount; absent: nothing is charged. */
  charging?: Pick<Charging, 'hold'>;
  /** VO usage SLAs; absent: no shares are enforced. */
  shares?: Pick<VoUsage, 'check' | 'own' | 'forget' | 'rename'>;
  /** Fair use (docs/security.md): one party's share of the site; absent: no limits. */
  fairUse?: Pick<FairUse, 'check' | 'own' | 'forget' | 'rename'>;
  /**
   * The run time, told the guarantee terms as read from the offer before the agreement is
   * stored, so it does not parse the agreement document again to judge them.
   */
  termsRead?: { know(agreementId: string, terms: readonly GuaranteeTerm[]): void; forget(agreementId: string): void };
}

/** State carried through the steps of one CreateAgreement or CreatePendingAgreement. */
export interface CreateAgreementContext {
  offer: ReceivedOffer;
  caller: Caller;
  now: Date;
  agreementId: string;
  state: AgreementState;
  acceptanceEpr?: string;
  template?: AgreementTemplate;
  /** Alternatives that meet the creation constraints, in the initiator's order. */
  candidates?: ReceivedOffer[];
  /** Why alternatives were not taken, for the fault when none is. */
  reasons: string[];
  chosen?: ReceivedOffer;
  allocation?: Allocation;
  /** Accepting a negotiated offer. */
  committed?: CommittedOffer;
  /** Renegotiation: the agreement the accepted offer changes. */
  replaces?: Agreement;
  document?: string;
  /** The quoted price (a negotiated offer's own quote when one is accepted) and its demand factor. */
  price?: Quote;
  agreement?: Agreement;
  /**
   * Accepting a negotiated offer: the agreement is stored (readable) but this resolves only
   * once it is durable; NegotiationService.confirm awaits it after storing the negotiation,
   * so one sync of the log makes both durable (docs/decisions/0002-group-commit.md).
   */
  durable?: Promise<void>;
  /** Full service: the standby held at a peer, bound once the agreement is stored. */
  standby?: { peer: Peer; hold: StandbyHold };
  /** Undo what earlier steps did to the plan (and the funds), newest first, if a later step fails. */
  undo: Array<() => void | Promise<void>>;
}

export type Step = { name: string; run(ctx: CreateAgreementContext, deps: AgreementFactoryDeps): void | Promise<void> };

export function required<T>(value: T | undefined): T {
  if (value === undefined) throw new Error('step order broken: a value an earlier step sets is missing');
  return value;
}
