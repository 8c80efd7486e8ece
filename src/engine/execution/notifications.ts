import type { Agreement, AgreementState, GuaranteeTermStatus, ServiceTermStatus } from '../../domain/agreement.js';
import { isFinal } from '../../domain/agreement-state-machine.js';
import { MalformedMessage, UnknownResource } from '../../domain/errors.js';
import type { Caller } from '../../domain/identity.js';
import type { AgreementChange } from '../agreements/agreement-changes.js';
import type { AgreementService } from '../agreements/agreement-service.js';
import type { Clock, IdSource } from '../ports.js';
import type { Subscription, SubscriptionStore } from './ports.js';

/** What a subscriber receives (POST, application/json) on every change of an agreement's states. */
export interface StateNotification {
  agreementId: string;
  state: AgreementState;
  serviceTerms: ServiceTermStatus[];
  guaranteeTerms: GuaranteeTermStatus[];
  /** When the change was made (ISO 8601). */
  at: string;
  /**
   * A notice rather than a change: the lease (the reservation window) ends at `endsAt`
   * (src/engine/execution/lease-notices.ts).
   */
  notice?: { kind: 'lease-ending'; endsAt: string };
}

export interface NotificationServiceDeps {
  agreements: AgreementService;
  subscriptions: SubscriptionStore;
  ids: IdSource;
  clock: Clock;
  /** POSTs the notification; rejects when the subscriber did not answer 2xx. */
  send(url: string, notification: StateNotification): Promise<void>;
  /**
   * Refuses a callback URL the server may not call (its address's range); checked at registration, and by `send` at
   * each call.
   */
  checkUrl?(url: string): Promise<void>;
  /** Waits between attempts (a timer in the server, nothing in tests). */
  wait(ms: number): Promise<void>;
  /** Subscriptions one agreement may have. Default 5. */
  maxPerAgreement?: number;
  /** Attempts per notification, the first included. Default 4. */
  attempts?: number;
  /** The wait before the second attempt; it doubles for each further one. Default 1000 ms. */
  backoffMs?: number;
  /** A failed attempt (`final`: the notification is given up). */
  onFailure?(subscription: Subscription, error: unknown, final: boolean): void;
  /** Anything else that went wrong (reading or removing subscriptions). */
  onError?(error: unknown): void;
}

/**
 * Notifications of state changes: an agreement's owner registers HTTP callbacks,
 * and every change of its agreement state, service term states or guarantee term states is
 * POSTed to each, in order, with retries and backoff. Delivery never delays the change: it
 * runs on its own, and a subscriber that stays unreachable is only logged. Polling AgreementState
 * (WS-Agreement GetResourcePropertyDocument) shows the same states.
 */
export class NotificationService {
  private readonly deliveries = new Set<Promise<void>>();
  private readonly chains = new Map<string, Promise<void>>();

  constructor(private readonly deps: NotificationServiceDeps) {}

  async subscribe(agreementId: string, url: unknown, caller: Caller): Promise<Subscription> {
    await this.deps.agreements.get(agreementId, caller);
    const target = callbackUrl(url);
    await this.deps.checkUrl?.(target);
    const existing = await this.deps.subscriptions.list(agreementId);
    const same = existing.find((s) => s.url === target);
    if (same) return same;
    const max = this.deps.maxPerAgreement ?? 5;
    if (existing.length >= max) {
      throw new MalformedMessage(
        `agreement "${agreementId}" has ${existing.length} subscriptions already, the most it may have; ` +
          `remove one first (DELETE /api/agreements/${agreementId}/subscriptions/ID)`,
      );
    }
    const subscription: Subscription = {
      id: this.deps.ids.next(),
      agreementId,
      url: target,
      subscriber: caller.identity,
      createdAt: this.deps.clock.now(),
    };
    await this.deps.subscriptions.add(subscription);
    return subscription;
  }

  async list(agreementId: string, caller: Caller): Promise<Subscription[]> {
    await this.deps.agreements.get(agreementId, caller);
    return this.deps.subscriptions.list(agreementId);
  }

