import { jsonHelp, jsonOption, serverUrl, urlHelp, urlOption, type Command } from '../command.js';
import { printJson, table } from '../output.js';
import { describeConstraint, summarizeTemplate } from '../template-summary.js';

export const templatesCommand: Command = {
  name: 'templates',
  summary: 'list the agreement templates and the Items an offer may change',
  synopsis: 'wsag templates [--xml] [--url URL] [--json]',
  description: [
    'Lists the AgreementFactory\'s templates: name, TemplateId, and each creation-constraint',
    'Item with its value in the template, its constraint and its Location. Item names are',
    'what `wsag create --set ITEM=VALUE` accepts.',
  ],
  optionHelp: [
    '  --xml              print the template documents themselves',
    urlHelp,
    jsonHelp,
  ],
  options: { ...urlOption, ...jsonOption, xml: { type: 'boolean' } },
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
      const rows = t.items.map((item) => [item.name, item.value ?? '', describeConstraint(item.constraint), item.xpath]);
      for (const line of table(['ITEM', 'VALUE', 'CONSTRAINT', 'LOCATION'], rows, '  ')) ctx.out(line);
    });
  },
};
