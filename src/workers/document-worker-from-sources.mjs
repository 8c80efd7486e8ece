// The DocumentThreads worker when the server runs from its TypeScript sources (tests): loads
// document-worker.ts through tsx. The compiled server uses dist/workers/document-worker.js.
import { register } from 'tsx/esm/api';

register();
const { sign, readAgreementOffer, readNegotiationOffers } = await import('./document-worker.ts');
export { sign, readAgreementOffer, readNegotiationOffers };
