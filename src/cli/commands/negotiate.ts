import type { NegotiationOfferInfo, NegotiationReference, WsagClient } from '../../client/wsag-client.js';
import { negotiationOffer, type InitiatorOfferState } from '../../xml/accepting-offer.js';
import { jsonHelp, jsonOption, serverUrl, urlHelp, urlOption, type Command } from '../command.js';
import type { Args, CommandContext } from '../context.js';
import { exitCodes, UsageError } from '../errors.js';
import { negotiationIdOf } from '../../domain/negotiation.js';
import { acceptCounterOffer, findNegotiationOffer, negotiationAt, newOfferId, slotOf } from '../negotiation.js';
import {
  additionsOf,
  offerOptions,
  parseSetting,
  runHelp,
  setHelp,
  templateHelp,
  templateOffer,
} from '../offer-input.js';
import { money, printJson, shortTime, table } from '../output.js';
import { summarizeTemplate } from '../../xml/template-summary.js';

type Mode = 'advisory' | 'solicit' | 'accept' | 'terminate';
const modes: Mode[] = ['advisory', 'solicit', 'accept', 'terminate'];

export const negotiateCommand: Command = {
  name: 'negotiate',
  summary: 'negotiate an agreement: start slots, a committing offer, accept it',
  synopsis:
    'wsag negotiate (--advisory | --solicit | --accept OFFER_ID | --terminate) [--template NAME] [--set ' +
    'LOCATION=VALUE ...] [--run EXECUTABLE ...] [--account ACCOUNT] [--negotiation ID] [--counter OFFER_ID] ' +
    '[--url URL] [--json]',
  description: [
    'WS-Agreement Negotiation in three steps (see docs/cli.md):',
    '  --advisory         ask for start slots (non-binding; nothing is reserved). Starts a',
    '                     negotiation unless --negotiation is given, and prints its id and the',
    '                     slots: offer id, start, end, nodes, price',
    '  --solicit          ask for a committing offer: the provider answers Acceptable, holding',
    '                     the capacity until the offer expires (a preparatory fee is charged if',
    '                     it is not accepted), or Rejected with the reason (exit 1)',
    '  --accept OFFER_ID  accept the committing offer OFFER_ID (the id names its negotiation):',
    '                     sends CreateAgreement with its terms and prints the agreement id',
    '  --terminate        end --negotiation ID; its holds are released',
    'The offer is the template (--template, --set) or, with --counter and no --template, the',
    'terms of the countered offer unchanged (solicit a slot as advised). On a terminal, without',
    'any of the four, it walks you through: slots, pick one, its committing offer, accept y/n.',
  ],
  optionHelp: [
    '  --advisory, --solicit, --accept OFFER_ID, --terminate',
    '                     what to do (one of them; see above)',
    templateHelp,
    ...setHelp,
    ...runHelp,
    '  --negotiation ID   continue this negotiation (default for --advisory/--solicit: start one)',
    '  --counter OFFER_ID the offer this one answers (default: the template, for a first offer)',
    urlHelp,
    jsonHelp,
  ],
  examples: [
    '  wsag negotiate --template advance-reservation --set NodeCount=16 --advisory',
    '  wsag negotiate --negotiation <NID> --solicit --counter <OFFER>   # solicit a slot as advised',
    '  wsag negotiate --negotiation <NID> --terminate                   # or walk away: its hold is freed',
    '  wsag negotiate --template deadline-job --solicit                 # a committing offer right away',
    '  wsag negotiate --accept <OFFER>                                  # the hold becomes an agreement',
    '  wsag negotiate                                                   # interactive, on a terminal',
  ],
  options: {
    ...urlOption,
    ...jsonOption,
    ...offerOptions,
    advisory: { type: 'boolean' },
    solicit: { type: 'boolean' },
    accept: { type: 'string' },
    terminate: { type: 'boolean' },
    negotiation: { type: 'string' },
    counter: { type: 'string' },
  },
  positionals: [],
  async run(args, ctx) {
    const chosen = modes.filter((m) => (m === 'accept' ? args.string(m) !== undefined : args.flag(m)));
    if (chosen.length > 1)
      throw new UsageError(
        `choose one of --advisory, --solicit, --accept, --terminate; got ${chosen.map((m) => `--${m}`).join(' and ')}`,
      );
    const url = serverUrl(args, ctx.env);
    const client = ctx.client(url);
    const mode = chosen[0];
    if (mode === undefined) {
      if (!ctx.prompt)
        throw new UsageError(
          'choose one of --advisory, --solicit, --accept OFFER_ID, --terminate (or run it on a terminal to be ' +
            'walked through)',
        );
      return walk(client, url, args, ctx, ctx.prompt);
    }
    if (mode === 'accept' || mode === 'terminate') {
      // An offer's id names its negotiation (NEGOTIATION-N): --accept needs nothing more.
      const offerId = args.string('accept');
      const id = args.string('negotiation') ?? (offerId?.includes('-') ? negotiationIdOf(offerId) : undefined);
      if (!id)
        throw new UsageError(
          mode === 'accept'
            ? '--accept needs an offer id of the form NEGOTIATION-N, or --negotiation ID'
            : '--terminate needs --negotiation ID',
        );
      return mode === 'accept'
        ? accept(client, negotiationAt(url, id), args.string('accept') as string, args, ctx)
        : terminate(client, id, args, ctx);
    }
    const state = mode === 'advisory' ? 'Advisory' : 'Solicited';
    const { offer, counterOfferTo } = await offerToSend(client, args);
    const existing = args.string('negotiation');
    const negotiation = existing ? negotiationAt(url, existing) : await client.initiateNegotiation();
    const answers = await send(client, negotiation, offer, counterOfferTo, state);
    return mode === 'advisory'
      ? showSlots(negotiation, answers, args, ctx)
      : showCommitting(negotiation, answers, args, ctx);
  },
};

