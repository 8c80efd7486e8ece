/**
 * SOAP requests this process has begun and not yet answered. One count per process, as
 * there is one event loop: the document threads hand work over only while the loop has
 * other requests to get on with (src/workers/document-threads.ts).
 */
export const requestsInProgress = {
  count: 0,
  /** More than the asking request. */
  others(): boolean {
    return this.count > 1;
  },
};
