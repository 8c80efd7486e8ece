import { jsonHelp, jsonOption, serverUrl, urlHelp, urlOption, type Command } from '../command.js';
import { clientTls } from '../client-tls.js';
import { CliError, UsageError } from '../errors.js';
import { printJson } from '../output.js';

export const countersignCommand: Command = {
  name: 'countersign',
  summary: 'sign an agreement as its initiator, after the provider (over HTTPS)',
  synopsis: 'wsag countersign ID [--url https://HOST:PORT] [--json]',
  description: [
    "Fetches the agreement document, checks the provider's signature against the CAs in",
    'WSAG_CA, adds your countersignature with the client credential (WSAG_CERT / WSAG_KEY,',
    'a proxy from `wsag cert proxy` works) and sends it back. The server keeps the document',
    'with both signatures; `wsag audit export ID` on the server writes it for third parties.',
  ],
  optionHelp: [urlHelp, jsonHelp],
  options: { ...urlOption, ...jsonOption },
  positionals: ['ID'],
  async run(args, ctx) {
    const id = args.positionals[0] as string;
    const url = serverUrl(args, ctx.env);
    if (!url.startsWith('https:'))
      throw new UsageError(
        'countersign over HTTPS with your client certificate: --url https://HOST:PORT (or WSAG_URL)',
      );
    const tls = clientTls(ctx.env);
    // Loaded here: the X.509 and XML signature code is heavy, and `wsag --help` should not wait for it.
    const [{ TrustStore }, { countersign, verifyAgreementSignatures }] = await Promise.all([
      import('../../crypto/trust-store.js'),
      import('../../crypto/xml-signature.js'),
    ]);
    const { credential } = tls;
    const trust = TrustStore.fromPem(tls.ca, 'WSAG_CA');
    const client = ctx.client(url);
    const document = await client.agreementDocument(id);
    let provider: string;
    try {
      provider = verifyAgreementSignatures(document, {
        validateChain: (chain, at) => trust.validate(chain, at),
        at: new Date(),
      }).provider.identity;
    } catch (error) {
      throw new CliError(
        `agreement ${id} is not signed as it should be, so it is not countersigned: ` +
          `${error instanceof Error ? error.message : String(error)}`,
      );
    }
    const summary = await client.countersign(
      id,
      countersign(document, credential.privateKey, [credential.certificate, ...credential.chain]),
    );
    if (args.flag('json')) {
      printJson(ctx.out, { agreementId: id, provider, initiator: summary.initiator, state: summary.state });
      return;
    }
    ctx.out(`agreement ${id}: countersigned by ${summary.initiator}; signed by the provider ${provider}`);
  },
};
