// The SigningPool's worker when the server runs from its TypeScript sources (tests): loads
// signing-worker.ts through tsx. The compiled server uses dist/crypto/signing-worker.js.
import { register } from 'tsx/esm/api';

register();
const { default: sign } = await import('./signing-worker.ts');
export default sign;
