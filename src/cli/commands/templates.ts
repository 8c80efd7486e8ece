import { jsonHelp, jsonOption, serverUrl, urlHelp, urlOption, type Command } from '../command.js';
import { printJson, table } from '../output.js';
import { settable, valuesInWords } from '../../xml/item-values.js';
import { describeConstraint, summarizeTemplate } from '../../xml/template-summary.js';

export const templatesCommand: Command = {
  name: 'templates',
  summary: 'list the agreement templates and the Items an offer may change',
  synopsis: 'wsag templates [--wide] [--xml] [--url URL] [--json]',
  description: [
    "Lists the AgreementFactory's templates: name, TemplateId, and each Item a value can set",
    "with its value in the template and the values it takes (a reservation's StartTime,",
    'EndTime and Duration among them). The names are what `wsag create --set ITEM=VALUE`',
    'accepts.',
  ],
  optionHelp: [
    "  --wide             add each Item's Location (the XPath it sets) and the constraints",
    '                     no value sets (the shape of the window or the node count)',
    '  --xml              print the template documents themselves',
    urlHelp,
    jsonHelp,
  ],
  options: { ...urlOption, ...jsonOption, xml: { type: 'boolean' }, wide: { type: 'boolean' } },
  positionals: [],
  async run(args, ctx) {
    const documents = await ctx.client(serverUrl(args, ctx.env)).templates();
    const templates = documents.map(summarizeTemplate);
    const xml = args.flag('xml');
    if (args.flag('json')) {
      printJson(
        ctx.out,
        templates.map(({ xml: document, ...t }) => (xml ? { ...t, xml: document } : t)),
      );
      return;
    }
    if (xml) {
      templates.forEach((t, i) => {
        if (i > 0) ctx.out('');
        ctx.out(t.xml);
      });
      return;
    }
    if (templates.length === 0) {
      ctx.out('the server offers no templates');
      return;
    }
    templates.forEach((t, i) => {
      if (i > 0) ctx.out('');
      ctx.out(`${t.name}  (TemplateId ${t.id})`);
      if (t.items.length === 0) {
        ctx.out('  no Items: offers must equal the template');
        return;
      }
      const wide = args.flag('wide');
      const items = t.items.filter((item) => wide || settable(item));
      const rows = items.map((item) => [
        item.name,
        item.value ?? '',
        settable(item) ? valuesInWords(item) : `not set by a value (${describeConstraint(item.constraint)})`,
        ...(wide ? [item.xpath] : []),
      ]);
      if (t.window) {
        const seconds = (Date.parse(t.window.end) - Date.parse(t.window.start)) / 1000;
        rows.push([
          'StartTime',
          t.window.start,
          'a date and time; the window keeps its length',
          ...(wide ? ['//arp:AllocationTimeConstraint/arp:StartTime'] : []),
        ]);
        rows.push([
          'EndTime',
          t.window.end,
          'a date and time after StartTime',
          ...(wide ? ['//arp:AllocationTimeConstraint/arp:EndTime'] : []),
        ]);
        // A template's own Duration Item bounds the length; the value sets EndTime.
        const bound = t.items.find((item) => item.name === 'Duration');
        const durationRow = [
          'Duration',
          String(seconds),
          `seconds: ${bound ? valuesInWords(bound) : 'a whole number'}, or PT2H; sets EndTime`,
          ...(wide ? ['(EndTime)'] : []),
        ];
        const at = rows.findIndex((r) => r[0] === 'Duration');
        if (at >= 0) rows.splice(at, 1);
        rows.push(durationRow);
      }
      for (const line of table(['ITEM', 'VALUE', 'VALUES', ...(wide ? ['LOCATION'] : [])], rows, '  ')) ctx.out(line);
    });
  },
};
