import type { WsagClient } from '../src/client/wsag-client.js';
import { plainEnvelope } from '../src/client/soap-requests.js';
import { negotiationOffer } from '../src/xml/accepting-offer.js';
import { ns } from '../src/xml/namespaces.js';
import { offerFromTemplate } from '../src/xml/offer-from-template.js';

/**
 * How far ahead the benchmark jobs' deadline lies. A one-node job of an hour is planned with
 * its checkpoints and room for an outage, and the template's six hours fit about four a node:
 * some 16,000 on the benchmarks' 4,096 nodes, which a 10 s run at 1,400 creates a second
 * (with its warm-up) went past, and the rest were refused. A day fits four times as many.
 */
const DEADLINE_HOURS = 24;

/** The offer the benchmarks make: a one-node deadline job from the server's own template, as a broker places a workflow's tasks. */
export async function oneNodeJobOffer(client: WsagClient): Promise<string> {
  return oneNodeJobOfferFrom((await client.templates()).find((t) => t.includes('deadline-job-v1')) as string);
}

/** The same offer from the deadline-job template as served (its time tokens rendered). */
export function oneNodeJobOfferFrom(template: string): string {
  const deadline = new Date(Math.ceil(Date.now() / 1000) * 1000 + DEADLINE_HOURS * 3600_000)
    .toISOString()
    .replace('.000Z', 'Z');
  return offerFromTemplate(template, [
    { location: 'NodeCount', value: '1' },
    { location: '//sla:ServiceLevel/sla:Deadline', value: deadline },
    { location: '//sla:CompletedBy', value: deadline },
  ]);
}

/** A CreateAgreement request's envelope for `offer`. */
export const createBody = (offer: string): string =>
  plainEnvelope(`<wsag:CreateAgreementInput xmlns:wsag="${ns.wsag}">${offer}</wsag:CreateAgreementInput>`);

/** A Negotiate request's Body sending `offer` as a Solicited counter-offer to the deadline-job template. */
export const solicitedNegotiateInput = (offer: string): string =>
  `<wsag-neg:NegotiateInput xmlns:wsag-neg="${ns.wsagNeg}">${negotiationOffer(offer, { counterOfferTo: 'deadline-job-v1', state: 'Solicited' })}</wsag-neg:NegotiateInput>`;
