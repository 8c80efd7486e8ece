import type { AgreementReference, NegotiationOfferInfo, NegotiationReference, WsagClient } from '../../client/wsag-client.js';
import { negotiationOffer } from '../../xml/accepting-offer.js';
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
    'A broker\'s co-allocation (all or nothing). For every task in parallel: start a negotiation',
    'at that provider and send a Solicited offer made from the template. If every provider',
    'answers with an Acceptable (committing) offer, each is accepted with CreateAgreement and',
    'the agreements are printed. If any task is rejected or fails, every negotiation is',
    'terminated, so no provider keeps a hold, and the command exits 1 naming the task and why.',
    'If an accept fails after others succeeded, the agreements already created are terminated.',
  ],
  optionHelp: [
    '  --task URL=TEMPLATE[,LOCATION=VALUE...]',
    '                     one task: the provider\'s base URL, the template\'s Name or TemplateId',
    '                     there, then --set-style settings separated by commas; repeatable',
    jsonHelp,
  ],
  examples: [
    '  wsag coallocate --task http://site-a:8080=advance-reservation,NodeCount=16 \\',
    '                  --task http://site-b:8080=advance-reservation,NodeCount=32',
  ],
  options: { ...jsonOption, task: { type: 'string', multiple: true } },
  positionals: [],
  async run(args, ctx) {
    const tasks = args.list('task').map((t, i) => parseTask(t, i));
    if (tasks.length === 0) throw new UsageError('give at least one --task URL=TEMPLATE[,LOCATION=VALUE...]');
    const progress: Progress[] = tasks.map((task) => ({ task }));

    await Promise.all(progress.map((p) => solicit(p, ctx.client(p.task.url))));
    const refused = progress.filter((p) => p.failure !== undefined);
    if (refused.length > 0) {
      report(refused, ctx);
      await release(progress, ctx);
      return exitCodes.failed;
    }

    await Promise.all(progress.map((p) => accept(p, ctx.client(p.task.url))));
    const failed = progress.filter((p) => p.failure !== undefined);
    if (failed.length > 0) {
      report(failed, ctx);
      await release(progress, ctx);
      return exitCodes.failed;
    }

    const done = progress.map((p) => ({
      task: p.task.label,
      url: p.task.url,
      template: p.task.template,
      negotiationId: p.negotiation?.negotiationId,
      offerId: p.committing?.offerId,
      agreementId: p.agreement?.agreementId,
      address: p.agreement?.address,
      price: p.committing?.price,
    }));
    if (args.flag('json')) {
      printJson(ctx.out, { agreements: done });
      return exitCodes.ok;
    }
    ctx.out(`co-allocated ${done.length} task${done.length === 1 ? '' : 's'}: every provider agreed`);
    const rows = done.map((d) => [d.task, d.url, d.template, d.agreementId ?? '', money(d.price)]);
    for (const line of table(['TASK', 'PROVIDER', 'TEMPLATE', 'AGREEMENT', 'PRICE'], rows, '  ')) ctx.out(line);
    return exitCodes.ok;
  },
};

/** `URL=TEMPLATE[,LOCATION=VALUE...]`: the URL ends at the first `=`, settings are split at commas outside brackets and quotes. */
export function parseTask(text: string, index: number): Task {
  const at = text.indexOf('=');
  const url = (at < 0 ? '' : text.slice(0, at)).trim().replace(/\/+$/, '');
  if (!/^https?:\/\/[^/\s]+/.test(url)) throw new UsageError(`--task expects URL=TEMPLATE[,LOCATION=VALUE...] with an http(s) URL, got "${text}"`);
  const rest = text.slice(at + 1);
  const cuts = [-1, ...splitPoints(rest, ','), rest.length];
  const [template = '', ...settings] = cuts.slice(1).map((end, i) => rest.slice((cuts[i] as number) + 1, end).trim());
  if (!template) throw new UsageError(`--task ${text}: name a template after "${url}="`);
  return { label: `task ${index + 1}`, url, template, settings: settings.filter(Boolean).map((s) => parseSetting(s, `--task ${text}:`)) };
}

/** Phase one: a committing offer from the provider, which holds the capacity until it expires. */
async function solicit(p: Progress, client: WsagClient): Promise<void> {
  try {
    const { template, offer } = await templateOffer(client, p.task.template, p.task.settings);
    p.negotiation = await client.initiateNegotiation();
    const sent = negotiationOffer(offer, { offerId: newOfferId(), counterOfferTo: template.id, state: 'Solicited' });
    const answers = await client.negotiate(p.negotiation.negotiationId, [sent]);
    p.committing = answers.find((a) => a.state === 'Acceptable');
    if (!p.committing) p.failure = `rejected: ${answers.find((a) => a.state === 'Rejected')?.note ?? 'the provider gave no reason'}`;
  } catch (error) {
    p.failure = (error as Error).message;
  }
}

/** Phase two: the committing offer becomes an agreement. */
async function accept(p: Progress, client: WsagClient): Promise<void> {
  try {
    p.agreement = await acceptCounterOffer(client, p.negotiation as NegotiationReference, p.committing as NegotiationOfferInfo);
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
          undone[i] = `${p.task.label}: negotiation ${p.negotiation.negotiationId} terminated${p.committing ? ', hold released' : ''}`;
        }
      } catch (error) {
        const what = p.agreement ? `agreement ${p.agreement.agreementId}` : `negotiation ${p.negotiation?.negotiationId}`;
        failures++;
        ctx.err(`warning: ${p.task.label}: could not terminate ${what} at ${p.task.url}: ${(error as Error).message}`);
      }
    }),
  );
  const outcome = failures === 0 ? 'nothing is kept' : `${failures} cleanup${failures === 1 ? '' : 's'} failed (see the warnings; such a hold ends when its offer expires)`;
  const said = undone.filter(Boolean);
  ctx.err(`co-allocation abandoned, ${outcome}${said.length ? `: ${said.join('; ')}` : ''}`);
}