/** The terms to send and the offer they answer: the template's, or the countered offer's own. */
async function offerToSend(client: WsagClient, args: Args): Promise<{ offer: string; counterOfferTo: string }> {
  const ref = args.string('template');
  const counter = args.string('counter');
  const negotiationId = args.string('negotiation');
  if (counter !== undefined && !negotiationId)
    throw new UsageError('--counter needs --negotiation ID: offer ids belong to a negotiation');
  if (ref) {
    const { template, offer } = await templateOffer(
      client,
      ref,
      args.list('set').map((s) => parseSetting(s)),
      additionsOf(args),
    );
    return { offer, counterOfferTo: counter ?? template.id };
  }
  if (counter === undefined)
    throw new UsageError(
      "--template NAME is required (or --negotiation ID --counter OFFER_ID, to send that offer's terms)",
    );
  if (args.list('set').length > 0)
    throw new UsageError("--set needs --template: without it the countered offer's terms are sent unchanged");
  if (args.string('run') !== undefined || args.string('account') !== undefined)
    throw new UsageError(
      "--run and --account need --template: without it the countered offer's terms are sent unchanged",
    );
  return { offer: (await findNegotiationOffer(client, negotiationId as string, counter)).xml, counterOfferTo: counter };
}

function send(
  client: WsagClient,
  negotiation: NegotiationReference,
  offer: string,
  counterOfferTo: string,
  state: InitiatorOfferState,
) {
  return client.negotiate(negotiation.negotiationId, [
    negotiationOffer(offer, { offerId: newOfferId(), counterOfferTo, state }),
  ]);
}

function showSlots(
  negotiation: NegotiationReference,
  answers: NegotiationOfferInfo[],
  args: Args,
  ctx: CommandContext,
  hint = true,
): number {
  const slots = answers.filter((a) => a.state === 'Advisory');
  if (slots.length === 0) return rejected(negotiation, answers, ctx);
  const rows = slots.map((s) => ({ offerId: s.offerId, ...slotOf(s), price: s.price, note: s.note }));
  if (args.flag('json')) {
    printJson(ctx.out, { ...negotiation, slots: rows });
    return exitCodes.ok;
  }
  ctx.out(
    `negotiation ${negotiation.negotiationId}: ${slots.length} start slot${slots.length === 1 ? '' : 's'} ` +
      `(nothing is reserved yet)`,
  );
  const cells = rows.map((r) => [
    r.offerId,
    shortTime(r.start),
    shortTime(r.end),
    r.nodes === undefined ? '' : String(r.nodes),
    money(r.price),
  ]);
  for (const line of table(['OFFER', 'START', 'END', 'NODES', 'PRICE'], cells, '  ')) ctx.out(line);
  if (hint)
    ctx.out(
      `solicit one with: wsag negotiate --negotiation ${negotiation.negotiationId} --solicit --counter ` +
        `${slots[0]?.offerId}`,
    );
  return exitCodes.ok;
}

async function showCommitting(
  negotiation: NegotiationReference,
  answers: NegotiationOfferInfo[],
  args: Args,
  ctx: CommandContext,
): Promise<number> {
  const committing = answers.find((a) => a.state === 'Acceptable');
  if (!committing) return rejected(negotiation, answers, ctx);
  if (args.flag('json')) {
    const { xml: _xml, ...offer } = committing;
    printJson(ctx.out, { ...negotiation, offer });
    return exitCodes.ok;
  }
  describeCommitting(committing, negotiation, ctx);
  ctx.out(`accept it with: wsag negotiate --negotiation ${negotiation.negotiationId} --accept ${committing.offerId}`);
  return exitCodes.ok;
}

function describeCommitting(offer: NegotiationOfferInfo, negotiation: NegotiationReference, ctx: CommandContext): void {
  ctx.out(`committing offer ${offer.offerId} (negotiation ${negotiation.negotiationId}): Acceptable`);
  const rows = [
    ['expires', `${shortTime(offer.expirationTime)}  (accept it before then)`],
    ['price', money(offer.price)],
    ['fee', `${money(offer.fee)}  (preparatory fee: charged if the offer is not accepted)`],
  ];
  if (offer.slot)
    rows.push([
      'hold',
      `${offer.slot.nodes} nodes from ${shortTime(offer.slot.start)} to ${shortTime(offer.slot.end)}`,
    ]);
  for (const line of table(undefined, rows, '  ')) ctx.out(line);
}

