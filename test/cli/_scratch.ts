import { startTestServer } from '../support/server.js';
import { WsagClient } from '../../src/client/wsag-client.js';
import { offerFromTemplate } from '../../src/xml/offer-from-template.js';
const s = await startTestServer();
const c = new WsagClient(s.url);
const t = await c.templates();
console.log(t.length, t[0]!.slice(0, 300));
const dj = t.find(x => x.includes('deadline-job-v1'))!;
try { await c.createAgreement(offerFromTemplate(dj, [{location:'NodeCount', value:'512'}])); } catch (e) { console.log(String(e)); }
const r = await c.createAgreement(offerFromTemplate(dj));
console.log(r);
console.log(await c.state(r.agreementId));
console.log(await c.agreements());
await c.terminate(r.agreementId);
console.log(await c.state(r.agreementId));
try { await c.terminate(r.agreementId); } catch (e) { console.log(String(e)); }
try { await c.state('nope'); } catch (e) { console.log(String(e)); }
await s.close();
try { await c.templates(); } catch (e) { console.log(String(e)); }
try { await c.agreements(); } catch (e) { console.log(String(e), (e as Error).cause); }