  async unsubscribe(agreementId: string, subscriptionId: string, caller: Caller): Promise<void> {
    await this.deps.agreements.get(agreementId, caller);
    const found = (await this.deps.subscriptions.list(agreementId)).some((s) => s.id === subscriptionId);
    if (!found) throw new UnknownResource(`agreement "${agreementId}" has no subscription "${subscriptionId}"`);
    await this.deps.subscriptions.remove([subscriptionId]);
  }

  /** Follows every stored change (ObservedAgreementRepository); only changes of a state are sent. */
  agreementChanged({ before, after }: AgreementChange): void {
    if (before && statesOf(before) === statesOf(after)) return;
    this.track(this.notify(after));
  }

  /** The notice that the agreement's lease ends at `endsAt`, to every subscriber. */
  leaseEnding(agreement: Agreement, endsAt: Date): void {
    this.track(this.notify(agreement, { kind: 'lease-ending', endsAt: endsAt.toISOString() }));
  }

  /** Resolves once every delivery under way has succeeded or been given up (tests; shutdown). */
  async idle(): Promise<void> {
    while (this.deliveries.size > 0) await Promise.all([...this.deliveries]);
  }

  private async notify(agreement: Agreement, notice?: StateNotification['notice']): Promise<void> {
    const subscriptions = await this.deps.subscriptions.list(agreement.id);
    if (subscriptions.length === 0) return;
    const notification: StateNotification = {
      agreementId: agreement.id,
      state: agreement.state,
      serviceTerms: agreement.serviceTerms.map((t) => ({ ...t })),
      guaranteeTerms: agreement.guaranteeTerms.map((t) => ({ ...t })),
      at: notice ? this.deps.clock.now().toISOString() : agreement.updatedAt.toISOString(),
      ...(notice ? { notice } : {}),
    };
    for (const subscription of subscriptions) {
      // In order per subscriber: a notification waits for the one before it (delivered or given up).
      const previous = this.chains.get(subscription.id) ?? Promise.resolve();
      const next = previous.then(() => this.deliver(subscription, notification));
      this.chains.set(subscription.id, next);
      this.track(next);
      void next.finally(() => {
        if (this.chains.get(subscription.id) === next) this.chains.delete(subscription.id);
      });
    }
    // Nothing changes after a final state: the subscriptions have served their purpose.
    if (!notice && isFinal(agreement.state)) await this.deps.subscriptions.remove(subscriptions.map((s) => s.id));
  }

  private async deliver(subscription: Subscription, notification: StateNotification): Promise<void> {
    const attempts = Math.max(1, this.deps.attempts ?? 4);
    let wait = this.deps.backoffMs ?? 1000;
    for (let attempt = 1; attempt <= attempts; attempt++) {
      try {
        await this.deps.send(subscription.url, notification);
        return;
      } catch (error) {
        this.deps.onFailure?.(subscription, error, attempt === attempts);
      }
      if (attempt < attempts) {
        await this.deps.wait(wait);
        wait *= 2;
      }
    }
  }

  private track(work: Promise<void>): void {
    const tracked = work.catch((error: unknown) => this.deps.onError?.(error));
    this.deliveries.add(tracked);
    void tracked.finally(() => this.deliveries.delete(tracked));
  }
}

/** The three kinds of state in one string, to see whether any changed. */
function statesOf(a: Agreement): string {
  return JSON.stringify([a.state, a.serviceTerms, a.guaranteeTerms]);
}

/** An http(s) URL without credentials, as the subscriber gave it. */
function callbackUrl(value: unknown): string {
  if (typeof value !== 'string' || value.trim() === '')
    throw new MalformedMessage('send { "url": "http(s)://..." }: the URL notifications are POSTed to');
  let url: URL;
  try {
    url = new URL(value.trim());
  } catch {
    throw new MalformedMessage(`url "${value}" is not a URL; send an http(s) URL`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw new MalformedMessage(`url "${value}" must be http or https, not ${url.protocol.replace(/:$/, '')}`);
  if (url.username || url.password) throw new MalformedMessage('the callback url must not carry credentials');
  return url.toString();
}