/**
 * A Rejected answer is a refusal, reported like one (exit 1); the negotiation stays open.
 * The provider's Advisory counter-offers (terms it could serve instead) are listed after it.
 */
function rejected(negotiation: NegotiationReference, answers: NegotiationOfferInfo[], ctx: CommandContext): number {
  const reason = answers.find((a) => a.state === 'Rejected')?.note ?? 'the provider gave no reason';
  ctx.err(`error: rejected: ${reason}`);
  ctx.err(
    `negotiation ${negotiation.negotiationId} stays open: send other terms with --negotiation ` +
      `${negotiation.negotiationId}, or end it with --terminate`,
  );
  const counterOffers = answers.filter((a) => a.state === 'Advisory');
  for (const c of counterOffers)
    ctx.err(`  counter-offer ${c.offerId}: ${c.note ?? ''}${c.price ? ` (${money(c.price)})` : ''}`);
  if (counterOffers[0])
    ctx.err(
      `solicit one with: wsag negotiate --negotiation ${negotiation.negotiationId} --solicit --counter ` +
        `${counterOffers[0].offerId}`,
    );
  return exitCodes.failed;
}

async function accept(
  client: WsagClient,
  negotiation: NegotiationReference,
  offerId: string,
  args: Args,
  ctx: CommandContext,
): Promise<number> {
  const offer = await findNegotiationOffer(client, negotiation.negotiationId, offerId);
  const created = await acceptCounterOffer(client, negotiation, offer);
  if (args.flag('json')) {
    printJson(ctx.out, {
      agreementId: created.agreementId,
      address: created.address,
      negotiationId: negotiation.negotiationId,
      offerId,
    });
    return exitCodes.ok;
  }
  ctx.out(
    `created agreement ${created.agreementId} (accepted offer ${offerId} of negotiation ${negotiation.negotiationId})`,
  );
  ctx.out(`  EPR  ${created.address}  (AgreementId ${created.agreementId})`);
  ctx.out(`see its state with: wsag state ${created.agreementId}`);
  return exitCodes.ok;
}

async function terminate(client: WsagClient, negotiationId: string, args: Args, ctx: CommandContext): Promise<number> {
  await client.terminateNegotiation(negotiationId);
  if (args.flag('json')) printJson(ctx.out, { negotiationId, state: 'Terminated' });
  else ctx.out(`negotiation ${negotiationId}: Terminated (its holds are released)`);
  return exitCodes.ok;
}

/** The interactive walk: template, advisory slots, pick one, its committing offer, accept y/n. */
async function walk(
  client: WsagClient,
  url: string,
  args: Args,
  ctx: CommandContext,
  prompt: (q: string) => Promise<string | undefined>,
): Promise<number> {
  let ref = args.string('template');
  if (!ref) {
    const templates = (await client.templates()).map(summarizeTemplate);
    templates.forEach((t, i) => ctx.out(`  ${i + 1}  ${t.name}  (TemplateId ${t.id})`));
    const answer = (await prompt(`template [1-${templates.length}]: `))?.trim();
    ref = templates[Number(answer) - 1]?.name ?? answer;
    if (!ref) return exitCodes.ok;
  }
  const { template, offer } = await templateOffer(
    client,
    ref,
    args.list('set').map((s) => parseSetting(s)),
    additionsOf(args),
  );
  const existing = args.string('negotiation');
  const negotiation = existing ? negotiationAt(url, existing) : await client.initiateNegotiation();
  const advice = await send(client, negotiation, offer, args.string('counter') ?? template.id, 'Advisory');
  if (showSlots(negotiation, advice, args, ctx, false) !== exitCodes.ok) return exitCodes.failed;
  const slots = advice.filter((a) => a.state === 'Advisory');
  const end = async (why: string): Promise<number> => {
    await client.terminateNegotiation(negotiation.negotiationId);
    ctx.out(`${why}: negotiation ${negotiation.negotiationId} terminated, nothing is held`);
    return exitCodes.ok;
  };
  for (;;) {
    const answer = (await prompt(`solicit which slot? [1-${slots.length}, q to quit]: `))?.trim();
    if (answer === undefined || answer === 'q') return end('stopped');
    const slot = slots[Number(answer) - 1];
    if (!slot) {
      ctx.err(`no slot "${answer}": answer a number from 1 to ${slots.length}, or q`);
      continue;
    }
    const answers = await send(client, negotiation, slot.xml, slot.offerId, 'Solicited');
    const committing = answers.find((a) => a.state === 'Acceptable');
    if (!committing) {
      ctx.out(`rejected: ${answers.find((a) => a.state === 'Rejected')?.note ?? 'no reason given'}; pick another slot`);
      continue;
    }
    describeCommitting(committing, negotiation, ctx);
    const yes = (await prompt('accept it? [y/N]: '))?.trim().toLowerCase();
    if (yes !== 'y' && yes !== 'yes') return end('not accepted');
    return accept(client, negotiation, committing.offerId, args, ctx);
  }
}
