/**
 * One error class per protocol fault (PROTOCOL.md "Faults"). The SOAP adapter maps each
 * to a SOAP Fault carrying `code` and `message`; `exposable` says whether the message may
 * leave the server (internal errors are logged, and the caller sees a generic text).
 */
export abstract class WsagError extends Error {
  abstract readonly code: string;
  /** Client errors are the caller's to fix (SOAP 1.1 Client / 1.2 Sender). */
  readonly isClientError: boolean = true;
  readonly exposable: boolean = true;
  /** The technical text behind a plain message (a schema validator's own words), for the fault's detail. */
  readonly technicalDetail: string | undefined;

  constructor(message: string, technicalDetail?: string) {
    super(message);
    this.name = new.target.name;
    this.technicalDetail = technicalDetail;
  }
}

export class MalformedMessage extends WsagError {
  readonly code = 'MalformedMessage';
}
export class MessageTooLarge extends WsagError {
  readonly code = 'MessageTooLarge';
}
/**
 * A body in an encoding or charset the server does not read (it reads UTF-8, uncompressed or gzip/deflate where the
 * route says so).
 */
export class UnsupportedMediaType extends WsagError {
  readonly code = 'UnsupportedMediaType';
}
/** An HTTP method the route does not serve; the answer's Allow header lists those it does. */
export class MethodNotAllowed extends WsagError {
  readonly code = 'MethodNotAllowed';
}
/**
 * A SOAP header block marked mustUnderstand that this server does not process (SOAP 1.1 section 4.2.3, SOAP 1.2 part 1
 * section 5.2.3).
 */
export class MustUnderstand extends WsagError {
  readonly code = 'MustUnderstand';
  constructor(
    message: string,
    readonly notUnderstood: ReadonlyArray<{ namespaceUri: string; name: string }>,
  ) {
    super(message);
  }
}
/**
 * The SOAP Envelope is in a namespace that is neither SOAP 1.1's nor SOAP 1.2's (SOAP 1.1 section 4.4.1, SOAP 1.2
 * part 1 section 5.4.7).
 */
export class VersionMismatch extends WsagError {
  readonly code = 'VersionMismatch';
}
/**
 * WS-Addressing 1.0 SOAP binding, section 6: a fault of the addressing layer, sent with its subcode (the code) and the
 * header it concerns (ProblemHeaderQName).
 */
export abstract class AddressingFault extends WsagError {
  constructor(
    message: string,
    /** The header the fault concerns, as a QName with the wsa prefix (wsa:Action). */
    readonly problemHeader: string,
  ) {
    super(message);
  }
}
/** A ReplyTo or FaultTo names an address other than the anonymous one (the request's own connection). */
export class OnlyAnonymousAddressSupported extends AddressingFault {
  readonly code = 'OnlyAnonymousAddressSupported';
}
/** A header WS-Addressing requires is missing (wsa:Action, or wsa:MessageID where a reply is addressed). */
export class MessageAddressingHeaderRequired extends AddressingFault {
  readonly code = 'MessageAddressingHeaderRequired';
}
export class SchemaViolation extends WsagError {
  readonly code = 'SchemaViolation';
}
/**
 * No operation of the port has the request's Body element or action. When the request named its action in wsa:Action,
 * `problemAction` holds it and the fault is WS-Addressing's (wsa:ActionNotSupported with wsa:ProblemAction).
 */
export class ActionNotSupported extends WsagError {
  readonly code = 'ActionNotSupported';
  constructor(
    message: string,
    readonly problemAction?: string,
  ) {
    super(message);
  }
}
export class UnknownTemplate extends WsagError {
  readonly code = 'UnknownTemplate';
}
export class CreationConstraintViolation extends WsagError {
  readonly code = 'CreationConstraintViolation';
}
export class CannotSatisfy extends WsagError {
  readonly code = 'CannotSatisfy';
  override readonly isClientError = false;
}
export class UnknownResource extends WsagError {
  readonly code = 'UnknownResource';
}
export class InvalidResourcePropertyQName extends WsagError {
  readonly code = 'InvalidResourcePropertyQName';
}
export class NotAuthorized extends WsagError {
  readonly code = 'NotAuthorized';
}
export class OfferExpired extends WsagError {
  readonly code = 'OfferExpired';
}
export class NegotiationClosed extends WsagError {
  readonly code = 'NegotiationClosed';
}
export class TooManyRounds extends WsagError {
  readonly code = 'TooManyRounds';
}
export class InvalidStateTransition extends WsagError {
  readonly code = 'InvalidStateTransition';
}
export class InternalError extends WsagError {
  readonly code = 'InternalError';
  override readonly isClientError = false;
  override readonly exposable = false;
}
/** Terms that are schema-valid but say something impossible (a window without a start). */
/** An Idempotency-Key sent again with another request than the one it first came with (the JSON API). */
export class IdempotencyKeyReused extends WsagError {
  readonly code = 'IdempotencyKeyReused';
}
export class InvalidTerms extends WsagError {
  readonly code = 'InvalidTerms';
}
/**
 * A term of the offer that this server does not act on: refused, never parsed and ignored (docs/terms.md, "Where each
 * term is enforced").
 */
