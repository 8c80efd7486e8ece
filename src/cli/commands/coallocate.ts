import type {
  AgreementReference,
  NegotiationOfferInfo,
  NegotiationReference,
  WsagClient,
} from '../../client/wsag-client.js';
import {
  NoCommonStart,
  searchCommonStart,
  type CommonStart,
  type EarliestStart,
} from '../../client/coallocation-search.js';
import { isoTime } from '../../domain/time.js';
import { negotiationOffer } from '../../xml/accepting-offer.js';
import { windowStart, withWindowStart } from '../../xml/offer-window.js';
import type { OfferSetting } from '../../xml/offer-from-template.js';
import { jsonHelp, jsonOption, type Command } from '../command.js';
import type { CommandContext } from '../context.js';
import { exitCodes, UsageError } from '../errors.js';
import { acceptCounterOffer, newOfferId } from '../negotiation.js';
import { parseSetting, splitPoints, templateOffer } from '../offer-input.js';
import { money, printJson, table } from '../output.js';

/** One --task: a provider, a template there, and the settings of the offer. */
interface Task {
  label: string;
  url: string;
  template: string;
  settings: OfferSetting[];
}

/** How far one task got; `negotiation` is set as soon as it exists, so it can be ended whatever fails later. */
interface Progress {
  task: Task;
  /** The offer made from the template, and the template's id (what the offers counter). */
  offer?: string;
  templateId?: string;
  /** When the offer's reservation window starts (tasks with a window are searched for a common start). */
  windowStart?: Date;
  negotiation?: NegotiationReference;
  committing?: NegotiationOfferInfo;
  agreement?: AgreementReference;
  failure?: string;
}

