// The schedule as a Gantt chart (SVG): nodes against time, one bar per booked piece,
// coloured by guarantee level; holds dashed with their expiry; planned checkpoints as ticks;
// restart pieces (after a suspension or failure) hatched; failed nodes shaded; the nodes'
// preparation before a piece's work and their release after it dotted, in a paler shade.

export const levelColours = {
  Background: '#b7c4cf', Legacy: '#8fb8e8', Standard: '#6cc08b', Enhanced: '#e8b04f', Full: '#d9739b',
};
const holdColour = '#ffffff';
/** Another party's booking, shown to a user without its owner or terms. */
export const busyColour = '#d5d9de';
const svgNs = 'http://www.w3.org/2000/svg';

function el(name, attrs = {}, text) {
  const node = document.createElementNS(svgNs, name);
  for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, String(v));
  if (text !== undefined) node.textContent = text;
  return node;
}

/**
 * Draws `plan` (GET /api/plan) over `nodes` (GET /api/nodes) for [from, to) (ms). `holds`
 * maps an offer id to its expiry (from /api/negotiations). Returns the SVG element.
 */
export function gantt({ plan, nodes, holds, from, to, now, width = 1100, open }) {
  const rowHeight = 18;
  const labelWidth = 70;
  const top = 24;
  const height = top + nodes.length * rowHeight + 4;
  const x = (t) => labelWidth + ((t - from) / (to - from)) * (width - labelWidth);
  const rowOf = new Map(nodes.map((n, i) => [n.id, i]));
  const svg = el('svg', { width, height, role: 'img', 'aria-label': 'schedule' });
  const defs = el('defs');
  const hatch = el('pattern', { id: 'restart', width: 6, height: 6, patternUnits: 'userSpaceOnUse', patternTransform: 'rotate(45)' });
  hatch.append(el('rect', { width: 6, height: 6, fill: '#0000' }), el('line', { x1: 0, y1: 0, x2: 0, y2: 6, stroke: '#0005', 'stroke-width': 2 }));
  const dots = el('pattern', { id: 'preparation', width: 4, height: 4, patternUnits: 'userSpaceOnUse' });
  dots.append(el('rect', { width: 4, height: 4, fill: '#fffa' }), el('circle', { cx: 2, cy: 2, r: 0.9, fill: '#0007' }));
  defs.append(hatch, dots);
  svg.append(defs);

  // Rows: failed nodes shaded, a label per node.
  nodes.forEach((n, i) => {
    const y = top + i * rowHeight;
    if (n.failed) svg.append(el('rect', { x: labelWidth, y, width: width - labelWidth, height: rowHeight, class: 'failed-row', 'data-failed-node': n.id }));
    svg.append(el('text', { x: 4, y: y + 13, 'data-node': n.id }, `${n.id}${n.failed ? ' ✕' : ''}${n.buffer ? ' (buffer)' : ''}`));
    svg.append(el('line', { x1: labelWidth, x2: width, y1: y + rowHeight, y2: y + rowHeight, class: 'grid' }));
  });
  // Time axis: a tick per step.
  const span = to - from;
  const step = [3600e3, 3 * 3600e3, 6 * 3600e3, 24 * 3600e3, 7 * 24 * 3600e3].find((s) => span / s <= 12) ?? 7 * 24 * 3600e3;
  for (let t = Math.ceil(from / step) * step; t < to; t += step) {
    svg.append(el('line', { x1: x(t), x2: x(t), y1: top - 4, y2: height, class: 'grid' }));
    const d = new Date(t);
    const label = step >= 24 * 3600e3 ? d.toISOString().slice(5, 10) : d.toISOString().slice(11, 16);
    svg.append(el('text', { x: x(t) + 2, y: 14 }, label));
  }
  // Bookings: one bar per node of each piece; their labels go on top of everything, checkpoint ticks included.
  const labels = [];
  for (const booking of plan.bookings) {
    const colour = booking.kind === 'hold' ? holdColour : booking.kind === 'busy' ? busyColour : levelColours[booking.level] ?? '#999';
    const expiry = booking.kind === 'hold' ? holds.get(booking.id) : undefined;
    for (const [p, piece] of booking.segments.entries()) {
      const start = Date.parse(piece.start);
      const end = Date.parse(piece.end);
      if (end <= from || start >= to) continue;
      const bx = x(Math.max(start, from));
      const bw = Math.max(2, x(Math.min(end, to)) - bx);
      for (const nodeId of [...piece.nodeIds, ...piece.spareNodeIds]) {
        const row = rowOf.get(nodeId);
        if (row === undefined) continue;
        const y = top + row * rowHeight + 2;
        const spare = piece.spareNodeIds.includes(nodeId);
        const bar = el('rect', {
          x: bx, y, width: bw, height: rowHeight - 4, rx: 2, fill: colour, stroke: booking.problem ? '#d9534f' : '#0006',
          'stroke-dasharray': booking.kind === 'hold' || spare ? '4 2' : 'none', 'fill-opacity': spare ? 0.35 : 1,
          'data-booking': booking.id, 'data-node': nodeId, 'data-piece': p,
        });
        const what = booking.kind === 'busy' ? 'booked by another party' : `${booking.kind === 'hold' ? 'hold' : 'agreement'} ${booking.id}`;
        const title = what + (booking.level ? ` (${booking.level}${booking.jobKind ? `, ${booking.jobKind}` : ''})` : '') +
          `\n${piece.start} to ${piece.end}${spare ? '\nspare node' : ''}${piece.restart ? '\nrestart from a checkpoint' : ''}` +
          (expiry ? `\nheld until ${expiry}` : '') + (booking.problem ? `\nproblem: ${booking.problem}` : '');
        bar.append(el('title', {}, title));
        // An agreement's bar opens the agreement.
        if (booking.kind === 'agreement' && open) {
          bar.setAttribute('class', 'clickable');
          bar.addEventListener('click', () => open(booking.id));
        }
        svg.append(bar);
        // A label on the piece's first node, where it fits: the short id and the level.
        const label = [`${booking.id.slice(0, 8)}${booking.level ? ` ${booking.level}` : ''}`, booking.id.slice(0, 8)].find((l) => l.length * 6 + 6 <= bw);
        if (booking.kind !== 'busy' && nodeId === piece.nodeIds[0] && label) {
          labels.push(el('text', { x: bx + 3, y: y + 11, class: 'bar-label', 'pointer-events': 'none', 'data-label': booking.id }, label));
        }
        if (piece.restart) svg.append(el('rect', { x: bx, y, width: bw, height: rowHeight - 4, fill: 'url(#restart)', 'pointer-events': 'none' }));
        // The nodes' preparation (before readyAt) and release (after releaseFrom): booked, but not the job's own time.
        for (const [kind, a, b] of [['preparation', start, piece.readyAt ? Date.parse(piece.readyAt) : start], ['release', piece.releaseFrom ? Date.parse(piece.releaseFrom) : end, end]]) {
          const [pa, pb] = [Math.max(a, from), Math.min(b, to)];
          if (pb <= pa) continue;
          svg.append(el('rect', { x: x(pa), y, width: Math.max(1, x(pb) - x(pa)), height: rowHeight - 4, fill: 'url(#preparation)', 'pointer-events': 'none', 'data-phase': kind, 'data-phase-of': booking.id }));
        }
      }
      // Planned checkpoints: a tick every interval on the piece's first node.
      if (booking.checkpointIntervalSeconds && piece.nodeIds.length > 0) {
        const row = rowOf.get(piece.nodeIds[0]);
        for (let t = start + booking.checkpointIntervalSeconds * 1000; t < end && row !== undefined; t += booking.checkpointIntervalSeconds * 1000) {
          if (t > from && t < to) svg.append(el('line', { x1: x(t), x2: x(t), y1: top + row * rowHeight + 2, y2: top + row * rowHeight + rowHeight - 2, stroke: '#1d2530', 'stroke-width': 1, 'data-checkpoint': booking.id }));
        }
      }
      if (expiry && Date.parse(expiry) > from && Date.parse(expiry) < to) {
        const row = rowOf.get(piece.nodeIds[0]);
        if (row !== undefined) svg.append(el('text', { x: bx + 2, y: top + row * rowHeight + 13 }, `held until ${expiry.slice(11, 19)}`));
      }
    }
  }
  svg.append(...labels);
  if (now > from && now < to) svg.append(el('line', { x1: x(now), x2: x(now), y1: top - 6, y2: height, class: 'now' }));
  return svg;
}
