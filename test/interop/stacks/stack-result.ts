/** What one SOAP stack saw in the interop scenario (each stack's script prints or returns this). */
export interface CounterOfferSummary {
  offerId: string;
  state: string | null;
  expirationTime: string | null;
  price: { amount: number; currency: string } | null;
}

export interface StackResult {
  stack: string;
  error?: string;
  loaded?: string[];
  warnings?: string[];
  templates?: string[];
  created?: { address: string; state: string };
  terminated?: string;
  advisory?: CounterOfferSummary[];
  solicited?: CounterOfferSummary;
  accepted?: { agreementId: string; state: string };
  fault?: { code: string } | null;
}