export const coallocateCommand: Command = {
  name: 'coallocate',
  summary: 'agreements with several providers at once, all or nothing',
  synopsis: 'wsag coallocate --task URL=TEMPLATE[,LOCATION=VALUE...] --task ... [--json]',
  description: [
    "A broker's co-allocation (all or nothing). Every task gets a negotiation at its provider.",
    'Tasks with a reservation window (arp:StartTime) must start together: the command first',
    'searches for the earliest common start, asking every provider for Advisory start slots at',
    'or after a candidate time and moving the candidate to the latest earliest start, round by',
    "round, until all agree (nothing is held while searching). Then each task's offer, its",
    'window moved to that start, is Solicited at its provider. If every provider answers with',
    'an Acceptable (committing) offer, each is accepted with CreateAgreement and the agreements',
    'are printed with the common start and how many rounds and how long the search took. If',
    'any task is rejected or fails, every negotiation is terminated, so no provider keeps a',
    'hold, and the command exits 1 naming the task and why. If an accept fails after others',
    'succeeded, the agreements already created are terminated.',
  ],
  optionHelp: [
    '  --task URL=TEMPLATE[,LOCATION=VALUE...]',
    "                     one task: the provider's base URL, the template's Name or TemplateId",
    '                     there, then --set-style settings separated by commas; repeatable',
    '  --max-rounds N     Advisory rounds the search for a common start may take (default 10)',
    '  --no-search        solicit each window as written (fails if a provider cannot serve it)',
    jsonHelp,
  ],
  examples: [
    '  wsag coallocate --task http://site-a:8080=advance-reservation,NodeCount=16 \\',
    '                  --task http://site-b:8080=advance-reservation,NodeCount=32',
  ],
  options: {
    ...jsonOption,
    task: { type: 'string', multiple: true },
    'max-rounds': { type: 'string' },
    'no-search': { type: 'boolean' },
  },
  positionals: [],
  async run(args, ctx) {
    const tasks = args.list('task').map((t, i) => parseTask(t, i));
    if (tasks.length === 0) throw new UsageError('give at least one --task URL=TEMPLATE[,LOCATION=VALUE...]');
    const maxRounds = Number(args.string('max-rounds') ?? 10);
    if (!Number.isInteger(maxRounds) || maxRounds < 1 || maxRounds > 100)
      throw new UsageError(`--max-rounds expects a whole number from 1 to 100, got "${args.string('max-rounds')}"`);
    const progress: Progress[] = tasks.map((task) => ({ task }));
    const abandon = async (failed: Progress[]): Promise<number> => {
      report(failed, ctx);
      await release(progress, ctx);
      return exitCodes.failed;
    };

    await Promise.all(progress.map((p) => prepare(p, ctx.client(p.task.url))));
    let failed = progress.filter((p) => p.failure !== undefined);
    if (failed.length > 0) return abandon(failed);

    const started = Date.now();
    let search: (CommonStart & { milliseconds: number }) | undefined;
    const windowed = progress.filter((p) => p.windowStart !== undefined);
    if (windowed.length > 0 && !args.flag('no-search')) {
      const from = new Date(Math.max(...windowed.map((p) => (p.windowStart as Date).getTime())));
      try {
        const found = await searchCommonStart(
          windowed.map((p) => earliestStart(p, ctx.client(p.task.url))),
          from,
          maxRounds,
        );
        search = { ...found, milliseconds: Date.now() - started };
      } catch (error) {
        if (!(error instanceof NoCommonStart)) return abandon(progress.filter((p) => p.failure !== undefined));
        ctx.err(`error: ${error.message}`);
        await release(progress, ctx);
        return exitCodes.failed;
      }
      for (const p of windowed) p.offer = withWindowStart(p.offer as string, search.start);
    }

    await Promise.all(progress.map((p) => solicit(p, ctx.client(p.task.url))));
    failed = progress.filter((p) => p.failure !== undefined);
    if (failed.length > 0) return abandon(failed);

    await Promise.all(progress.map((p) => accept(p, ctx.client(p.task.url))));
    failed = progress.filter((p) => p.failure !== undefined);
    if (failed.length > 0) return abandon(failed);

    const done = progress.map((p) => ({
      task: p.task.label,
      url: p.task.url,
      template: p.task.template,
      negotiationId: p.negotiation?.negotiationId,
      offerId: p.committing?.offerId,
      agreementId: p.agreement?.agreementId,
      address: p.agreement?.address,
      price: p.committing?.price,
      slot: p.committing?.slot,
    }));
    const searched = search && {
      start: isoTime(search.start),
      rounds: search.rounds,
      milliseconds: search.milliseconds,
    };
    if (args.flag('json')) {
      printJson(ctx.out, { agreements: done, ...(searched ? { search: searched } : {}) });
      return exitCodes.ok;
    }
    ctx.out(`co-allocated ${done.length} task${done.length === 1 ? '' : 's'}: every provider agreed`);
    const rows = done.map((d) => [d.task, d.url, d.template, d.agreementId ?? '', money(d.price)]);
    for (const line of table(['TASK', 'PROVIDER', 'TEMPLATE', 'AGREEMENT', 'PRICE'], rows, '  ')) ctx.out(line);
    if (searched)
      ctx.out(
        `common start ${searched.start}: found in ${searched.rounds} Advisory round` +
          `${searched.rounds === 1 ? '' : 's'} (${searched.milliseconds} ms)`,
      );
    return exitCodes.ok;
  },
};

/**
 * `URL=TEMPLATE[,LOCATION=VALUE...]`: the URL ends at the first `=`, settings are split at commas outside brackets and
 * quotes.
 */
export function parseTask(text: string, index: number): Task {
  const at = text.indexOf('=');
  const url = (at < 0 ? '' : text.slice(0, at)).trim().replace(/\/+$/, '');
  if (!/^https?:\/\/[^/\s]+/.test(url))
    throw new UsageError(`--task expects URL=TEMPLATE[,LOCATION=VALUE...] with an http(s) URL, got "${text}"`);
  const rest = text.slice(at + 1);
  const cuts = [-1, ...splitPoints(rest, ','), rest.length];
  const [template = '', ...settings] = cuts.slice(1).map((end, i) => rest.slice((cuts[i] as number) + 1, end).trim());
  if (!template) throw new UsageError(`--task ${text}: name a template after "${url}="`);
  return {
    label: `task ${index + 1}`,
    url,
    template,
    settings: settings.filter(Boolean).map((s) => parseSetting(s, `--task ${text}:`)),
  };
}

/** The offer from the template, and a negotiation to send it in. */
async function prepare(p: Progress, client: WsagClient): Promise<void> {
  try {
    const { template, offer } = await templateOffer(client, p.task.template, p.task.settings);
    p.offer = offer;
    p.templateId = template.id;
    p.windowStart = windowStart(offer);
    p.negotiation = await client.initiateNegotiation();
  } catch (error) {
    p.failure = (error as Error).message;
  }
}