export class UnsupportedTerm extends WsagError {
  readonly code = 'UnsupportedTerm';
}
/** A charge account, virtual organisation or group the server does not know. */
export class UnknownAccount extends WsagError {
  readonly code = 'UnknownAccount';
}
/**
 * The charge account cannot cover what is asked (after its overdraft policy): names the account, the amount needed and
 * the amount available.
 */
export class InsufficientFunds extends WsagError {
  readonly code = 'InsufficientFunds';
  /** What the account has available, in its currency's units (a negotiation counters with what that buys). */
  constructor(
    message: string,
    readonly available?: number,
  ) {
    super(message);
  }
}
/**
 * The request would take its VO, group or user past its usage SLA (share) at this site: names the level, the share, the
 * usage and when room returns.
 */
export class ShareExceeded extends WsagError {
  readonly code = 'ShareExceeded';
  /** When the share has room again (a negotiation counters with a start then). */
  constructor(
    message: string,
    readonly roomAt?: Date,
  ) {
    super(message);
  }
}
/**
 * The request would take its party past a fair-use limit (docs/security.md, "Fair use"): names the limit, the party,
 * what it holds and the most it may.
 */
export class FairUseExceeded extends WsagError {
  readonly code = 'FairUseExceeded';
  /**
   * Which limit (share, nodeHours, agreements, pending, negotiations, checkpointBytes); `/metrics` counts refusals by
   * it.
   */
  constructor(
    message: string,
    readonly limit?: string,
  ) {
    super(message);
  }
}
/**
 * Security is on and the request proves no identity: no client certificate or WS-Security signature, or one that does
 * not lead to a trusted CA.
 */
export class NotAuthenticated extends WsagError {
  readonly code = 'NotAuthenticated';
}
/**
 * An agreement's XML signature does not hold: which signature, and what is wrong (structure, digest mismatch, bad
 * signature value, untrusted chain).
 */
export class SignatureInvalid extends WsagError {
  readonly code = 'SignatureInvalid';
}
/**
 * This instance cannot serve the request now: in a cluster, no planning leader answers yet (a takeover under way). Try
 * again shortly.
 */
export class ServiceUnavailable extends WsagError {
  readonly code = 'ServiceUnavailable';
  override readonly isClientError = false;
}

/**
 * Each fault's class by its code, so a fault raised on another thread (src/workers) is
 * raised again here as itself, with its message (extra fields such as `available` do not
 * cross). MustUnderstand and the WS-Addressing faults are not among them: they need the header
 * blocks, and only the thread that reads the envelope raises them.
 */
export const faultClasses: Readonly<Record<string, new (message: string) => WsagError>> = Object.fromEntries(
  [
    MalformedMessage,
    VersionMismatch,
    MessageTooLarge,
    UnsupportedMediaType,
    MethodNotAllowed,
    SchemaViolation,
    ActionNotSupported,
    UnknownTemplate,
    CreationConstraintViolation,
    CannotSatisfy,
    UnknownResource,
    InvalidResourcePropertyQName,
    NotAuthorized,
    OfferExpired,
    NegotiationClosed,
    TooManyRounds,
    InvalidStateTransition,
    InternalError,
    InvalidTerms,
    UnsupportedTerm,
    UnknownAccount,
    InsufficientFunds,
    ShareExceeded,
    FairUseExceeded,
    NotAuthenticated,
    SignatureInvalid,
    ServiceUnavailable,
    IdempotencyKeyReused,
  ].map((fault) => [new fault('').code, fault]),
);
