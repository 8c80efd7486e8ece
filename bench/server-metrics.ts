/**
 * Where a request's time went, from the servers' own histograms (GET /metrics, docs/operations.md):
 * the sums and counts of the stage histograms, scraped before and after a run, give each
 * stage's mean over the run.
 */

/** Per histogram series (name and labels as written): its sum in seconds and its count. */
export type HistogramTotals = Map<string, { sum: number; count: number }>;

const stages: Array<{ series: RegExp; label: (m: RegExpExecArray) => string }> = [
  {
    series: /^wsag_soap_request_duration_seconds_(sum|count)\{port="[^"]*",operation="([^"]*)"\}/,
    label: (m) => `the whole request: ${m[2]}`,
  },
  {
    series: /^wsag_soap_request_start_wait_seconds_(sum|count)\{port="([^"]*)"\}/,
    label: (m) => `waiting to start: ${m[2]}`,
  },
  {
    series: /^wsag_document_work_seconds_(sum|count)\{work="([^"]*)",on="([^"]*)"\}/,
    label: (m) => `${m[2]} on the ${m[3] === 'thread' ? 'document thread (its queue included)' : 'event loop'}`,
  },
  {
    series: /^wsag_store_write_seconds_(sum|count)\{operation="([^"]*)"\}/,
    label: (m) => `storing an agreement (${m[2]}, the log's sync included)`,
  },
];

/** The stage histograms of the servers at `urls`, added up. */
export async function scrapeStages(urls: string[]): Promise<HistogramTotals> {
  const totals: HistogramTotals = new Map();
  for (const url of urls) {
    const text = await (await fetch(`${url}/metrics`)).text();
    for (const line of text.split('\n')) {
      for (const { series, label } of stages) {
        const m = series.exec(line);
        if (!m) continue;
        const name = label(m);
        const entry = totals.get(name) ?? { sum: 0, count: 0 };
        entry[m[1] as 'sum' | 'count'] += Number(line.slice(line.lastIndexOf(' ') + 1));
        totals.set(name, entry);
      }
    }
  }
  return totals;
}

/** A markdown table of each stage's mean over what happened between the two scrapes. */
export function stagesTable(before: HistogramTotals, after: HistogramTotals): string[] {
  const rows = [...after].flatMap(([label, { sum, count }]) => {
    const n = count - (before.get(label)?.count ?? 0);
    return n > 0 ? [`| ${label} | ${((1000 * (sum - (before.get(label)?.sum ?? 0))) / n).toFixed(1)} | ${n} |`] : [];
  });
  return ["| stage (the server's histograms) | mean ms | times |", '|---|---|---|', ...rows];
}
