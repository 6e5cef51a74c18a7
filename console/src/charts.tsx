// The console's charts: a line chart and a gauge, drawn as SVG with the numbers beside them in
// text (a chart is never the only way to read a figure). Small on purpose: the views need only
// these two, so no chart library is loaded (docs/decisions.md, "The console's stack").

export interface Series {
  label: string;
  points: Array<{ x: number; y: number }>;
  /** A class for the line's colour (`series-0`, `series-1`, …). */
  tone?: number;
}

const W = 480;
const H = 160;
const PAD = { left: 48, right: 12, top: 10, bottom: 24 };

function niceRange(values: number[]): [number, number] {
  if (values.length === 0) return [0, 1];
  let lo = Math.min(...values);
  let hi = Math.max(...values);
  if (lo === hi) {
    const spread = Math.abs(lo) * 0.05 || 1;
    lo -= spread;
    hi += spread;
  }
  return [lo, hi];
}

function tick(value: number): string {
  const abs = Math.abs(value);
  if (abs >= 1e6) return `${(value / 1e6).toFixed(1)}M`;
  if (abs >= 1e3) return `${(value / 1e3).toFixed(1)}k`;
  if (abs >= 1) return value.toFixed(2);
  return value.toPrecision(3);
}

/** Lines over a shared x axis; `xLabel` names each x for the axis (a day, a slice's number). */
export function LineChart(props: { title: string; series: Series[]; xLabel: (x: number) => string }) {
  const all = props.series.flatMap((s) => s.points);
  if (all.length === 0) return null;
  const [x0, x1] = niceRange(all.map((p) => p.x));
  const [y0, y1] = niceRange(all.map((p) => p.y));
  const sx = (x: number) => PAD.left + ((x - x0) / (x1 - x0)) * (W - PAD.left - PAD.right);
  const sy = (y: number) => H - PAD.bottom - ((y - y0) / (y1 - y0)) * (H - PAD.top - PAD.bottom);
  const xs = [...new Set(all.map((p) => p.x))].sort((a, b) => a - b);
  const shownXs = xs.length <= 8 ? xs : xs.filter((_, i) => i % Math.ceil(xs.length / 8) === 0);
  return (
    <figure class="chart">
      <svg viewBox={`0 0 ${W} ${H}`} role="img" aria-label={props.title}>
        <line class="axis" x1={PAD.left} y1={H - PAD.bottom} x2={W - PAD.right} y2={H - PAD.bottom} />
        <line class="axis" x1={PAD.left} y1={PAD.top} x2={PAD.left} y2={H - PAD.bottom} />
        <text class="tick" x={PAD.left - 4} y={PAD.top + 8} text-anchor="end">
          {tick(y1)}
        </text>
        <text class="tick" x={PAD.left - 4} y={H - PAD.bottom} text-anchor="end">
          {tick(y0)}
        </text>
        {shownXs.map((x) => (
          <text key={x} class="tick" x={sx(x)} y={H - 6} text-anchor="middle">
            {props.xLabel(x)}
          </text>
        ))}
        {props.series.map((s, i) => (
          <g key={s.label} class={`series-${s.tone ?? i}`}>
            <polyline fill="none" points={s.points.map((p) => `${sx(p.x)},${sy(p.y)}`).join(' ')} />
            {s.points.map((p) => (
              <circle key={p.x} cx={sx(p.x)} cy={sy(p.y)} r={2.5} />
            ))}
          </g>
        ))}
      </svg>
      <figcaption>
        {props.title}
        {props.series.length > 1
          ? props.series.map((s, i) => (
              <span key={s.label} class={`legend series-${s.tone ?? i}`}>
                {s.label}
              </span>
            ))
          : null}
      </figcaption>
    </figure>
  );
}

/** How much of a cap is used: a bar, and the figures in words. */
export function Gauge(props: { label: string; used: number; cap: number; text: string }) {
  const share = props.cap > 0 ? Math.min(1, Math.max(0, props.used / props.cap)) : 0;
  const tone = share >= 0.9 ? 'hot' : share >= 0.7 ? 'warm' : 'cool';
  return (
    <div class="gauge">
      <div class="gauge-label">
        <span>{props.label}</span>
        <span>{props.text}</span>
      </div>
      <svg
        viewBox="0 0 100 8"
        preserveAspectRatio="none"
        role="img"
        aria-label={`${props.label}: ${props.text}`}
      >
        <rect class="gauge-track" x="0" y="0" width="100" height="8" rx="2" />
        <rect class={`gauge-fill ${tone}`} x="0" y="0" width={(share * 100).toFixed(2)} height="8" rx="2" />
      </svg>
    </div>
  );
}
