/** The names the demo PKI's server certificate is for (its subjectAltName). */
export const demoServerAltNames = ['localhost', '127.0.0.1', '::1'];
