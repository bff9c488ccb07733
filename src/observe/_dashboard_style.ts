/**
 * The dashboard's style sheet. Colours from the Okabe–Ito palette, which
 * people who cannot tell red from green can still tell apart; every colour
 * also comes with a label, a pattern or a position.
 *
 * @module
 */

/** The style sheet, served as `dashboard.css`. */
export const DASHBOARD_CSS = `:root {
  --in-use: #0072B2;
  --waiting: #E69F00;
  --limit: #000000;
  --nominal: #56B4E9;
  --rejected: #D55E00;
  --dispatched: #009E73;
  --muted: #5f6368;
  --line: #d0d4d9;
  --bg: #ffffff;
  --card: #f7f8fa;
  font-family: system-ui, -apple-system, "Segoe UI", Roboto, "DejaVu Sans", sans-serif;
  color: #1b1d21;
  background: var(--bg);
}
body { margin: 0 auto; padding: 0 1rem 2rem; max-width: 1280px; }
header { display: flex; align-items: baseline; gap: 1rem; flex-wrap: wrap; }
h1 { font-size: 1.4rem; margin: 1rem 0 0.25rem; }
h2 { font-size: 1.1rem; margin: 0; }
h3 { font-size: 0.85rem; margin: 0.75rem 0 0.25rem; color: var(--muted); font-weight: 600; }
#status { color: var(--muted); margin: 0; }
#status.stale { color: var(--rejected); font-weight: 600; }
#legend { display: flex; flex-wrap: wrap; gap: 0.5rem 1.25rem; font-size: 0.8rem; color: var(--muted); margin: 0.5rem 0 1rem; }
.key { display: inline-flex; align-items: center; gap: 0.35rem; }
.swatch { display: inline-block; width: 1rem; height: 0.7rem; border: 1px solid #0003; }
.swatch.in-use { background: var(--in-use); }
.swatch.waiting { background: repeating-linear-gradient(45deg, var(--waiting) 0 3px, #fff 3px 5px); }
.swatch.limit { background: none; border: 0; border-left: 3px solid var(--limit); }
.swatch.nominal { background: none; border: 0; border-left: 3px dashed var(--nominal); }
.swatch.rejected { background: var(--rejected); }
#levels { display: grid; grid-template-columns: repeat(auto-fill, minmax(min(380px, 100%), 1fr)); gap: 1rem; align-items: start; }
.level, .server { background: var(--card); border: 1px solid var(--line); border-radius: 6px; padding: 0.75rem 1rem; }
.level header, .server header { justify-content: space-between; }
/* The learned server limit's card, one column of the levels' grid wide (hidden for a static limit). */
#server { display: grid; grid-template-columns: repeat(auto-fill, minmax(min(380px, 100%), 1fr)); gap: 1rem; margin-bottom: 1rem; }
#server[hidden] { display: none; }
#summary { display: flex; flex-wrap: wrap; gap: 0.4rem; margin: 0.5rem 0 1rem; }
.chip { border: 1px solid var(--muted); border-radius: 0.4rem; padding: 0.15rem 0.5rem; font-size: 0.8rem; color: inherit; text-decoration: none; font-variant-numeric: tabular-nums; }
.chip.busy { border-color: var(--rejected); border-width: 2px; font-weight: 600; }
.collecting { height: 48px; margin: 0; display: flex; align-items: center; justify-content: center; color: var(--muted); font-size: 0.8rem; }
.tag { font-size: 0.75rem; color: var(--muted); }
.tag.full { color: var(--rejected); font-weight: 700; }
.bar { position: relative; height: 1.4rem; background: #fff; border: 1px solid var(--line); margin: 0.5rem 0.25rem 0.25rem 0; }
.bar .fill { position: absolute; top: 0; bottom: 0; left: 0; background: var(--in-use); }
.bar .queued { position: absolute; top: 0; bottom: 0; background: repeating-linear-gradient(45deg, var(--waiting) 0 4px, #fff 4px 7px); }
/* A mark is centred on its value, and stays visible at either end of the bar. */
.bar .mark { position: absolute; top: -3px; bottom: -3px; width: 0; margin-left: -1.5px; border-left: 3px solid var(--limit); }
.bar .mark.nominal { border-left: 3px dashed var(--nominal); }
.caption { font-size: 0.8rem; color: var(--muted); margin: 0; }
dl.numbers { display: grid; grid-template-columns: repeat(4, 1fr); gap: 0.25rem 0.75rem; margin: 0.5rem 0; }
dl.numbers div { display: flex; flex-direction: column; }
dl.numbers dt { font-size: 0.7rem; line-height: 1.2; color: var(--muted); order: 2; }
dl.numbers dd { margin: 0; font-size: 1rem; font-variant-numeric: tabular-nums; order: 1; }
dl.numbers dd.bad { color: var(--rejected); font-weight: 700; }
.strip { display: flex; gap: 1px; flex-wrap: wrap; }
.strip span { display: inline-block; min-width: 1.1rem; height: 1.1rem; font-size: 0.65rem; line-height: 1.1rem; text-align: center; border: 1px solid var(--line); font-variant-numeric: tabular-nums; }
/* Dark text on the light shades in both colour schemes. */
.strip span.w1 { background: #fdebc8; color: #1b1d21; }
.strip span.w2 { background: #f8cf7a; color: #1b1d21; }
.strip span.w3 { background: var(--waiting); color: #1b1d21; }
.strip span.w4 { background: #a66f00; color: #fff; }
.strip span.busy { border-bottom: 3px solid var(--in-use); }
table { border-collapse: collapse; width: 100%; font-size: 0.78rem; }
th, td { text-align: left; padding: 0.1rem 0.3rem; border-bottom: 1px solid var(--line); }
td.n, th.n { text-align: right; font-variant-numeric: tabular-nums; }
.empty { font-size: 0.78rem; color: var(--muted); margin: 0; }
.charts { display: grid; grid-template-columns: repeat(3, minmax(0, 1fr)); gap: 0.5rem; }
.charts.one { grid-template-columns: minmax(0, 1fr); }
/* A figure has wide default margins: without this the charts shrink to a sliver. */
.chart { margin: 0; min-width: 0; }
.chart figcaption { font-size: 0.7rem; line-height: 1.2; color: var(--muted); margin-top: 0.15rem; }
/* The chart's name, then one line per key, then its scale. */
.chart figcaption .key, .chart figcaption .top { display: block; white-space: nowrap; font-variant-numeric: tabular-nums; }
.chart figcaption .line { display: inline-block; width: 0.9rem; height: 0; border-top: 2px solid; vertical-align: middle; margin-right: 0.2rem; }
.chart .line.s-limit { border-color: var(--limit); }
.chart .line.s-in-use { border-color: var(--in-use); }
.chart .line.s-waiting { border-top-style: dashed; border-color: var(--waiting); }
.chart .line.s-dispatched { border-color: var(--dispatched); }
.chart .line.s-rejected { border-top-style: dotted; border-color: var(--rejected); }
.chart svg { width: 100%; height: 48px; background: #fff; border: 1px solid var(--line); }
/* The viewBox stretches to the figure's width: keep the strokes as thick as they are said to be. */
.chart path { vector-effect: non-scaling-stroke; }
.chart .s-limit { stroke: var(--limit); fill: none; stroke-width: 1.5; }
.chart .s-in-use { stroke: var(--in-use); fill: none; stroke-width: 1.5; }
.chart .s-waiting { stroke: var(--waiting); fill: none; stroke-width: 1.5; stroke-dasharray: 4 2; }
.chart .s-dispatched { stroke: var(--dispatched); fill: none; stroke-width: 1.5; }
.chart .s-rejected { stroke: var(--rejected); fill: none; stroke-width: 1.5; stroke-dasharray: 2 2; }
footer { margin-top: 1.5rem; font-size: 0.78rem; color: var(--muted); }
@media (prefers-color-scheme: dark) {
  :root { --bg: #15171a; --card: #1d2024; --line: #3a3f45; --limit: #f1f3f4; --muted: #a8adb3; color: #e8eaed; }
  .bar, .chart svg { background: #111; }
}
`;
