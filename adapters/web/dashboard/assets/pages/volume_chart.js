// @ts-check
// The overview's chart: daily gross volume per currency over the last 90 days, from
// GET /api/v1/{env}/overview/daily_volume. A bar chart drawn as SVG by this module (no chart
// library: 90 bars need no scales, zoom or canvas, and SVG takes its colours from the design
// tokens through app.css, scales with the page and prints), with its text alternative: a
// summary sentence that labels the chart, and every day with payments in a table one click
// away. Days are UTC days of the environment's clock (the test clock in test mode).
import { get } from '../api.js';
import { money } from '../format.js';
import { html, render } from '../preact.js';
import { errorText } from '../ui.js';

const width = 900;
const height = 160;

const dayFormat = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeZone: 'UTC' });
/** @param {string} date YYYY-MM-DD, a UTC day */
const dayText = (date) => dayFormat.format(new Date(`${date}T00:00:00Z`));

/** @param {number} n */
const paymentsText = (n) => (n === 1 ? '1 payment' : `${n} payments`);

/**
 * Chart is one currency's bars with its summary and table.
 * @param {{ series: import('../types').Schemas['DailyVolumeCurrency'], days: number }} props
 */
function Chart({ series, days }) {
  const cur = series.currency;
  const max = Math.max(0, ...series.days.map((d) => d.amount));
  const best = series.days.reduce((a, d) => (d.amount > a.amount ? d : a), series.days[0]);
  const slot = width / series.days.length;
  const captionID = `volume-caption-${cur}`;
  const withPayments = series.days.filter((d) => d.count > 0);
  return html`<figure class="volume-chart" data-currency=${cur}>
    <figcaption id=${captionID}>
      <strong>${cur}</strong>: ${money(series.amount, cur)} in ${paymentsText(series.count)} over ${days} days${max > 0 ? `; highest day ${dayText(best.date)} with ${money(best.amount, cur)}` : ''}.
    </figcaption>
    <div class="chart-frame">
      <div class="chart-y" aria-hidden="true"><span>${money(max, cur)}</span><span>${money(0, cur)}</span></div>
      <svg class="chart-svg" role="img" aria-labelledby=${captionID} viewBox=${`0 0 ${width} ${height}`} preserveAspectRatio="none">
        <line class="chart-grid" x1="0" y1="0.5" x2=${width} y2="0.5" vector-effect="non-scaling-stroke" />
        ${series.days.map((d, i) => {
          if (!d.amount || !max) return null;
          const h = Math.max(1, (d.amount / max) * (height - 2));
          return html`<rect class="chart-bar" x=${i * slot + slot * 0.15} y=${height - h} width=${slot * 0.7} height=${h}>
            <title>${dayText(d.date)}: ${money(d.amount, cur)} (${paymentsText(d.count)})</title>
          </rect>`;
        })}
        <line class="chart-axis" x1="0" y1=${height - 0.5} x2=${width} y2=${height - 0.5} vector-effect="non-scaling-stroke" />
      </svg>
    </div>
    <div class="chart-x" aria-hidden="true"><span>${dayText(series.days[0].date)}</span><span>${dayText(series.days[series.days.length - 1].date)}</span></div>
    <details class="chart-table">
      <summary>The days with payments in ${cur} as a table</summary>
      ${withPayments.length ? html`<div class="table-wrap"><table>
        <caption class="visually-hidden">Daily volume in ${cur}, days with payments</caption>
        <thead><tr><th scope="col">Day (UTC)</th><th scope="col" class="num">Payments</th><th scope="col" class="num">Volume</th></tr></thead>
        <tbody>${withPayments.map((d) => html`<tr><td>${dayText(d.date)}</td><td class="num">${d.count}</td><td class="num">${money(d.amount, cur)}</td></tr>`)}</tbody>
      </table></div>` : html`<p class="empty">No payments in ${cur} in this range.</p>`}
    </details>
  </figure>`;
}

/**
 * VolumeCharts is the overview's section: one chart per currency, or a line saying there is
 * nothing to chart yet.
 * @param {{ volume: import('../types').Schemas['DailyVolume'] }} props
 */
export function VolumeCharts({ volume }) {
  const clock = volume.environment === 'test' ? 'the test clock' : 'real time';
  return html`<section class="panel" aria-labelledby="volume-title" id="daily-volume">
    <h2 id="volume-title">Daily volume, last ${volume.days} days</h2>
    <p class="hint">Succeeded payments by the UTC day they were made, ${dayText(volume.start_date)} to ${dayText(volume.end_date)} by ${clock}; refunds are not deducted.</p>
    ${volume.currencies.length
      ? volume.currencies.map((c) => html`<${Chart} key=${c.currency} series=${c} days=${volume.days} />`)
      : html`<p class="empty">No payments in the last ${volume.days} days.</p>`}
  </section>`;
}

/**
 * volumeSection reads the daily volume of ctx's environment and renders its charts into a new
 * element for a dom.js page.
 * @param {import('../types').Ctx} ctx
 * @returns {Promise<HTMLElement>}
 */
export async function volumeSection(ctx) {
  const el = document.createElement('div');
  try {
    const volume = await get(`${ctx.base}/overview/daily_volume`);
    render(html`<${VolumeCharts} volume=${volume} />`, el);
  } catch (err) {
    // The figures above still stand; only the chart is missing.
    render(html`<p class="notice notice-error" role="alert" id="daily-volume">The daily volume could not be loaded: ${errorText(err)}</p>`, el);
  }
  return el;
}
