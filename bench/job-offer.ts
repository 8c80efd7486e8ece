import type { WsagClient } from '../src/client/wsag-client.js';
import { offerFromTemplate } from '../src/xml/offer-from-template.js';

/** The offer the benchmarks make: a one-node deadline job from the server's own template, as a broker places a workflow's tasks. */
export async function oneNodeJobOffer(client: WsagClient): Promise<string> {
  const template = (await client.templates()).find((t) => t.includes('deadline-job-v1')) as string;
  return offerFromTemplate(template, [{ location: 'NodeCount', value: '1' }]);
}
