/** Capacity the provider has set aside for an agreement: `nodes` nodes over [start, end). */
export interface Allocation {
  start: Date;
  end: Date;
  nodes: number;
}