/** The task's earliest start at or after `from`: its first Advisory slot for the window moved there. */
function earliestStart(p: Progress, client: WsagClient): EarliestStart {
  return async (from) => {
    try {
      const sent = negotiationOffer(withWindowStart(p.offer as string, from), {
        offerId: newOfferId(),
        counterOfferTo: p.templateId as string,
        state: 'Advisory',
      });
      const answers = await client.negotiate((p.negotiation as NegotiationReference).negotiationId, [sent]);
      const starts = answers.flatMap((a) =>
        a.state === 'Advisory' && a.slot ? [new Date(a.slot.start).getTime()] : [],
      );
      if (starts.length === 0)
        throw new Error(
          `no start slot at or after ${isoTime(from)}: ` +
            `${answers.find((a) => a.state === 'Rejected')?.note ?? 'the provider gave no reason'}`,
        );
      return new Date(Math.min(...starts));
    } catch (error) {
      p.failure = (error as Error).message;
      throw error;
    }
  };
}

/** A committing offer from the provider, which holds the capacity until it expires. */
async function solicit(p: Progress, client: WsagClient): Promise<void> {
  try {
    const sent = negotiationOffer(p.offer as string, {
      offerId: newOfferId(),
      counterOfferTo: p.templateId as string,
      state: 'Solicited',
    });
    const answers = await client.negotiate((p.negotiation as NegotiationReference).negotiationId, [sent]);
    p.committing = answers.find((a) => a.state === 'Acceptable');
    if (!p.committing)
      p.failure = `rejected: ${answers.find((a) => a.state === 'Rejected')?.note ?? 'the provider gave no reason'}`;
  } catch (error) {
    p.failure = (error as Error).message;
  }
}

/** The committing offer becomes an agreement. */
async function accept(p: Progress, client: WsagClient): Promise<void> {
  try {
    p.agreement = await acceptCounterOffer(
      client,
      p.negotiation as NegotiationReference,
      p.committing as NegotiationOfferInfo,
    );
  } catch (error) {
    p.failure = `accepting offer ${p.committing?.offerId} failed: ${(error as Error).message}`;
  }
}

function report(failed: Progress[], ctx: CommandContext): void {
  for (const p of failed) ctx.err(`error: ${p.task.label} (${p.task.template} at ${p.task.url}): ${p.failure}`);
}

/**
 * All or nothing: terminates the agreements already created and every negotiation still
 * open, which releases its hold. A cleanup that fails is said, not hidden: that hold
 * lasts until its offer expires.
 */
async function release(progress: Progress[], ctx: CommandContext): Promise<void> {
  const undone: string[] = []; // by task, whatever order the calls finish in
  let failures = 0;
  await Promise.all(
    progress.map(async (p, i) => {
      const client = ctx.client(p.task.url);
      try {
        if (p.agreement) {
          await client.terminate(p.agreement.agreementId, 'co-allocation failed: another task could not be agreed');
          undone[i] = `${p.task.label}: agreement ${p.agreement.agreementId} terminated`;
        } else if (p.negotiation) {
          await client.terminateNegotiation(p.negotiation.negotiationId);
          undone[i] =
            `${p.task.label}: negotiation ${p.negotiation.negotiationId} terminated` +
            `${p.committing ? ', hold released' : ''}`;
        }
      } catch (error) {
        const what = p.agreement
          ? `agreement ${p.agreement.agreementId}`
          : `negotiation ${p.negotiation?.negotiationId}`;
        failures++;
        ctx.err(`warning: ${p.task.label}: could not terminate ${what} at ${p.task.url}: ${(error as Error).message}`);
      }
    }),
  );
  const outcome =
    failures === 0
      ? 'nothing is kept'
      : `${failures} cleanup${failures === 1 ? '' : 's'} failed (see the warnings; such a hold ends when its ` +
        `offer expires)`;
  const said = undone.filter(Boolean);
  ctx.err(`co-allocation abandoned, ${outcome}${said.length ? `: ${said.join('; ')}` : ''}`);
}
